/*
 * sha256.c - SHA-256 (FIPS 180-4) of buffers and files, used to tell whether
 * a file changed since it was ingested. Not a general crypto library: one
 * streaming context, private to this file, and hex formatting.
 *
 * Layout of the computation: the message is padded with 0x80, zeros, and its
 * bit length as a 64-bit big-endian number so the total is a multiple of 64
 * bytes; each 64-byte block updates eight 32-bit words through 64 rounds.
 */
#include "ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sha256_ctx {
  uint32_t h[8];
  uint64_t n_bytes; /* total fed so far */
  uint8_t block[64];
  size_t n_block; /* bytes waiting in block, < 64 */
} sha256_ctx;

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t ror(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

static void compress(sha256_ctx *c, const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
           (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
  uint32_t e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t S1 = ror(e, 6) ^ ror(e, 11) ^ ror(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + S1 + ch + K[i] + w[i];
    uint32_t S0 = ror(a, 2) ^ ror(a, 13) ^ ror(a, 22);
    uint32_t maj = (a & b) ^ (a & cc) ^ (b & cc);
    uint32_t t2 = S0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = cc;
    cc = b;
    b = a;
    a = t1 + t2;
  }
  c->h[0] += a;
  c->h[1] += b;
  c->h[2] += cc;
  c->h[3] += d;
  c->h[4] += e;
  c->h[5] += f;
  c->h[6] += g;
  c->h[7] += h;
}

static void sha_init(sha256_ctx *c) {
  static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                 0xa54ff53a, 0x510e527f, 0x9b05688c,
                                 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, H0, sizeof H0);
  c->n_bytes = 0;
  c->n_block = 0;
}

static void sha_update(sha256_ctx *c, const uint8_t *p, size_t n) {
  c->n_bytes += n;
  if (c->n_block) {
    size_t take = 64 - c->n_block < n ? 64 - c->n_block : n;
    memcpy(c->block + c->n_block, p, take);
    c->n_block += take;
    p += take;
    n -= take;
    if (c->n_block < 64)
      return;
    compress(c, c->block);
    c->n_block = 0;
  }
  for (; n >= 64; p += 64, n -= 64)
    compress(c, p);
  memcpy(c->block, p, n);
  c->n_block = n;
}

static void sha_final(sha256_ctx *c, uint8_t out[32]) {
  uint64_t bits = c->n_bytes * 8;
  c->block[c->n_block++] = 0x80;
  if (c->n_block > 56) {
    memset(c->block + c->n_block, 0, 64 - c->n_block);
    compress(c, c->block);
    c->n_block = 0;
  }
  memset(c->block + c->n_block, 0, 56 - c->n_block);
  for (int i = 0; i < 8; i++)
    c->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  compress(c, c->block);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(c->h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
    out[4 * i + 3] = (uint8_t)c->h[i];
  }
}

void dq_sha256(const void *data, size_t n_bytes, uint8_t out[32]) {
  sha256_ctx c;
  sha_init(&c);
  sha_update(&c, data, n_bytes);
  sha_final(&c, out);
}

void dq_sha256_hex(const uint8_t digest[32], char hex[65]) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    hex[2 * i] = digits[digest[i] >> 4];
    hex[2 * i + 1] = digits[digest[i] & 15];
  }
  hex[64] = '\0';
}

dq_status dq_sha256_file(const char *path, uint8_t out[32], dq_error *err) {
  /* O_NONBLOCK so a fifo cannot hang us; it is refused below anyway. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return dq_error_set(err, errno == ENOENT ? DQ_ERR_NOTFOUND : DQ_ERR_IO,
                        "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return dq_error_set(err, DQ_ERR_IO, "%s: not a regular file", path);
  }
  sha256_ctx c;
  sha_init(&c);
  uint8_t *buf = malloc(1 << 16);
  if (!buf) {
    close(fd);
    return dq_error_set(err, DQ_ERR_NOMEM, "%s: out of memory", path);
  }
  for (;;) {
    ssize_t r = read(fd, buf, 1 << 16);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      free(buf);
      close(fd);
      return dq_error_set(err, DQ_ERR_IO, "%s: read error: %s", path,
                          strerror(e));
    }
    if (r == 0)
      break;
    sha_update(&c, buf, (size_t)r);
  }
  free(buf);
  close(fd);
  sha_final(&c, out);
  return DQ_OK;
}
