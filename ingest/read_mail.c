/*
 * read_mail.c - e-mail reader: one message (.eml, RFC 5322 with MIME) or a
 * mailbox of them (.mbox, messages after "From " lines), as people export
 * them from a mail client for a matter or a project.
 *
 * A message reads as its header lines, then its body:
 *   Subject: Deposit for Unit 4      <- a heading (the subject, level 1)
 *   From: Alice Smith <alice@x.com>
 *   To: ...  Cc: ...  Date: ...
 *   the body's text
 *   [attachment: lease.pdf (application/pdf)]
 * Headers are unfolded and their RFC 2047 encoded words decoded
 * (=?UTF-8?B?...?=, =?iso-8859-1?Q?...?=). MIME (RFC 2045-2046): a part's
 * Content-Transfer-Encoding (base64, quoted-printable; 7bit, 8bit and
 * binary as they are) is undone and its charset converted to UTF-8
 * (iconv; an unknown charset's bytes pass, invalid ones become U+FFFD).
 * multipart/alternative reads its text/plain part (text/html when there is
 * none), other multiparts every part in order; text/html is read by
 * read_xml.c's HTML reader; message/rfc822 (a forwarded message) is a
 * message one heading level down; other parts, and any part with a file
 * name that is not text, are named on an "[attachment: ...]" line, and
 * one that is a document docqa reads (a PDF, a DOCX, ...: dq_read_buffer
 * by its name and first bytes) follows as its text, the attachment a
 * heading one level below its message, the document's headings below.
 *
 * In a mailbox, a reply's quote of a message the file already holds is
 * folded to one line, "[quoted: 12 lines of an earlier message]": a
 * thread of ten messages would otherwise hold its first message ten
 * times, and search would fill its results with the copies. A quote is a
 * run of three or more lines beginning with '>' (nested "> >" too), or
 * what follows an Outlook "-----Original Message-----" line (or a line of
 * underscores before "From:") and its From/Sent/To/Subject lines, which
 * stay, to the end of the text; it is folded when
 * four in five of its lines, compared without their '>'s and blanks, are
 * lines of the messages before it. A quote of a message that is not in
 * the file, a short quote a reply answers line by line, and any .eml
 * alone are kept as they are.
 *
 * Marks carry page 0 and `line` = the 1-based line of the extracted text,
 * as an EPUB's do: a base64 or HTML body has no source lines to point at.
 *
 * Limits: MIME nesting MAIL_MAX_DEPTH deep, MAIL_MAX_PARTS parts per
 * message (each of a mailbox's messages has its own: a mailbox holds any
 * number); past them the rest of a message is left out with a warning line.
 */
#include "ingest_int.h"

#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAIL_MAX_DEPTH 8
#define MAIL_MAX_PARTS 10000
#define MAIL_PROGRESS_BYTES (16u << 20) /* a larger mailbox shows progress */
#define MAIL_PROGRESS_STEP (1u << 20)   /* each MiB */
#define HEADER_MAX 4096 /* bytes kept of one header's value */
#define PARAM_MAX 256   /* of a parameter (boundary, charset, name) */

typedef struct mail {
  const dq_reader_ctx *c;
  dq_tbuf *b;
  dq_html_part lines; /* the text's lines counted so far */
  size_t n_parts;
  int mbox;        /* a mailbox: a body's ">From " lines were "From " */
  size_t att_line; /* the last "[attachment: ...]" line */
  char att_name[PARAM_MAX * 2]; /* its name, decoded */
  /* the lines of the messages read so far, hashed (line_hash), an open
   * addressing set; 0 is an empty slot */
  uint64_t *seen;
  size_t n_seen, cap_seen;
} mail;

/* The line of the extracted text where the next byte goes. */
static uint32_t text_line(mail *m) { return dq_text_line(&m->lines, m->b); }

/* UTF-8 text (checked) on lines of its own. */
static void put_lines(mail *m, const char *s, size_t n) {
  dq_tbuf_newline(m->b);
  dq_tbuf_pos(m->b, text_line(m), 0);
  dq_tbuf_put_lines(m->b, s, n);
  dq_tbuf_newline(m->b);
}

/* ---- quotes of earlier messages ---- */

