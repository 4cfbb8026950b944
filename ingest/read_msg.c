/*
 * read_msg.c - Outlook messages (.msg): the Compound File Binary container
 * ([MS-CFB]) and the message's properties in it ([MS-OXMSG]), written out
 * as an RFC 5322 message with MIME parts, which read_mail.c then reads as
 * it reads an .eml: the same header lines, body, attachments and nested
 * messages, so a matter's .msg files and its .eml files read alike.
 *
 * The container is read_cfb.c's. The message: streams named
 * "__substg1.0_IIIITTTT" (property id IIII and type TTTT in hex: 001F UTF-16LE
 * text, 001E 8-bit text in the message's code page, 0102 binary), fixed-size
 * properties (times) in
 * "__properties_version1.0", recipients in "__recip_version1.0_#N" and
 * attachments in "__attach_version1.0_#N" storages; an attached message
 * is the storage "__substg1.0_3701000D" of its attachment. Read: the
 * subject (0x0037), the sender's name and address (0x0C1A, 0x5D01 or an
 * 0x0C1F holding '@'), the recipients (0x3001 name, 0x39FE or 0x3003
 * address, 0x0C15 To/Cc/Bcc; else the display lists 0x0E04, 0x0E03), the
 * time sent (0x0039, else delivered 0x0E06, else created 0x3007), the
 * plain body (0x1000) or else the HTML one (0x1013), and each
 * attachment's name (0x3707, 0x3704, 0x3001), type (0x370E) and bytes
 * (0x3701). A message Outlook received keeps the headers it came with
 * (0x007D): its From, To, Cc and Date lines are taken from there, with
 * the addresses the properties may lack. A signed message's attachment
 * of type multipart/signed is the message as it was sent, a MIME entity:
 * it is the body, in place of 0x1000. The compressed RTF body (0x1009)
 * is left out: Outlook writes the plain body beside it.
 */
#include "ingest_int.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MSG_MAX_DEPTH 8        /* messages attached in messages */
#define MSG_MAX_ATTACH 1000    /* attachments or recipients a message */
#define MSG_MAX_PARTS 20000    /* messages and attachments a file */

/* ---- the message ---- */

typedef struct msg_out {
  dq_cfb *f;
  unsigned cp;     /* code page of 8-bit strings */
  unsigned serial; /* boundaries made */
  size_t parts;    /* messages and attachments written, MSG_MAX_PARTS */
} msg_out;

/* Property `id`'s string in storage s, as UTF-8 (malloc'd), or NULL. */
static char *prop_string(msg_out *m, size_t s, unsigned id, dq_status *st) {
  char name[32];
  snprintf(name, sizeof name, "__substg1.0_%04X001F", id);
  long i = dq_cfb_child_named(m->f, s, name);
  int wide = i >= 0;
  if (!wide) {
    snprintf(name, sizeof name, "__substg1.0_%04X001E", id);
    i = dq_cfb_child_named(m->f, s, name);
  }
  if (i < 0)
    return NULL;
  unsigned char *raw;
  size_t n;
  if ((*st = dq_cfb_stream(m->f, (size_t)i, &raw, &n)) != DQ_OK)
    return NULL;
  char cpname[24];
  if (wide)
    snprintf(cpname, sizeof cpname, "UTF-16LE");
  else if (m->cp == 65001 || m->cp == 20127)
    snprintf(cpname, sizeof cpname, "UTF-8");
  else
    snprintf(cpname, sizeof cpname, "CP%u", m->cp ? m->cp : 1252);
  dq_strbuf o = {0};
  iconv_t cd = iconv_open("UTF-8", cpname);
  if (cd == (iconv_t)-1) {
    dq_strbuf_add(&o, (const char *)raw, n); /* as it is: checked later */
  } else {
    char *in = (char *)raw, chunk[4096];
    size_t nin = n;
    while (nin) {
      char *po = chunk;
      size_t nout = sizeof chunk;
      size_t r = iconv(cd, &in, &nin, &po, &nout);
      dq_strbuf_add(&o, chunk, (size_t)(po - chunk));
      if (r == (size_t)-1 && errno != E2BIG) { /* a bad unit: U+FFFD */
        dq_strbuf_add(&o, "\xEF\xBF\xBD", 3);
        size_t skip = wide ? 2 : 1;
        skip = skip < nin ? skip : nin;
        in += skip;
        nin -= skip;
      }
    }
    iconv_close(cd);
  }
  free(raw);
  while (o.n && o.p[o.n - 1] == '\0') /* a terminating NUL */
    o.n--;
  if (o.oom) {
    free(o.p);
    *st = dq_error_set(m->f->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                       m->f->c->name);
    return NULL;
  }
  if (o.p)
    o.p[o.n] = '\0';
  return o.p ? o.p : strdup("");
}

