/*
 * test_read_mail.c - the e-mail reader: on messages Python's own email
 * package wrote (fixtures/make_mail.py): a reply with an RFC 2047 subject,
 * quoted-printable ISO-8859-1 text beside its HTML alternative,
 * attachments named and the documents among them read (a DOCX, its
 * headings below the attachment's, a text; a broken PDF only named), a
 * forwarded message in base64; a
 * mailbox of three messages (plain, HTML only, an escaped "From " line).
 * And on messages built here: a digest whose parts are messages, a
 * multipart cut before its closing boundary, encoded words side by side,
 * a charset iconv does not know, a Content-Type without a subtype, a
 * header block without the blank line, MIME nested past the limit, and
 * which files are known as mail by their first bytes.
 */
#include "read_util.h"
#include "test.h"

#include "office_util.h" /* after test.h: fixture() uses CHECK */

static void test_fixtures(void) {
  dq_text *t = fixture("lease_thread.eml");
  if (t) {
    CHECK_EQ_INT(t->kind, DQ_DOC_EMAIL);
    CHECK_EQ_STR(
        t->text,
        "Subject: Re: D\xC3\xA9posit for Unit 4 \xE2\x80\x93 revised terms\n"
        "From: Alice Smith <alice@harbour.example>\n"
        "To: Bob Jones <bob@wharf.example>\n"
        "Cc: legal@harbour.example\n"
        "Date: Tue, 01 Dec 2026 09:30:00 +0000\n"
        "Bob,\n"
        "\n"
        "The deposit is \xC2\xA3"
        "15,450, payable on signing. The break clause needs six months' "
        "written notice, as clause 7.2 says; this line is long enough that "
        "quoted-printable breaks it softly.\n"
        "\n"
        "> Can we reduce the deposit?\n"
        "\n"
        "Alice\n"
        "[attachment: Lease draft v3.pdf (application/pdf)]\n"
        "[attachment: Licence draft.docx (application/"
        "vnd.openxmlformats-officedocument.wordprocessingml.document)]\n"
        "1. Definitions\n"
        "In this Agreement the \"Software\" means the program licensed.\n"
        "1.1 Interpretation\n"
        "Headings do not affect interpretation. See clause 2.1.\n"
        "2. Licence\n"
        "2.1 Grant\n"
        "The Licensor grants the Licensee a licence to use the Software.\n"
        "2.2 Restrictions\n"
        "The Licensee shall not copy the Software.\n"
        "[attachment: schedule.txt (text/plain)]\n"
        "Schedule 1: rent review every 5 years.\n"
        "Subject: Insurance certificate\n"
        "From: broker@insure.example\n"
        "Date: Mon, 30 Nov 2026 16:00:00 +0000\n"
        "The policy covers the premises until 2027.\n");
    /* the DOCX's headings below its attachment's, the forwarded
     * message's one level below the reply's */
    static const head_want want[] = {
        {1, "Re: D\xC3\xA9posit for Unit 4 \xE2\x80\x93 revised terms", 0, 1},
        {2, "Licence draft.docx", 0, 14},
        {3, "1. Definitions", 0, 15},
        {4, "1.1 Interpretation", 0, 17},
        {3, "2. Licence", 0, 19},
        {4, "2.1 Grant", 0, 20},
        {4, "2.2 Restrictions", 0, 22},
        {2, "schedule.txt", 0, 24},
        {2, "Insurance certificate", 0, 26}};
    CHECK_HEADINGS(t, want);
    CHECK(lines_are_text_lines(t));
  }
  dq_text_free(t);
  t = fixture("matter.mbox");
  if (t) {
    CHECK_EQ_INT(t->kind, DQ_DOC_EMAIL);
    CHECK_EQ_STR(t->text, "Subject: Kick-off\n"
                          "From: carol@firm.example\n"
                          "Date: Wed, 02 Dec 2026 10:00:00 +0000\n"
                          "We start the review on Monday.\n"
                          "\n"
                          "Subject: Fees\n"
                          "From: dave@firm.example\n"
                          "Date: Thu, 03 Dec 2026 11:00:00 +0000\n"
                          "Review | GBP 4,000\n"
                          "Capped[1].\n"
                          "1 Excluding VAT.\n"
                          "Subject: Minutes\n"
                          "From: erin@firm.example\n"
                          "Date: Fri, 04 Dec 2026 12:00:00 +0000\n"
                          "Agreed:\n"
                          "From now on, all drafts go to Carol.\n"
                          "\n");
    static const head_want want[] = {
        {1, "Kick-off", 0, 1}, {1, "Fees", 0, 6}, {1, "Minutes", 0, 12}};
    CHECK_HEADINGS(t, want);
    CHECK(lines_are_text_lines(t));
  }
  dq_text_free(t);
}