#define QUOTE_MIN_LINES 3 /* a shorter quote is kept: it is context */

/* The hash of line s[0..n) without its leading '>'s and blanks, blank
 * runs folded, trailing blanks dropped; 0 for a line with no text. */
static uint64_t line_hash(const char *s, size_t n) {
  size_t i = 0;
  while (i < n && (s[i] == '>' || s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
    i++;
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  int blank = 0, any = 0;
  for (; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      blank = 1;
      continue;
    }
    if (blank && any)
      h = (h ^ ' ') * 1099511628211ull;
    blank = 0;
    any = 1;
    h = (h ^ ch) * 1099511628211ull;
  }
  return any ? (h ? h : 1) : 0;
}

static int seen_has(const mail *m, uint64_t h) {
  if (!m->cap_seen || !h)
    return 0;
  for (size_t i = h & (m->cap_seen - 1);; i = (i + 1) & (m->cap_seen - 1)) {
    if (m->seen[i] == h)
      return 1;
    if (!m->seen[i])
      return 0;
  }
}

/* Adds h to the set; 0 when out of memory. */
static int seen_add(mail *m, uint64_t h) {
  if (!h || seen_has(m, h))
    return 1;
  if ((m->n_seen + 1) * 2 > m->cap_seen) { /* at most half full */
    size_t cap = m->cap_seen ? m->cap_seen * 2 : 1024;
    uint64_t *t = calloc(cap, sizeof *t);
    if (!t)
      return 0;
    for (size_t k = 0; k < m->cap_seen; k++)
      for (size_t i = m->seen[k] & (cap - 1); m->seen[k];
           i = (i + 1) & (cap - 1))
        if (!t[i]) {
          t[i] = m->seen[k];
          break;
        }
    free(m->seen);
    m->seen = t;
    m->cap_seen = cap;
  }
  size_t i = h & (m->cap_seen - 1);
  while (m->seen[i])
    i = (i + 1) & (m->cap_seen - 1);
  m->seen[i] = h;
  m->n_seen++;
  return 1;
}

static int quoted(const char *s, size_t n) {
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t'))
    i++;
  return i < n && s[i] == '>';
}

/* An Outlook reply's separator: "-----Original Message-----", or a line
 * of underscores when the next line starts "From:". */
static int original_line(const char *s, size_t n, const char *next,
                         size_t next_n) {
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\r'))
    n--;
  size_t u = 0;
  while (u < n && s[u] == '_')
    u++;
  if (u == n && n >= 10)
    return dq_starts_ci(next, next_n, "From:");
  static const char O[] = "-----Original Message-----";
  return n == sizeof O - 1 && dq_starts_ci(s, n, O);
}

/* Lines [from, to) of text (ends[] their end offsets, starts[] their
 * starts): whether four in five of their text lines are in the set. */
static int quote_known(const mail *m, const char *text, const size_t *starts,
                       const size_t *ends, size_t from, size_t to,
                       size_t *n_text) {
  size_t known = 0;
  *n_text = 0;
  for (size_t k = from; k < to; k++) {
    uint64_t h = line_hash(text + starts[k], ends[k] - starts[k]);
    if (!h)
      continue;
    ++*n_text;
    known += seen_has(m, h);
  }
  return *n_text >= QUOTE_MIN_LINES && known * 5 >= *n_text * 4;
}

/* A text body with its quotes of earlier messages folded (into *out,
 * malloc'd), and its lines added to the set for the messages after.
 * Returns 0 when out of memory. */
static int fold_quotes(mail *m, const char *text, size_t n, dq_strbuf *out) {
  size_t n_lines = 0;
  for (size_t i = 0; i < n; i++)
    n_lines += text[i] == '\n';
  n_lines += n && text[n - 1] != '\n';
  size_t *starts = malloc((n_lines + 1) * sizeof *starts);
  size_t *ends = malloc((n_lines + 1) * sizeof *ends);
  if (!starts || !ends) {
    free(starts);
    free(ends);
    return 0;
  }
  size_t k = 0;
  for (size_t i = 0; i < n && k < n_lines;) {
    const char *nl = memchr(text + i, '\n', n - i);
    starts[k] = i;
    ends[k++] = nl ? (size_t)(nl - text) : n;
    i = nl ? (size_t)(nl - text) + 1 : n;
  }
  n_lines = k;
  for (size_t a = 0; a < n_lines;) {
    size_t b = a, n_text = 0;
    int outlook = 0;
    if (quoted(text + starts[a], ends[a] - starts[a])) {
      while (b < n_lines && quoted(text + starts[b], ends[b] - starts[b]))
        b++;
    } else if (original_line(text + starts[a], ends[a] - starts[a],
                             a + 1 < n_lines ? text + starts[a + 1] : "",
                             a + 1 < n_lines ? ends[a + 1] - starts[a + 1]
                                             : 0)) {
      b = n_lines;
      /* the separator, then the quoted message's own header lines (From:,
       * Sent:, To:, Subject:): kept, as who wrote it and when, like the
       * "On ... wrote:" line above a '>' quote */
      outlook = 1;
      while (a + outlook < b &&
             line_hash(text + starts[a + outlook],
                       ends[a + outlook] - starts[a + outlook]))
        outlook++;
    }
    if (b > a && quote_known(m, text, starts, ends, a + outlook, b, &n_text)) {
      for (; outlook > 0; outlook--, a++) {
        dq_strbuf_add(out, text + starts[a], ends[a] - starts[a]);
        dq_strbuf_add(out, "\n", 1);
      }
      char line[96];
      snprintf(line, sizeof line, "[quoted: %zu lines of an earlier message]\n",
               n_text);
      dq_strbuf_add(out, line, strlen(line));
      a = b;
      continue;
    }
    b = b > a ? b : a + 1; /* kept as it is */
    for (; a < b; a++) {
      dq_strbuf_add(out, text + starts[a], ends[a] - starts[a]);
      dq_strbuf_add(out, "\n", 1);
    }
  }
  int ok = !out->oom;
  for (k = 0; k < n_lines && ok; k++)
    ok = seen_add(m, line_hash(text + starts[k], ends[k] - starts[k]));
  free(starts);
  free(ends);
  return ok;
}

/* ---- decoding ---- */

/* Quoted-printable (`header`: RFC 2047's Q, where '_' is a space). */
static void decode_qp(dq_strbuf *o, const char *s, size_t n, int header) {
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (ch == '=' && i + 1 < n && (s[i + 1] == '\n' || s[i + 1] == '\r')) {
      i += s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n' ? 2 : 1;
      continue; /* a soft line break */
    }
    if (ch == '=' && i + 2 < n && dq_hex_digit(s[i + 1]) >= 0 &&
        dq_hex_digit(s[i + 2]) >= 0) {
      ch = (char)(dq_hex_digit(s[i + 1]) * 16 + dq_hex_digit(s[i + 2]));
      i += 2;
    } else if (header && ch == '_') {
      ch = ' ';
    }
    dq_strbuf_add(o, &ch, 1);
  }
}

