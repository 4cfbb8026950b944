/*
 * cfb_build.h - a compound file written in memory for the tests and the
 * fuzzers: one stream (its name given, e.g. "Workbook") in a version 3
 * file of 512-byte sectors: the header, one FAT sector, one directory
 * sector (the root and the stream), then the stream's sectors. A stream
 * under 4,096 bytes is padded to that size, so that it is a regular
 * stream, not one in the mini stream. At most CFB_BUILD_MAX_STREAM bytes
 * (one FAT sector's 128 entries).
 */
#ifndef DQ_CFB_BUILD_H
#define DQ_CFB_BUILD_H

#include <stdint.h>
#include <string.h>

#define CFB_BUILD_MAX_STREAM (126 * 512)

static inline void cfb_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* Writes the file into out (cap bytes); its size, or 0 when the stream
 * is too long or out too small. */
static inline size_t cfb_build(const char *name, const unsigned char *s,
                               size_t n, unsigned char *out, size_t cap) {
  size_t len = n < 4096 ? 4096 : (n + 511) / 512 * 512;
  size_t secs = len / 512, total = 512 * (3 + secs);
  if (len > CFB_BUILD_MAX_STREAM || total > cap || strlen(name) > 31)
    return 0;
  memset(out, 0, total);
  static const unsigned char sig[8] = {0xD0, 0xCF, 0x11, 0xE0,
                                       0xA1, 0xB1, 0x1A, 0xE1};
  memcpy(out, sig, 8);
  out[24] = 0x3E; /* minor version */
  out[26] = 3;    /* major version 3 */
  out[28] = 0xFE; /* byte order */
  out[29] = 0xFF;
  out[30] = 9; /* 512-byte sectors */
  out[32] = 6; /* 64-byte mini sectors */
  cfb_le32(out + 44, 1);           /* one FAT sector */
  cfb_le32(out + 48, 1);           /* the directory at sector 1 */
  cfb_le32(out + 56, 4096);        /* mini stream cutoff */
  cfb_le32(out + 60, 0xFFFFFFFEu); /* no mini FAT */
  cfb_le32(out + 68, 0xFFFFFFFEu); /* no DIFAT sectors */
  cfb_le32(out + 76, 0);           /* DIFAT[0]: the FAT at sector 0 */
  for (int i = 1; i < 109; i++)
    cfb_le32(out + 76 + 4 * i, 0xFFFFFFFFu);
  unsigned char *fat = out + 512;
  cfb_le32(fat, 0xFFFFFFFDu);     /* sector 0: the FAT */
  cfb_le32(fat + 4, 0xFFFFFFFEu); /* sector 1: the directory */
  for (size_t i = 0; i < 128 - 2; i++)
    cfb_le32(fat + 8 + 4 * i, i + 1 < secs   ? (uint32_t)(3 + i)
                              : i + 1 == secs ? 0xFFFFFFFEu
                                              : 0xFFFFFFFFu);
  unsigned char *dir = out + 1024;
  const char *names[2] = {"Root Entry", name};
  for (int e = 0; e < 4; e++) {
    unsigned char *d = dir + 128 * e;
    memset(d + 68, 0xFF, 12); /* no siblings, no child */
    if (e > 1)
      continue;
    size_t nl = strlen(names[e]);
    for (size_t i = 0; i < nl; i++)
      d[2 * i] = (unsigned char)names[e][i];
    d[64] = (unsigned char)(2 * nl + 2);
    d[66] = e == 0 ? 5 : 2; /* the root storage, a stream */
    d[67] = 1;              /* black */
    if (e == 0)
      cfb_le32(d + 76, 1); /* its child: the stream */
    cfb_le32(d + 116, e == 0 ? 0xFFFFFFFEu : 2);
    cfb_le32(d + 120, e == 0 ? 0 : (uint32_t)len);
  }
  memcpy(out + 1536, s, n);
  return total;
}

#endif