/* Property `id`'s binary value in storage s (malloc'd), or NULL. */
static unsigned char *prop_binary(msg_out *m, size_t s, unsigned id, size_t *n,
                                  dq_status *st) {
  char name[32];
  snprintf(name, sizeof name, "__substg1.0_%04X0102", id);
  long i = dq_cfb_child_named(m->f, s, name);
  unsigned char *raw = NULL;
  if (i >= 0)
    *st = dq_cfb_stream(m->f, (size_t)i, &raw, n);
  return raw;
}

/* A fixed-size property of storage s (its __properties_version1.0
 * stream, whose entries start after a header of `head` bytes): the 8
 * bytes of property (id, type); 0 when absent. */
static int prop_fixed(msg_out *m, size_t s, size_t head, unsigned id,
                      unsigned type, uint64_t *v) {
  long i = dq_cfb_child_named(m->f, s, "__properties_version1.0");
  unsigned char *raw;
  size_t n;
  if (i < 0 || dq_cfb_stream(m->f, (size_t)i, &raw, &n) != DQ_OK)
    return 0;
  int found = 0;
  for (size_t k = head; k + 16 <= n && !found; k += 16)
    if (dq_le16(raw + k) == type && dq_le16(raw + k + 2) == id) {
      *v = dq_le64(raw + k + 8);
      found = 1;
    }
  free(raw);
  return found;
}

/* Writes a header line, its value on one line. */
static void header(dq_strbuf *o, const char *name, const char *v) {
  if (!v || !v[0])
    return;
  dq_strbuf_adds(o, name);
  dq_strbuf_add(o, ": ", 2);
  for (const char *p = v; *p; p++)
    dq_strbuf_add(o, *p == '\r' || *p == '\n' || *p == '\t' ? " " : p, 1);
  dq_strbuf_add(o, "\n", 1);
}

/* The value of header `name` in a message's transport headers (lines
 * unfolded), appended to v; 0 when it has none. */
static int transport_header(const char *hdrs, const char *name, dq_strbuf *v) {
  size_t k = strlen(name);
  for (const char *p = hdrs; p && *p;) {
    const char *e = strchr(p, '\n');
    if (!e)
      e = p + strlen(p);
    if (*p == '\r' || *p == '\n') /* the blank line ends them */
      return 0;
    if (!strncasecmp(p, name, k) && p[k] == ':') {
      const char *q = p + k + 1;
      for (;;) { /* the line and its continuations */
        for (; q < e; q++)
          if (*q != '\r')
            dq_strbuf_add(v, *q == '\t' ? " " : q, 1);
        if (!*e || (e[1] != ' ' && e[1] != '\t'))
          break;
        q = e + 1;
        e = strchr(q, '\n');
        if (!e)
          e = q + strlen(q);
      }
      return 1;
    }
    p = *e ? e + 1 : e;
  }
  return 0;
}

/* "Name <address>", "Name" or "address". */
static void person(dq_strbuf *o, const char *name, const char *addr) {
  int has_name = name && name[0], has_addr = addr && strchr(addr, '@');
  if (has_name)
    dq_strbuf_adds(o, name);
  if (has_addr && !(has_name && !strcmp(name, addr))) {
    dq_strbuf_adds(o, has_name ? " <" : "");
    dq_strbuf_adds(o, addr);
    dq_strbuf_adds(o, has_name ? ">" : "");
  }
}

static void base64(dq_strbuf *o, const unsigned char *s, size_t n) {
  static const char A[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char line[80];
  size_t k = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? s[i + 1] : 0) << 8 |
                 (i + 2 < n ? s[i + 2] : 0);
    line[k++] = A[v >> 18 & 63];
    line[k++] = A[v >> 12 & 63];
    line[k++] = i + 1 < n ? A[v >> 6 & 63] : '=';
    line[k++] = i + 2 < n ? A[v & 63] : '=';
    if (k == 76 || i + 3 >= n) {
      line[k++] = '\n';
      dq_strbuf_add(o, line, k);
      k = 0;
    }
  }
}

/* A name for a MIME parameter: quotes, backslashes and controls become
 * '_'. */
static void param_value(dq_strbuf *o, const char *v) {
  dq_strbuf_add(o, "\"", 1);
  for (const char *p = v; *p; p++)
    dq_strbuf_add(
        o, *p == '"' || *p == '\\' || (unsigned char)*p < 0x20 ? "_" : p, 1);
  dq_strbuf_add(o, "\"", 1);
}