static void decode_base64(dq_strbuf *o, const char *s, size_t n) {
  unsigned acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n && s[i] != '='; i++) {
    char ch = s[i];
    int v = ch >= 'A' && ch <= 'Z'   ? ch - 'A'
            : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
            : ch >= '0' && ch <= '9' ? ch - '0' + 52
            : ch == '+'              ? 62
            : ch == '/'              ? 63
                                     : -1;
    if (v < 0)
      continue; /* line breaks, blanks */
    acc = (acc << 6 | (unsigned)v) & 0xFFFFFF;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      char byte = (char)(acc >> bits & 0xFF);
      dq_strbuf_add(o, &byte, 1);
    }
  }
}

/* s[0..n) in `charset` as UTF-8 into o. US-ASCII, UTF-8 and a charset
 * iconv does not know pass as they are (dq_tbuf checks them later). */
static void to_utf8(dq_strbuf *o, const char *charset, const char *s,
                    size_t n) {
  if (!charset || !charset[0] || !strcasecmp(charset, "utf-8") ||
      !strcasecmp(charset, "utf8") || !strcasecmp(charset, "us-ascii")) {
    dq_strbuf_add(o, s, n);
    return;
  }
  iconv_t cd = iconv_open("UTF-8", charset);
  if (cd == (iconv_t)-1) {
    dq_strbuf_add(o, s, n);
    return;
  }
  char *in = (char *)s;
  size_t left = n;
  while (left && !o->oom) {
    char buf[1024], *out = buf;
    size_t room = sizeof buf;
    size_t r = iconv(cd, &in, &left, &out, &room);
    dq_strbuf_add(o, buf, (size_t)(out - buf));
    if (r == (size_t)-1 && errno != E2BIG) { /* invalid or cut: U+FFFD */
      dq_strbuf_add(o, "\xEF\xBF\xBD", 3);
      in++;
      left--;
    }
  }
  iconv_close(cd);
}