static dq_text *rd(const char *name, const char *s) {
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_OK(
      dq_read_buffer(name, s, strlen(s), DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
      err.msg);
  if (t)
    CHECK(text_invariants(t));
  return t;
}

/* A mailbox thread (make_mail.py's thread.mbox): each reply's quote of
 * the messages before it folded to one line under its "On ... wrote:"
 * line, a quote's quote with it; an Outlook reply's quoted message after
 * its header lines; a quote of a message the mailbox does not hold, and a
 * one-line quote a reply answers, kept. The same reply alone, as an .eml,
 * keeps its quote. */
static void test_thread(void) {
  dq_text *t = fixture("thread.mbox");
  if (t) {
    CHECK_EQ_STR(t->text,
                 "Subject: Deposit\n"
                 "From: alice@harbour.example\n"
                 "Date: Tue, 01 Dec 2026 09:30:00 +0000\n"
                 "Bob,\n"
                 "\n"
                 "We propose a deposit of EUR 15,450, payable on signing.\n"
                 "The break clause needs six months' written notice.\n"
                 "Rent is reviewed each year in line with the CPI.\n"
                 "\n"
                 "Alice\n"
                 "\n"
                 "Subject: Re: Deposit\n"
                 "From: bob@wharf.example\n"
                 "Date: Wed, 02 Dec 2026 09:30:00 +0000\n"
                 "Alice,\n"
                 "\n"
                 "Six months is too long for us; we ask for three.\n"
                 "\n"
                 "Bob\n"
                 "\n"
                 "On Tue, 1 Dec 2026 at 09:30, Alice Smith wrote:\n"
                 "[quoted: 5 lines of an earlier message]\n"
                 "\n"
                 "Subject: Re: Deposit\n"
                 "From: alice@harbour.example\n"
                 "Date: Thu, 03 Dec 2026 09:30:00 +0000\n"
                 "Agreed: three months' notice.\n"
                 "\n"
                 "On Wed, 2 Dec 2026 at 10:00, Bob Jones wrote:\n"
                 "[quoted: 9 lines of an earlier message]\n"
                 "\n"
                 "Subject: RE: Deposit\n"
                 "From: carol@harbour.example\n"
                 "Date: Fri, 04 Dec 2026 09:30:00 +0000\n"
                 "Noted, I will update the draft.\n"
                 "\n"
                 "Carol\n"
                 "\n"
                 "-----Original Message-----\n"
                 "From: Alice Smith\n"
                 "Sent: Thursday, December 3, 2026 11:00 AM\n"
                 "To: Bob Jones\n"
                 "Subject: Re: Deposit\n"
                 "[quoted: 11 lines of an earlier message]\n"
                 "Subject: Plans\n"
                 "From: dan@wharf.example\n"
                 "Date: Sat, 05 Dec 2026 09:30:00 +0000\n"
                 "Dan,\n"
                 "\n"
                 "On Mon, 30 Nov 2026, Erin Park wrote:\n"
                 "> The landlord's insurer needs the floor plans.\n"
                 "> They want them by Friday.\n"
                 "> Can you send them?\n"
                 "\n"
                 "Sent this morning.\n"
                 "\n"
                 "> Can we reduce the deposit?\n"
                 "No, it stays.\n"
                 "\n");
    CHECK(lines_are_text_lines(t));
    CHECK_EQ_INT(t->n_headings, 5);
  }
  dq_text_free(t);
  /* Bob's reply alone */
  t = rd("reply.eml", "Subject: Re: Deposit\nFrom: bob@wharf.example\n\n"
                      "Three.\n\nOn Tue, Alice wrote:\n> Bob,\n>\n"
                      "> We propose a deposit of EUR 15,450.\n"
                      "> The break clause needs six months.\n");
  if (t)
    CHECK(strstr(t->text, "> We propose a deposit of EUR 15,450.\n"
                          "> The break clause needs six months.\n") &&
          !strstr(t->text, "[quoted"));
  dq_text_free(t);
}

/* memo.msg (make_msg.py's, checked there with olefile and extract_msg):
 * an Outlook message reads as its .eml would: the headers from its
 * properties and recipients, its body, a text attachment kept in regular
 * sectors (past the mini stream's cutoff) and an attached message whose
 * subject is 8-bit text in code page 1252. */
static void test_msg(void) {
  dq_text *t = fixture("memo.msg");
  if (t) {
    CHECK_EQ_INT(t->kind, DQ_DOC_EMAIL);
    CHECK_MSG(strncmp(t->text,
                      "Subject: Lease renewal \xE2\x80\x93 Unit 4\n"
                      "From: Alice Smith <alice@harbour.example>\n"
                      "To: Bob Jones <bob@wharf.example>\n"
                      "Cc: Carol Park <carol@harbour.example>\n"
                      "Date: Tue, 01 Dec 2026 09:30:00 +0000\n"
                      "Bob,\n\n"
                      "The renewal runs for five years from 1 March 2027.\n"
                      "The rent rises to EUR 2,150 a month.\n\n"
                      "Alice\n"
                      "[attachment: renewal-terms.txt (text/plain)]\n"
                      "Clause 1. The tenant keeps the premises in repair and "
                      "insured for their full value.\n",
                      400) == 0,
              "%s", t->text);
    CHECK(strstr(t->text, "Clause 60. The tenant keeps") != NULL);
    CHECK(strstr(t->text,
                 "Subject: Caf\xC3\xA9 keys\n"
                 "From: Dan Reed <dan@wharf.example>\n"
                 "To: Alice Smith <alice@harbour.example>\n"
                 "Date: Mon, 30 Nov 2026 17:00:00 +0000\n"
                 "The keys are at the caf\xC3\xA9 on the corner.\n") != NULL);
    static const head_want want[] = {
        {1, "Lease renewal \xE2\x80\x93 Unit 4", 0, 1},
        {2, "renewal-terms.txt", 0, 12},
        {2, "Caf\xC3\xA9 keys", 0, 73}};
    CHECK_HEADINGS(t, want);
    CHECK(lines_are_text_lines(t));
  }
  dq_text_free(t);

  /* damaged copies: refused naming the file, never read out of bounds */
  char path[512];
  snprintf(path, sizeof path, "%s/tests/ingest_read/fixtures/memo.msg",
           DQ_SOURCE_DIR);
  char *buf = NULL;
  size_t n = 0;
  dq_error err = {0};
  CHECK_OK(dq_read_file(path, 1 << 20, &buf, &n, &err), err.msg);
  if (!buf)
    return;
  char *cp = malloc(n);
  /* cut short */
  memcpy(cp, buf, n);
  CHECK_EQ_INT(dq_read_buffer("memo.msg", cp, 3000, DQ_DOC_UNKNOWN, NULL, &t,
                              NULL, &err),
               DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "memo.msg") && strstr(err.msg, "Outlook"), "%s",
            err.msg);
  /* every FAT link to the next sector made a link to itself: chains loop */
  memcpy(cp, buf, n);
  uint32_t fat0;
  memcpy(&fat0, cp + 0x4C, 4);
  for (uint32_t i = 0; i < 128; i++) {
    uint32_t v;
    memcpy(&v, cp + (fat0 + 1) * 512 + 4 * i, 4);
    if (v == i + 1)
      memcpy(cp + (fat0 + 1) * 512 + 4 * i, &i, 4);
  }
  CHECK_EQ_INT(
      dq_read_buffer("memo.msg", cp, n, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
      DQ_ERR_FORMAT);
  CHECK_MSG(strstr(err.msg, "loops") != NULL, "%s", err.msg);
  /* every directory entry its own left sibling: the walk still ends */
  memcpy(cp, buf, n);
  uint32_t dir0;
  memcpy(&dir0, cp + 0x30, 4);
  for (uint32_t i = 0; i < 4; i++)
    memcpy(cp + (dir0 + 1) * 512 + 128 * i + 68, &i, 4);
  dq_status st =
      dq_read_buffer("memo.msg", cp, n, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err);
  CHECK(st == DQ_OK || st == DQ_ERR_FORMAT);
  dq_text_free(t);
  t = NULL;
  /* a sector size that is no power the format has */
  memcpy(cp, buf, n);
  cp[0x1E] = 20;
  CHECK_EQ_INT(
      dq_read_buffer("memo.msg", cp, n, DQ_DOC_UNKNOWN, NULL, &t, NULL, &err),
      DQ_ERR_FORMAT);
  free(cp);
  free(buf);
  /* a ".msg" of text (a ROS message definition) is text; of other bytes,
   * binary */
  CHECK_EQ_INT(dq_detect_kind("Pose.msg", "float64 x\nfloat64 y\n", 20, NULL),
               DQ_DOC_TEXT);
  CHECK_EQ_INT(
      dq_detect_kind("x.msg", "\x01\x02\x03\x04\x05\x06\x07\x08", 8, NULL),
      DQ_DOC_UNKNOWN);
}

static void test_built(void) {
  /* a digest: its parts are messages without a Content-Type */
  dq_text *t = rd("d.eml", "Subject: Digest\n"
                           "Content-Type: multipart/digest; boundary=b\n\n"
                           "--b\n\nSubject: One\n\nFirst.\n"
                           "--b\n\nSubject: Two\n\nSecond.\n--b--\n");
  if (t) {
    CHECK_EQ_STR(t->text, "Subject: Digest\nSubject: One\nFirst.\n"
                          "Subject: Two\nSecond.\n");
    static const head_want want[] = {
        {1, "Digest", 0, 1}, {2, "One", 0, 2}, {2, "Two", 0, 4}};
    CHECK_HEADINGS(t, want);
  }
  dq_text_free(t);
  /* a multipart cut before its closing boundary keeps its last part;
   * encoded words side by side lose the blank between them; a charset
   * iconv does not know passes (its bad bytes as U+FFFD); a Content-Type
   * without a subtype is text/plain */
  t = rd("c.eml", "Subject: =?UTF-8?B?Q2Fm?= =?ISO-8859-1?Q?=E9_au?= lait\n"
                  "Content-Type: multipart/mixed; boundary=\"x y\"\n\n"
                  "preamble\n--x y\nContent-Type: text/plain; charset=x-no\n\n"
                  "odd \xFF\n--x y\nContent-Type: text\n\nplain\n"
                  "--x y\n\nlast, cut");
  if (t)
    CHECK_EQ_STR(t->text, "Subject: Caf\xC3\xA9 au lait\n"
                          "odd \xEF\xBF\xBD\nplain\nlast, cut\n");
  dq_text_free(t);
  /* headers that end without a blank line: the body starts at the first
   * line that is no header */
  t = rd("n.eml", "Subject: Short\nFrom: x@y\nthe body\n");
  if (t)
    CHECK_EQ_STR(t->text, "Subject: Short\nFrom: x@y\nthe body\n");
  dq_text_free(t);
  /* a header not kept (Received:) folds over lines without a colon */
  t = rd("r.eml", "Received: from a (b [1.2.3.4])\n\tby c (8.9.1) id X\n"
                  "\tfor <d@e>; Thu, 22 Jul 1999 18:37:47 -0600\n"
                  "Subject: Kept\n\nDear Bob: the body.\n");
  if (t)
    CHECK_EQ_STR(t->text, "Subject: Kept\nDear Bob: the body.\n");
  dq_text_free(t);
  /* MIME nested past the limit: the rest is left out, and said so */
  char deep[4096] = "Subject: Deep\n";
  for (int i = 0; i < 12; i++)
    snprintf(deep + strlen(deep), sizeof deep - strlen(deep),
             "Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n", i, i);
  strcat(deep, "\ninner text\n");
  t = rd("deep.eml", deep);
  if (t) {
    CHECK(strstr(t->text, "inner text") == NULL);
    CHECK(strstr(t->text, "nested too deeply") != NULL);
  }
  dq_text_free(t);
}

/* A mailbox of more messages than a message may have parts
 * (MAIL_MAX_PARTS, 10,000): each message has its own budget, so the last
 * is read (the first version counted parts per file and dropped every
 * message after the 10,000th). */
static void test_many_messages(void) {
  enum { N = 10050 };
  size_t cap = (size_t)N * 96, n = 0;
  char *box = malloc(cap);
  CHECK(box != NULL);
  /* each message formatted apart: ASan's snprintf with
   * strict_string_checks looks at the whole rest of the buffer */
  for (int i = 0; box && i < N; i++) {
    char one[96];
    int w = snprintf(one, sizeof one,
                     "From a@b Mon Jan  1 00:00:00 2024\n"
                     "Subject: m%d\n\nword%dx\n\n",
                     i, i);
    memcpy(box + n, one, (size_t)w + 1);
    n += (size_t)w;
  }
  dq_text *t = box ? rd("many.mbox", box) : NULL;
  if (t) {
    CHECK(strstr(t->text, "\nword0x\n") != NULL);
    CHECK(strstr(t->text, "\nword10049x\n") != NULL);
    CHECK(strstr(t->text, "too many parts") == NULL);
    CHECK_EQ_INT((long long)t->n_headings, N);
  }
  dq_text_free(t);
  free(box);
}

typedef struct mail_watch {
  int calls;
  uint64_t done, total;
  char stage[16], unit[16];
} mail_watch;

static int stop_at_once(void *user, const char *stage, uint64_t done,
                        uint64_t total, const char *unit) {
  mail_watch *w = user;
  if (!w->calls++) {
    snprintf(w->stage, sizeof w->stage, "%s", stage);
    snprintf(w->unit, sizeof w->unit, "%s", unit);
    w->done = done;
    w->total = total;
  }
  return 1;
}

/* A mailbox over 16 MiB reports its progress in MiB (stage "read"), and
 * a non-zero answer stops the read (Ctrl-C during a large mailbox). */
static void test_progress(void) {
  size_t cap = (size_t)17 << 20, n = 0;
  char *box = malloc(cap + 1);
  CHECK(box != NULL);
  if (!box)
    return;
  for (int i = 0; n + 200 < cap; i++) { /* as in test_many_messages */
    char one[128];
    int w = snprintf(one, sizeof one,
                     "From a@b Mon Jan  1 00:00:00 2024\n"
                     "Subject: m%d\n\nthe payment of %d is due.\n\n",
                     i, i);
    memcpy(box + n, one, (size_t)w + 1);
    n += (size_t)w;
  }
  mail_watch w = {0};
  dq_read_opts o = {.progress = stop_at_once, .progress_user = &w};
  dq_text *t = NULL;
  dq_error err = {0};
  CHECK_EQ_INT(
      dq_read_buffer("big.mbox", box, n, DQ_DOC_UNKNOWN, &o, &t, NULL, &err),
      DQ_ERR_INTERRUPTED);
  CHECK(t == NULL);
  CHECK_EQ_INT(w.calls, 1);
  CHECK_EQ_STR(w.stage, "read");
  CHECK_EQ_STR(w.unit, "MiB");
  CHECK_EQ_INT(w.done, 1);
  CHECK_EQ_INT(w.total, 16);
  /* a smaller one reads without a call */
  memset(&w, 0, sizeof w);
  CHECK_OK(dq_read_buffer("small.mbox", box, (size_t)1 << 20, DQ_DOC_UNKNOWN,
                          &o, &t, NULL, &err),
           err.msg);
  CHECK_EQ_INT(w.calls, 0);
  dq_text_free(t);
  free(box);
}

static void test_detect(void) {
  CHECK_EQ_INT(dq_detect_kind("1700000000.M1.host",
                              "Return-Path: <a@b>\n"
                              "Received: by x\n",
                              33, NULL),
               DQ_DOC_EMAIL);
  CHECK_EQ_INT(dq_detect_kind("Inbox",
                              "From a@b Sat Dec  5 10:00:00 2026\n"
                              "Subject: x\n",
                              45, NULL),
               DQ_DOC_EMAIL);
  CHECK_EQ_INT(dq_detect_kind("note.eml", "hello\n", 6, NULL), DQ_DOC_EMAIL);
  /* a memo that starts as an e-mail does stays text */
  CHECK_EQ_INT(
      dq_detect_kind("memo", "From: John\nTo: Mary\n\nHi.\n", 24, NULL),
      DQ_DOC_TEXT);
  CHECK_EQ_INT(dq_detect_kind("story", "From here on we walked.\n", 24, NULL),
               DQ_DOC_TEXT);
  static const char readme[] = "From the XZ Utils README (included in the "
                               "xz-utils package):\n\n1.3. Documentation\n";
  CHECK_EQ_INT(dq_detect_kind("README.Debian", readme, sizeof readme - 1, NULL),
               DQ_DOC_TEXT);
  static const char usage[] = "From rms@gnu.org Thu Jul 22 20:37:55 1999\n"
                              "Flags: 10\nReturn-Path: rms@gnu.org\n";
  CHECK_EQ_INT(dq_detect_kind("USAGE", usage, sizeof usage - 1, NULL),
               DQ_DOC_EMAIL);
}

int main(void) {
  test_fixtures();
  test_built();
  test_thread();
  test_msg();
  test_many_messages();
  test_progress();
  test_detect();
  return TEST_EXIT();
}