/* RFC 5322's date of a FILETIME (100 ns since 1601), in UTC. */
static void filetime_date(uint64_t ft, char *out, size_t cap) {
  out[0] = '\0';
  if (ft < 116444736000000000ull) /* before 1970 */
    return;
  time_t t = (time_t)((ft - 116444736000000000ull) / 10000000ull);
  struct tm tm;
  if (!gmtime_r(&t, &tm) || tm.tm_year > 8099)
    return;
  static const char *const D[] = {"Sun", "Mon", "Tue", "Wed",
                                  "Thu", "Fri", "Sat"};
  static const char *const M[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  snprintf(out, cap, "%s, %02d %s %04d %02d:%02d:%02d +0000", D[tm.tm_wday],
           tm.tm_mday, M[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
           tm.tm_sec);
}

static int by_name(const void *a, const void *b, void *f) {
  const dq_cfb *c = f;
  return strcmp(c->e[*(const uint32_t *)a].name,
                c->e[*(const uint32_t *)b].name);
}

/* The storages among s's children whose names start with `prefix`, in
 * order of their names (Outlook numbers them "#00000000", "#00000001"),
 * at most `cap` (malloc'd). */
static uint32_t *children_with(dq_cfb *f, size_t s, const char *prefix,
                               size_t cap, size_t *n_out) {
  size_t n, k = 0, pl = strlen(prefix);
  uint32_t *kids = dq_cfb_children(f, s, &n);
  for (size_t i = 0; i < n && k < cap; i++)
    if (!strncasecmp(f->e[kids[i]].name, prefix, pl) && f->e[kids[i]].type == 1)
      kids[k++] = kids[i];
  if (k > 1)
    qsort_r(kids, k, sizeof *kids, by_name, f);
  *n_out = k;
  return kids;
}

static dq_status message(msg_out *m, size_t s, size_t head, unsigned depth,
                         dq_strbuf *o);

/* The recipients of message storage s of type `type` (1 To, 2 Cc) as a
 * header value; NULL when it has no recipient storages. */
static dq_status recipients(msg_out *m, size_t s, const uint32_t *rs,
                            size_t n_rs, uint32_t type, dq_strbuf *v) {
  dq_status st = DQ_OK;
  for (size_t k = 0; k < n_rs && st == DQ_OK; k++) {
    uint64_t t = 0;
    uint32_t rt =
        prop_fixed(m, rs[k], 8, 0x0C15, 0x0003, &t) ? (uint32_t)t : 1; /* To */
    if (rt != type)
      continue;
    char *name = prop_string(m, rs[k], 0x3001, &st);
    char *addr = st == DQ_OK ? prop_string(m, rs[k], 0x39FE, &st) : NULL;
    if (st == DQ_OK && (!addr || !strchr(addr, '@'))) {
      free(addr);
      addr = prop_string(m, rs[k], 0x3003, &st);
    }
    if (v->n)
      dq_strbuf_add(v, ", ", 2);
    person(v, name, addr);
    free(name);
    free(addr);
  }
  (void)s;
  return st;
}

/* An attachment storage a: its MIME part (after "--boundary\n"). */
static dq_status attachment(msg_out *m, size_t a, unsigned depth,
                            dq_strbuf *o) {
  dq_status st = DQ_OK;
  char *name = prop_string(m, a, 0x3707, &st);
  if (st == DQ_OK && (!name || !name[0])) {
    free(name);
    name = prop_string(m, a, 0x3704, &st);
  }
  if (st == DQ_OK && (!name || !name[0])) {
    free(name);
    name = prop_string(m, a, 0x3001, &st);
  }
  char *type = st == DQ_OK ? prop_string(m, a, 0x370E, &st) : NULL;
  long emb = dq_cfb_child_named(m->f, a, "__substg1.0_3701000D");
  if (st == DQ_OK && type && !strncasecmp(type, "multipart/signed", 16)) {
    /* the message as sent, its own MIME headers first */
    size_t n = 0;
    unsigned char *data = prop_binary(m, a, 0x3701, &n, &st);
    if (data)
      dq_strbuf_add(o, (const char *)data, n);
    free(data);
    free(name);
    free(type);
    return st;
  }
  if (st == DQ_OK && emb >= 0 && m->f->e[emb].type == 1) {
    /* an attached message */
    dq_strbuf_adds(o, "Content-Type: message/rfc822\n");
    if (name && name[0]) {
      dq_strbuf_adds(o, "Content-Disposition: inline; filename=");
      param_value(o, name);
      dq_strbuf_add(o, "\n", 1);
    }
    dq_strbuf_add(o, "\n", 1);
    st = message(m, (size_t)emb, 24, depth + 1, o);
  } else if (st == DQ_OK) {
    size_t n = 0;
    unsigned char *data = prop_binary(m, a, 0x3701, &n, &st);
    dq_strbuf_adds(o, "Content-Type: ");
    dq_strbuf_adds(o, type && type[0] && !strpbrk(type, "\r\n;\"")
                          ? type
                          : "application/octet-stream");
    dq_strbuf_adds(o, "\nContent-Disposition: attachment; filename=");
    param_value(o, name && name[0] ? name : "unnamed");
    dq_strbuf_adds(o, "\nContent-Transfer-Encoding: base64\n\n");
    if (data)
      base64(o, data, n);
    free(data);
  }
  free(name);
  free(type);
  return st;
}

/* Message storage s (properties' header `head` bytes: 32 for the file's
 * message, 24 for an attached one) as RFC 5322 text into o. */
static dq_status message(msg_out *m, size_t s, size_t head, unsigned depth,
                         dq_strbuf *o) {
  if (depth > MSG_MAX_DEPTH || ++m->parts > MSG_MAX_PARTS) {
    dq_strbuf_adds(o, "\n[a message attached too deep, or past too many "
                      "parts, to read]\n");
    return DQ_OK;
  }
  uint64_t v = 0;
  unsigned outer_cp = m->cp; /* an attached message has its own */
  if (prop_fixed(m, s, head, 0x3FFD, 0x0003, &v) && (uint32_t)v)
    m->cp = (uint32_t)v;
  dq_status st = DQ_OK;
  char *subject = prop_string(m, s, 0x0037, &st);
  char *from = st == DQ_OK ? prop_string(m, s, 0x0C1A, &st) : NULL;
  char *smtp = st == DQ_OK ? prop_string(m, s, 0x5D01, &st) : NULL;
  if (st == DQ_OK && (!smtp || !strchr(smtp, '@'))) {
    free(smtp);
    smtp = prop_string(m, s, 0x0C1F, &st);
  }
  char *body = st == DQ_OK ? prop_string(m, s, 0x1000, &st) : NULL;
  char *transport = st == DQ_OK ? prop_string(m, s, 0x007D, &st) : NULL;
  size_t n_html = 0;
  unsigned char *html = NULL;
  if (st == DQ_OK && (!body || !body[0]))
    html = prop_binary(m, s, 0x1013, &n_html, &st);
  if (st == DQ_OK && (!body || !body[0]) && !html) {
    char *h = prop_string(m, s, 0x1013, &st);
    if (h) {
      html = (unsigned char *)h;
      n_html = strlen(h);
    }
  }
  size_t n_rs = 0, n_as = 0;
  uint32_t *rs =
      children_with(m->f, s, "__recip_version1.0_#", MSG_MAX_ATTACH, &n_rs);
  uint32_t *as =
      children_with(m->f, s, "__attach_version1.0_#", MSG_MAX_ATTACH, &n_as);
  dq_strbuf to = {0}, cc = {0};
  if (st == DQ_OK && n_rs) {
    st = recipients(m, s, rs, n_rs, 1, &to);
    if (st == DQ_OK)
      st = recipients(m, s, rs, n_rs, 2, &cc);
  } else if (st == DQ_OK) {
    char *t = prop_string(m, s, 0x0E04, &st);
    char *c = st == DQ_OK ? prop_string(m, s, 0x0E03, &st) : NULL;
    if (t)
      dq_strbuf_adds(&to, t);
    if (c)
      dq_strbuf_adds(&cc, c);
    free(t);
    free(c);
  }
  char date[64] = "";
  if (prop_fixed(m, s, head, 0x0039, 0x0040, &v) ||
      prop_fixed(m, s, head, 0x0E06, 0x0040, &v) ||
      prop_fixed(m, s, head, 0x3007, 0x0040, &v))
    filetime_date(v, date, sizeof date);
  if (st == DQ_OK) {
    header(o, "Subject", subject);
    dq_strbuf who = {0}, t_to = {0}, t_cc = {0}, t_date = {0};
    if (!transport_header(transport, "From", &who))
      person(&who, from, smtp);
    header(o, "From", who.p);
    header(o, "To", transport_header(transport, "To", &t_to) ? t_to.p : to.p);
    header(o, "Cc", transport_header(transport, "Cc", &t_cc) ? t_cc.p : cc.p);
    header(o, "Date",
           transport_header(transport, "Date", &t_date) ? t_date.p : date);
    free(who.p);
    free(t_to.p);
    free(t_cc.p);
    free(t_date.p);
    dq_strbuf_adds(o, "MIME-Version: 1.0\n");
    /* the parts first, so that the boundary is one they do not hold */
    dq_strbuf *parts = calloc(n_as + 1, sizeof *parts);
    size_t n_parts = 0;
    int signed_body = 0; /* a multipart/signed attachment is the body */
    for (size_t k = 0; k < n_as && st == DQ_OK && !signed_body; k++) {
      char *t = prop_string(m, as[k], 0x370E, &st);
      signed_body = t && !strncasecmp(t, "multipart/signed", 16);
      free(t);
    }
    if (!parts) {
      st = dq_error_set(m->f->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        m->f->c->name);
    } else if (signed_body) {
      /* no part of its own: the attachment below */
    } else if (html && !(body && body[0])) {
      char cs[32] = "utf-8";
      uint64_t cpid = 0;
      if (prop_fixed(m, s, head, 0x3FDE, 0x0003, &cpid) &&
          (uint32_t)cpid != 65001 && (uint32_t)cpid)
        snprintf(cs, sizeof cs, "CP%u", (unsigned)(uint32_t)cpid);
      dq_strbuf_printf(&parts[0],
                       "Content-Type: text/html; charset=%s\n"
                       "Content-Transfer-Encoding: base64\n\n",
                       cs);
      base64(&parts[0], html, n_html);
    } else {
      dq_strbuf_adds(&parts[0], "Content-Type: text/plain; charset=utf-8\n"
                                "Content-Transfer-Encoding: 8bit\n\n");
      size_t bn = body ? strlen(body) : 0;
      if (body)
        dq_strbuf_add(&parts[0], body, bn);
      if (!bn || body[bn - 1] != '\n')
        dq_strbuf_add(&parts[0], "\n", 1);
    }
    n_parts = parts && !signed_body ? 1 : 0;
    for (size_t k = 0;
         parts && k < n_as && st == DQ_OK && ++m->parts <= MSG_MAX_PARTS; k++)
      st = attachment(m, as[k], depth, &parts[n_parts++]);
    char boundary[48];
    int clash = 1;
    for (unsigned tries = 0; clash && tries < 1000; tries++) {
      snprintf(boundary, sizeof boundary, "=_docqa_msg_%u_%u", depth,
               m->serial++);
      clash = 0;
      for (size_t k = 0; k < n_parts && !clash; k++)
        clash = parts[k].p &&
                memmem(parts[k].p, parts[k].n, boundary, strlen(boundary));
    }
    if (n_parts == 1) {
      dq_strbuf_add(o, parts[0].p, parts[0].n);
    } else if (n_parts > 1) {
      dq_strbuf_printf(o, "Content-Type: multipart/mixed; boundary=\"%s\"\n\n",
                       boundary);
      for (size_t k = 0; k < n_parts; k++)
        dq_strbuf_printf(o, "--%s\n%s\n", boundary,
                         parts[k].p ? parts[k].p : "");
      dq_strbuf_printf(o, "--%s--\n", boundary);
    }
    int oom = 0;
    for (size_t k = 0; k < n_parts; k++) {
      oom |= parts[k].oom;
      free(parts[k].p);
    }
    free(parts);
    if (st == DQ_OK && (oom || o->oom))
      st = dq_error_set(m->f->c->err, DQ_ERR_NOMEM, "%s: out of memory",
                        m->f->c->name);
  }
  free(rs);
  free(as);
  m->cp = outer_cp;
  free(subject);
  free(from);
  free(smtp);
  free(body);
  free(transport);
  free(html);
  free(to.p);
  free(cc.p);
  return st;
}

dq_status dq_read_msg(const dq_reader_ctx *c, const char *data, size_t n,
                      dq_tbuf *b) {
  dq_cfb f;
  dq_status st = dq_cfb_open(&f, c, data, n, "Outlook message (.msg)");
  dq_strbuf o = {0};
  if (st == DQ_OK) {
    msg_out m = {&f, 1252, 0, 0};
    st = message(&m, 0, 32, 0, &o);
    if (st == DQ_OK && f.visits > CFB_MAX_VISITS)
      st = dq_cfb_bad(&f, "its directory's storages share their entries");
  }
  dq_cfb_close(&f);
  if (st == DQ_OK)
    st = dq_read_mail(c, o.p ? o.p : "", o.n, b);
  free(o.p);
  return st;
}