/* A header's value with RFC 2047 encoded words decoded into o (UTF-8);
 * the blanks between two encoded words go. */
static void decode_words(dq_strbuf *o, const char *s) {
  int after_word = 0;
  while (*s) {
    const char *q = strstr(s, "=?");
    const char *cs = q ? q + 2 : NULL;
    const char *enc = cs ? strchr(cs, '?') : NULL;
    const char *text = enc && enc[1] && enc[2] == '?' ? enc + 3 : NULL;
    const char *end = text ? strstr(text, "?=") : NULL;
    if (!end) {
      dq_strbuf_add(o, s, strlen(s));
      return;
    }
    int blank_gap = after_word;
    for (const char *p = s; p < q && blank_gap; p++)
      blank_gap = *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n';
    if (!blank_gap)
      dq_strbuf_add(o, s, (size_t)(q - s));
    char charset[64];
    size_t k = (size_t)(enc - cs);
    snprintf(charset, sizeof charset, "%.*s", (int)(k < 63 ? k : 63), cs);
    char *star = strchr(charset, '*'); /* RFC 2231's language */
    if (star)
      *star = '\0';
    dq_strbuf raw = {0};
    if ((enc[1] | 0x20) == 'b')
      decode_base64(&raw, text, (size_t)(end - text));
    else if ((enc[1] | 0x20) == 'q')
      decode_qp(&raw, text, (size_t)(end - text), 1);
    else
      dq_strbuf_add(&raw, q, (size_t)(end + 2 - q));
    to_utf8(o, charset, raw.p ? raw.p : "", raw.n);
    o->oom |= raw.oom;
    free(raw.p);
    s = end + 2;
    after_word = 1;
  }
}

/* ---- headers ---- */

typedef struct headers {
  char *from, *to, *cc, *date, *subject, *type, *encoding, *disposition;
} headers;

static void headers_free(headers *h) {
  free(h->from);
  free(h->to);
  free(h->cc);
  free(h->date);
  free(h->subject);
  free(h->type);
  free(h->encoding);
  free(h->disposition);
}

static int blank_line(const char *s, size_t n) {
  return n == 0 || (n == 1 && s[0] == '\r');
}

/* Parses the header block at s[0..n): the wanted fields, unfolded (at
 * most HEADER_MAX bytes each). Returns the offset of the body. */
static size_t parse_headers(const char *s, size_t n, headers *h, int *oom) {
  static const char *const NAMES[] = {"from",
                                      "to",
                                      "cc",
                                      "date",
                                      "subject",
                                      "content-type",
                                      "content-transfer-encoding",
                                      "content-disposition"};
  char **slot[] = {&h->from,    &h->to,   &h->cc,       &h->date,
                   &h->subject, &h->type, &h->encoding, &h->disposition};
  memset(h, 0, sizeof *h);
  char **cur = NULL;
  size_t i = 0;
  while (i < n) {
    const char *nl = memchr(s + i, '\n', n - i);
    size_t e = nl ? (size_t)(nl - s) : n, len = e - i;
    const char *l = s + i;
    size_t next = nl ? e + 1 : n;
    if (blank_line(l, len))
      return next;
    size_t body_len = len - (len && l[len - 1] == '\r');
    if ((l[0] == ' ' || l[0] == '\t') && i > 0) { /* folded: the last */
      if (!cur || !*cur) { /* header's, one not kept (Received:) */
        i = next;
        continue;
      }
      size_t have = strlen(*cur), add = body_len;
      if (have + add + 1 > HEADER_MAX)
        add = have + 1 < HEADER_MAX ? HEADER_MAX - have - 1 : 0;
      char *p = realloc(*cur, have + add + 1);
      if (!p) {
        *oom = 1;
      } else {
        memcpy(p + have, l, add);
        p[have + add] = '\0';
        *cur = p;
      }
      i = next;
      continue;
    }
    const char *colon = memchr(l, ':', body_len);
    cur = NULL;
    size_t name_len = colon ? (size_t)(colon - l) : 0;
    for (size_t k = 0; k < name_len && colon; k++)
      if (l[k] == ' ' || l[k] == '\t' || (unsigned char)l[k] < 0x21)
        colon = NULL;        /* a name has no blanks: "Dear Bob: ..." is text */
    if (!colon || !name_len) /* not a header: the body, without a blank */
      return i;
    for (size_t k = 0; k < sizeof NAMES / sizeof *NAMES; k++)
      if (strlen(NAMES[k]) == name_len && dq_starts_ci(l, name_len, NAMES[k]) &&
          !*slot[k]) {
        const char *v = colon + 1;
        size_t vn = body_len - name_len - 1;
        while (vn && (*v == ' ' || *v == '\t')) {
          v++;
          vn--;
        }
        if (vn >= HEADER_MAX)
          vn = HEADER_MAX - 1;
        /* not strndup: v lies inside the whole mailbox (see dq_starts_ci) */
        *slot[k] = malloc(vn + 1);
        if (*slot[k]) {
          memcpy(*slot[k], v, vn);
          (*slot[k])[vn] = '\0';
        } else {
          *oom = 1;
        }
        cur = slot[k];
      }
    i = next;
  }
  return n;
}

/* The value of parameter `name` of a header such as Content-Type
 * ("text/plain; charset=\"iso-8859-1\"") into out[PARAM_MAX]; "" when
 * absent. */
static void param(const char *v, const char *name, char *out) {
  out[0] = '\0';
  size_t k = strlen(name);
  for (const char *p = v ? strchr(v, ';') : NULL; p; p = strchr(p + 1, ';')) {
    const char *q = p + 1;
    while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
      q++;
    if (strncasecmp(q, name, k) != 0)
      continue;
    q += k;
    if (*q == '*') /* RFC 2231's name*=charset''value: the value, raw */
      q++;
    if (*q != '=')
      continue;
    q++;
    if (*q == '"') {
      q++;
      size_t n = strcspn(q, "\"");
      snprintf(out, PARAM_MAX, "%.*s", (int)(n < PARAM_MAX ? n : PARAM_MAX - 1),
               q);
    } else {
      size_t n = strcspn(q, "; \t\r\n");
      snprintf(out, PARAM_MAX, "%.*s", (int)(n < PARAM_MAX ? n : PARAM_MAX - 1),
               q);
    }
    const char *tick = strstr(out, "''");
    if (tick) /* charset''value */
      memmove(out, tick + 2, strlen(tick + 2) + 1);
    return;
  }
}

/* Whether the media type of Content-Type v is `type` (as "text/plain" or
 * "multipart/"), case-insensitive; no Content-Type, or one without a
 * subtype ("text"), is text/plain (RFC 2045 5.2). */
static int media_is(const char *v, const char *type) {
  while (v && *v == ' ')
    v++;
  size_t k = v ? strcspn(v, ";/ \t\r\n") : 0;
  if (!v || v[k] != '/')
    v = "text/plain";
  return strncasecmp(v, type, strlen(type)) == 0;
}

/* ---- messages and parts ---- */

static dq_status read_message(mail *m, const char *s, size_t n, int level,
                              unsigned depth);

static void put_header(mail *m, const char *name, const char *value) {
  if (!value || !value[0])
    return;
  dq_strbuf v = {0};
  decode_words(&v, value);
  dq_tbuf_newline(m->b);
  dq_tbuf_pos(m->b, text_line(m), 0);
  dq_tbuf_put(m->b, name, strlen(name));
  dq_tbuf_put(m->b, ": ", 2);
  for (size_t i = 0; i < v.n; i++) /* unfolded: no line breaks */
    if (v.p[i] == '\r' || v.p[i] == '\n' || v.p[i] == '\t')
      v.p[i] = ' ';
  dq_tbuf_put_utf8(m->b, v.p ? v.p : "", v.n);
  m->b->oom |= v.oom;
  free(v.p);
  dq_tbuf_newline(m->b);
}

static void put_attachment(mail *m, const char *name, const char *type) {
  char line[PARAM_MAX * 3 + 64];
  char t[PARAM_MAX];
  while (type && (*type == ' ' || *type == '\t'))
    type++;
  size_t k = type ? strcspn(type, "; \t\r\n") : 0;
  snprintf(t, sizeof t, "%.*s", (int)(k < PARAM_MAX ? k : PARAM_MAX - 1),
           type ? type : "");
  dq_strbuf nm = {0};
  decode_words(&nm, name);
  snprintf(m->att_name, sizeof m->att_name, "%s",
           nm.p && nm.p[0] ? nm.p : "unnamed");
  free(nm.p);
  snprintf(line, sizeof line, "[attachment: %s%s%s%s]", m->att_name,
           t[0] ? " (" : "", t, t[0] ? ")" : "");
  dq_tbuf_newline(m->b);
  m->att_line = m->b->n;
  put_lines(m, line, strlen(line));
}

/* The attachment just named is a heading one level below its message's:
 * its text follows. */
static void attachment_heading(mail *m, int level) {
  if (!m->b->oom && m->b->n > m->att_line)
    dq_tbuf_heading(m->b, m->att_line, level + 1, m->att_name,
                    strlen(m->att_name));
}

/* An attachment that is a document docqa reads (a PDF, a DOCX, an ODT,
 * an EPUB, HTML, text, a message), by its name and first bytes: its text
 * after its "[attachment: ...]" line, which becomes a heading one level
 * below the message's, its own headings below that. A picture, or a
 * document that cannot be read (its message is dropped), is only named. */
static dq_status read_attachment(mail *m, const char *name, const char *s,
                                 size_t n, int level) {
  size_t sniff = n < DQ_SNIFF_BYTES ? n : DQ_SNIFF_BYTES;
  dq_doc_kind kind = n ? dq_detect_kind(name, s, sniff, NULL) : DQ_DOC_UNKNOWN;
  if (kind == DQ_DOC_UNKNOWN)
    return DQ_OK;
  char label[PARAM_MAX + 512];
  snprintf(label, sizeof label, "%s (%s)", m->c->name, name[0] ? name : "?");
  dq_text *t = NULL;
  dq_error quiet = {0};
  if (dq_read_buffer(label, s, n, kind, m->c->o, &t, NULL, &quiet) != DQ_OK ||
      !t) {
    if (quiet.code == DQ_ERR_NOMEM)
      return dq_error_set(m->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                          m->c->name);
    return DQ_OK;
  }
  dq_tbuf *b = m->b;
  attachment_heading(m, level);
  size_t base = b->n;
  if (t->n_bytes)
    put_lines(m, t->text, t->n_bytes);
  for (size_t i = 0; i < t->n_headings && !b->oom; i++)
    if (t->headings[i].title)
      dq_tbuf_heading(b, base + t->headings[i].offset,
                      level + 1 + t->headings[i].level, t->headings[i].title,
                      strlen(t->headings[i].title));
  dq_text_free(t);
  return DQ_OK;
}

/* One MIME entity's body s[0..n) with headers h. */
static dq_status read_entity(mail *m, const headers *h, const char *s, size_t n,
                             int level, unsigned depth) {
  if (++m->n_parts > MAIL_MAX_PARTS || depth > MAIL_MAX_DEPTH) {
    static const char CUT[] = "[the rest of this message is nested too "
                              "deeply or has too many parts to read]";
    if (m->n_parts == MAIL_MAX_PARTS + 1 || depth > MAIL_MAX_DEPTH)
      put_lines(m, CUT, sizeof CUT - 1);
    return DQ_OK;
  }
  char name[PARAM_MAX], charset[PARAM_MAX];
  param(h->disposition, "filename", name);
  if (!name[0])
    param(h->type, "name", name);
  param(h->type, "charset", charset);
  if (media_is(h->type, "multipart/")) {
    char boundary[PARAM_MAX];
    param(h->type, "boundary", boundary);
    if (!boundary[0]) { /* no boundary: read it as text */
      put_lines(m, s, n);
      return DQ_OK;
    }
    int alternative = media_is(h->type, "multipart/alternative");
    int digest = media_is(h->type, "multipart/digest");
    size_t blen = strlen(boundary);
    /* the parts: between "--boundary" lines, up to "--boundary--" */
    const char *part = NULL, *best = NULL;
    size_t best_n = 0;
    int best_rank = -1;
    dq_status st = DQ_OK;
    for (size_t i = 0; i <= n && st == DQ_OK;) {
      const char *nl = i < n ? memchr(s + i, '\n', n - i) : NULL;
      size_t e = nl ? (size_t)(nl - s) : n;
      int delim = e - i >= blen + 2 && s[i] == '-' && s[i + 1] == '-' &&
                  memcmp(s + i + 2, boundary, blen) == 0;
      size_t after = i + 2 + blen; /* "--b" then "--" or blanks only */
      int dashes =
          delim && e - after >= 2 && s[after] == '-' && s[after + 1] == '-';
      for (size_t k = after + 2 * dashes; delim && k < e; k++)
        delim = s[k] == ' ' || s[k] == '\t' || s[k] == '\r';
      int close = i == n || (delim && dashes);
      if ((delim || close) && part) { /* a part ends (a cut one at the end) */
        size_t pn = (size_t)(s + i - part);
        if (pn && part[pn - 1] == '\n') /* the line break before "--" */
          pn -= pn > 1 && part[pn - 2] == '\r' ? 2 : 1;
        headers ph;
        int oom = 0;
        size_t body = parse_headers(part, pn, &ph, &oom);
        if (digest && !ph.type && !oom) /* RFC 2046 5.1.5: a digest's */
          oom = !(ph.type = strdup("message/rfc822")); /* parts are mail */
        if (oom) {
          headers_free(&ph);
          return dq_error_set(m->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                              m->c->name);
        }
        if (alternative) { /* keep the best: plain, html, anything */
          int rank = media_is(ph.type, "text/plain")  ? 2
                     : media_is(ph.type, "text/html") ? 1
                                                      : 0;
          if (rank > best_rank && pn > body) {
            best = part;
            best_n = pn;
            best_rank = rank;
          }
        } else {
          st = read_entity(m, &ph, part + body, pn - body, level, depth + 1);
        }
        headers_free(&ph);
      }
      if (close)
        break;
      if (delim)
        part = nl ? s + e + 1 : s + n;
      i = nl ? e + 1 : n;
    }
    if (st == DQ_OK && best) {
      headers ph;
      int oom = 0;
      size_t body = parse_headers(best, best_n, &ph, &oom);
      st = oom ? dq_error_set(m->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                              m->c->name)
               : read_entity(m, &ph, best + body, best_n - body, level,
                             depth + 1);
      headers_free(&ph);
    }
    return st;
  }
  int text = media_is(h->type, "text/");
  int attached =
      h->disposition && !strncasecmp(h->disposition, "attachment", 10);
  int message = media_is(h->type, "message/rfc822");
  dq_strbuf raw = {0};
  const char *cte = h->encoding ? h->encoding : "";
  while (*cte == ' ')
    cte++;
  if (!strncasecmp(cte, "base64", 6))
    decode_base64(&raw, s, n);
  else if (!strncasecmp(cte, "quoted-printable", 16))
    decode_qp(&raw, s, n, 0);
  else
    dq_strbuf_add(&raw, s, n);
  dq_status st = DQ_OK;
  if (raw.oom) {
    free(raw.p);
    return dq_error_set(m->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        m->c->name);
  }
  const char *body = raw.p ? raw.p : "";
  if ((!text && !message) || (attached && !media_is(h->type, "text/plain"))) {
    put_attachment(m, name, h->type ? h->type : "text/plain");
    st = read_attachment(m, name, body, raw.n, level);
  } else if (message) {
    st = read_message(m, body, raw.n, level + 1, depth + 1);
  } else if (media_is(h->type, "text/html")) {
    dq_tbuf_newline(m->b);
    text_line(m);
    st = dq_read_html_lines(m->c, body, raw.n, m->b, &m->lines);
  } else {
    if (attached) {
      put_attachment(m, name, h->type);
      attachment_heading(m, level);
    }
    dq_strbuf u = {0};
    to_utf8(&u, charset, body, raw.n);
    if (m->mbox && u.p) /* mboxrd's and mboxo's escape, undone */
      for (size_t i = 0, k = 0; i <= u.n; i++) {
        if (i == u.n) {
          u.n = k;
          u.p[k] = '\0';
          break;
        }
        int at_line = i == 0 || u.p[i - 1] == '\n';
        size_t g = i;
        while (at_line && g < u.n && u.p[g] == '>')
          g++;
        if (at_line && g > i && u.n - g >= 5 && !memcmp(u.p + g, "From ", 5))
          i++; /* one '>' goes */
        u.p[k++] = u.p[i];
      }
    dq_strbuf f = {0};
    if (u.oom || (u.n && m->mbox && !attached && !fold_quotes(m, u.p, u.n, &f)))
      st = dq_error_set(m->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        m->c->name);
    else if (f.n)
      put_lines(m, f.p, f.n);
    else if (u.n && !(m->mbox && !attached))
      put_lines(m, u.p, u.n);
    free(u.p);
    free(f.p);
  }
  free(raw.p);
  return st;
}

static dq_status read_message(mail *m, const char *s, size_t n, int level,
                              unsigned depth) {
  headers h;
  int oom = 0;
  size_t body = parse_headers(s, n, &h, &oom);
  dq_status st = DQ_OK;
  if (oom) {
    st = dq_error_set(m->c->err, DQ_ERR_NOMEM, "%s: out of memory", m->c->name);
    goto done;
  }
  /* the subject names the message: a heading at its line */
  dq_tbuf_newline(m->b);
  size_t at = m->b->n;
  put_header(m, "Subject", h.subject ? h.subject : "(no subject)");
  if (m->b->n > at + 9 && !m->b->oom)
    dq_tbuf_heading(m->b, at + 9, level, m->b->text + at + 9, m->b->n - at - 9);
  put_header(m, "From", h.from);
  put_header(m, "To", h.to);
  put_header(m, "Cc", h.cc);
  put_header(m, "Date", h.date);
  st = read_entity(m, &h, s + body, n - body, level, depth);
done:
  headers_free(&h);
  return st;
}

/* Whether the line at s is an mbox's "From " separator. */
static int from_line(const char *s, size_t n) {
  return n >= 5 && memcmp(s, "From ", 5) == 0;
}

dq_status dq_read_mail(const dq_reader_ctx *c, const char *data, size_t n,
                       dq_tbuf *b) {
  mail m = {c, b, {0}, 0, from_line(data, n), 0, "", NULL, 0, 0};
  if (!from_line(data, n)) /* one message (.eml) */
    return read_message(&m, data, n, 1, 0);
  /* a mailbox: a message after each "From " line that starts the file or
   * follows a blank line */
  dq_status st = DQ_OK;
  size_t start = 0, shown = 0;
  int prev_blank = 1;
  for (size_t i = 0; i <= n && st == DQ_OK;) {
    const char *nl = i < n ? memchr(data + i, '\n', n - i) : NULL;
    size_t e = nl ? (size_t)(nl - data) : n;
    int sep = i == n || (prev_blank && from_line(data + i, e - i));
    if (sep && i > start) {
      const char *msg = memchr(data + start, '\n', i - start);
      m.n_parts = 0; /* each message's own part budget */
      if (msg)       /* the message after its "From " line */
        st = read_message(&m, msg + 1, (size_t)(data + i - msg - 1), 1, 0);
    }
    if (sep)
      start = i;
    if (i == n)
      break;
    if (sep && n > MAIL_PROGRESS_BYTES && c->o->progress &&
        i - shown >= MAIL_PROGRESS_STEP) { /* a large mailbox's MiB read */
      shown = i;
      if (c->o->progress(c->o->progress_user, "read", i >> 20, n >> 20,
                         "MiB")) {
        st = dq_error_set(c->err, DQ_ERR_INTERRUPTED, "%s: stopped", c->name);
        break;
      }
    }
    prev_blank = blank_line(data + i, e - i);
    i = nl ? e + 1 : n;
  }
  free(m.seen);
  return st;
}
