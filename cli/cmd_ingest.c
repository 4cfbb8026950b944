/*
 * cmd_ingest.c - `docqa ingest PATH...`: add folders and files to the index,
 * with a progress bar on a terminal, a summary at the end (text or --json),
 * skipped files listed under -v, and Ctrl-C that keeps every finished file.
 */
#include "cli.h"
#include "ingest.h"
#include "pipeline.h"

#include <signal.h>
#include <string.h>

static cli_option ingest_opts[] = {
    {.name = "no-embed", .has_arg = 0,
     .help = "store text, symbols and BM25 only (fast); embed later"},
    {.name = "embed-only", .has_arg = 0,
     .help = "only embed chunks stored without embeddings"},
    {.name = "hidden", .has_arg = 0,
     .help = "also walk hidden files and folders (.env, .github/, ...)"},
    {.name = "chunk-tokens", .has_arg = 1, .metavar = "N",
     .help = "token budget per chunk (default 350)"},
    {.name = "no-ocr", .has_arg = 0,
     .help = "leave scanned PDF pages and image files unread"},
    {.name = "ocr-lang", .has_arg = 1, .metavar = "LANGS",
     .help = "Tesseract languages for scans (default eng; deu+eng: both)"},
    {.name = "max-file-mb", .has_arg = 1, .metavar = "N",
     .help = "read files up to N MiB of any kind (default: 64 for\n"
             "                         text, code and markup; 512 for PDF,\n"
             "                         office files, e-books, mail, images)"},
    {0}};

/* Set by SIGINT; read between files (sig_atomic_t semantics via volatile). */
static volatile int stop_flag;
static void on_sigint(int sig) {
  (void)sig;
  stop_flag = 1;
}

static void on_skip(void *user, const char *path, const char *reason) {
  const dq_cli *cli = user;
  dq_log(&cli->log, DQ_LOG_INFO, "skipped %s: %s", path, reason);
}

static int run(dq_cli *cli, cli_option *opts) {
  int no_embed = cli_opt(opts, "no-embed") != NULL;
  int embed_only = cli_opt(opts, "embed-only") != NULL;
  if (no_embed && embed_only) {
    cli_error(cli, "--no-embed and --embed-only exclude each other");
    return DQ_EXIT_USAGE;
  }
  if (!embed_only && cli->n_args == 0) {
    cli_error(cli, "name at least one folder or file to ingest");
    return DQ_EXIT_USAGE;
  }
  char model_buf[4096];
  dq_ingest_opts o = {0};
  o.index_dir = cli->index_dir;
  o.embed_model = cli->embed_model
                      ? cli->embed_model
                      : cli_default_embed_model(model_buf, sizeof model_buf);
  o.no_embed = no_embed;
  o.embed_only = embed_only;
  o.hidden = cli_opt(opts, "hidden") != NULL;
  o.backend = cli->backend;
  o.n_threads = cli->threads;
  o.log = &cli->log;
  const char *ct = cli_opt(opts, "chunk-tokens");
  if (ct) {
    long v = cli_parse_count(cli, "chunk-tokens", ct, 16, 8192);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.max_chunk_tokens = (uint32_t)v;
  }
  dq_config cfg;
  int crc = cli_config(cli, &cfg);
  if (crc)
    return crc;
  o.no_ocr = !cfg.ingest.ocr || cli_opt(opts, "no-ocr") != NULL;
  o.max_file_bytes = (uint64_t)cfg.ingest.max_file_mb << 20;
  const char *mf = cli_opt(opts, "max-file-mb");
  if (mf) {
    long v = cli_parse_count(cli, "max-file-mb", mf, 1, 1L << 20);
    if (v < 0)
      return DQ_EXIT_USAGE;
    o.max_file_bytes = (uint64_t)v << 20;
  }
  o.ocr_lang = cli_opt(opts, "ocr-lang");
  if (o.ocr_lang && !dq_ocr_lang_ok(o.ocr_lang)) {
    cli_error(cli,
              "--ocr-lang takes Tesseract language names joined by "
              "'+' (eng, deu+eng, chi_sim), not '%s'",
              o.ocr_lang);
    return DQ_EXIT_USAGE;
  }
  cli_progress *bar = cli_progress_new(cli);
  o.progress = cli_progress_cb;
  o.progress_user = bar;
  o.on_skip = on_skip;
  o.skip_user = cli;
  o.stop = &stop_flag;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigaction(SIGINT, &sa, &old);

  dq_ingest_summary sum;
  dq_error err;
  dq_error_clear(&err);
  dq_status s = dq_ingest_run(&o, (const char *const *)cli->args,
                              (size_t)cli->n_args, &sum, &err);
  sigaction(SIGINT, &old, NULL);
  cli_progress_free(bar);
  if (s != DQ_OK && s != DQ_ERR_INTERRUPTED)
    return cli_fail(cli, &err);
  if (s == DQ_ERR_INTERRUPTED)
    cli_error(cli, "%s", dq_error_msg(&err));

  if (cli->json) {
    json_t *j = json_object();
    json_object_set_new(j, "index", json_string(cli->index_dir));
    json_object_set_new(j, "files_seen", json_integer((json_int_t)sum.files_seen));
    json_object_set_new(j, "added", json_integer((json_int_t)sum.files_added));
    json_object_set_new(j, "updated", json_integer((json_int_t)sum.files_updated));
    json_object_set_new(j, "reread", json_integer((json_int_t)sum.files_reread));
    json_object_set_new(j, "unchanged", json_integer((json_int_t)sum.files_unchanged));
    json_object_set_new(j, "removed", json_integer((json_int_t)sum.files_removed));
    json_object_set_new(j, "skipped", json_integer((json_int_t)sum.files_skipped));
    json_object_set_new(j, "failed", json_integer((json_int_t)sum.files_failed));
    json_object_set_new(j, "too_large",
                        json_integer((json_int_t)sum.files_too_large));
    json_t *kinds = json_object();
    for (int k = 1; k < DQ_DOC_KINDS; k++)
      if (sum.by_kind[k])
        json_object_set_new(kinds, dq_doc_kind_name((dq_doc_kind)k),
                            json_integer((json_int_t)sum.by_kind[k]));
    json_object_set_new(j, "by_kind", kinds);
    json_object_set_new(j, "chunks", json_integer((json_int_t)sum.n_chunks));
    json_object_set_new(j, "symbols", json_integer((json_int_t)sum.n_symbols));
    json_object_set_new(j, "refs", json_integer((json_int_t)sum.n_refs));
    json_object_set_new(j, "embedded", json_integer((json_int_t)sum.n_embedded));
    json_object_set_new(j, "bytes_read", json_integer((json_int_t)sum.bytes_read));
    json_object_set_new(j, "ocr_pages",
                        json_integer((json_int_t)sum.ocr_pages));
    json_object_set_new(j, "pages_no_text",
                        json_integer((json_int_t)sum.pages_no_text));
    json_object_set_new(j, "interrupted", json_boolean(s == DQ_ERR_INTERRUPTED));
    json_t *t = json_object();
    json_object_set_new(t, "total", json_real(sum.ms_total));
    json_object_set_new(t, "walk_read_store", json_real(sum.ms_walk_read));
    json_object_set_new(t, "embed", json_real(sum.ms_embed));
    json_object_set_new(j, "timings_ms", t);
    cli_json_print(j);
  } else if (cli->verbosity >= 0) {
    uint64_t changed = sum.files_added + sum.files_updated + sum.files_removed;
    if (!changed && !sum.n_embedded && !sum.files_failed &&
        !sum.files_too_large && s == DQ_OK && !embed_only)
      fprintf(stderr, "index %s is up to date: %llu files unchanged, "
                      "nothing to do (%.1f s)\n",
              cli->index_dir, (unsigned long long)sum.files_unchanged,
              sum.ms_total / 1e3);
    else {
      fprintf(stderr,
              "indexed into %s: %llu new, %llu updated, %llu unchanged, "
              "%llu removed, %llu skipped, %llu failed\n",
              cli->index_dir, (unsigned long long)sum.files_added,
              (unsigned long long)sum.files_updated,
              (unsigned long long)sum.files_unchanged,
              (unsigned long long)sum.files_removed,
              (unsigned long long)sum.files_skipped,
              (unsigned long long)sum.files_failed);
      if (sum.files_reread)
        fprintf(stderr,
                "  %llu of the updated files were unchanged but stored by "
                "an older docqa: read again with this one's chunker\n",
                (unsigned long long)sum.files_reread);
      char kinds[256] = "";
      for (int k = 1; k < DQ_DOC_KINDS; k++)
        if (sum.by_kind[k]) {
          size_t l = strlen(kinds);
          snprintf(kinds + l, sizeof kinds - l, "%s%s %llu", l ? ", " : "",
                   dq_doc_kind_name((dq_doc_kind)k),
                   (unsigned long long)sum.by_kind[k]);
        }
      if (kinds[0])
        fprintf(stderr, "  by kind: %s\n", kinds);
      fprintf(stderr,
              "  %llu chunks, %llu symbols, %llu references, %llu chunks "
              "embedded; %.1f s (embedding %.1f s)\n",
              (unsigned long long)sum.n_chunks,
              (unsigned long long)sum.n_symbols,
              (unsigned long long)sum.n_refs,
              (unsigned long long)sum.n_embedded, sum.ms_total / 1e3,
              sum.ms_embed / 1e3);
      if (sum.ocr_pages)
        fprintf(stderr, "  %llu pages of scans and images read by OCR\n",
                (unsigned long long)sum.ocr_pages);
      if (sum.pages_no_text)
        fprintf(stderr,
                "  %llu PDF pages without a text layer were not read (see "
                "the warnings above)\n",
                (unsigned long long)sum.pages_no_text);
      if (sum.files_too_large)
        fprintf(stderr,
                "  %llu %s over the size limit %s not read (the largest: "
                "%.0f MiB; --max-file-mb N reads %s)\n",
                (unsigned long long)sum.files_too_large,
                sum.files_too_large == 1 ? "file" : "files",
                sum.files_too_large == 1 ? "was" : "were",
                (double)sum.largest_skipped / (1 << 20),
                sum.files_too_large == 1 ? "it" : "them");
      if (sum.files_failed)
        fprintf(stderr, "  %llu files could not be read (see the warnings "
                        "above; -v lists skipped files)\n",
                (unsigned long long)sum.files_failed);
    }
  }
  if (s == DQ_ERR_INTERRUPTED)
    return DQ_EXIT_ERROR;
  return sum.files_failed ? DQ_EXIT_PARTIAL : DQ_EXIT_OK;
}

cli_command cli_cmd_ingest = {
    .name = "ingest",
    .usage = "docqa ingest PATH... [--no-embed | --embed-only] [--hidden] "
             "[--no-ocr] [--max-file-mb N]",
    .summary = "add folders and files to the index (incremental)",
    .help =
        "Walks each PATH (honouring .gitignore and .docqaignore), reads text,\n"
        "Markdown, HTML/XML, DOCX, Word 97-2003 (.doc), ODT, RTF, PowerPoint\n"
        "(.pptx), LibreOffice Impress (.odp), Excel (.xlsx, .xls), LibreOffice\n"
        "Calc (.ods), EPUB, PDF, e-mail\n"
        "(.eml, .mbox, Outlook's .msg) and source code, cuts chunks with\n"
        "section paths (a spreadsheet's or a CSV's chunks also name the\n"
        "table's columns), extracts symbols and references, and stores them\n"
        "in the index, one transaction per file.\n"
        "Unchanged files are skipped; files deleted from a folder are "
        "removed.\n"
        "Hidden files and folders (a name starting with a dot: .env, "
        ".github/,\n"
        ".idea/) are skipped unless named as a PATH or --hidden is given;\n"
        ".git/, node_modules/, build/ and the like always are; -v lists what\n"
        "was skipped and why. A PATH inside a folder ingested before joins it\n"
        "(paths from that folder, its ignore files applying); a folder that\n"
        "holds one ingested before takes its documents over: no file is "
        "indexed\n"
        "twice.\n"
        "Then every new chunk is embedded with the embedding model (skip\n"
        "with --no-embed: BM25 search and xref work at once; embed later\n"
        "with --embed-only).\n"
        "PDF pages without a text layer (scans) and image files (PNG, JPEG,\n"
        "TIFF) are read by OCR when Tesseract is installed (Debian:\n"
        "tesseract-ocr-eng; another language: tesseract-ocr-LANG and\n"
        "--ocr-lang), on --threads cores; a page lying sideways or upside\n"
        "down is turned upright when its orientation data is installed\n"
        "(tesseract-ocr-osd; 'docqa version' says). --no-ocr or\n"
        "'--set ingest.ocr=false' leaves them unread. A file with pages left\n"
        "unread is read again by the next ingest.\n"
        "A file is read whole into memory: files over 64 MiB (text, code,\n"
        "markup) or 512 MiB (PDF, office files, e-books, mail, images) are\n"
        "skipped with a warning; --max-file-mb N or '--set\n"
        "ingest.max_file_mb=N' sets one limit for all (a .docqaignore line\n"
        "silences the warning for a file you do not want read).\n"
        "Exit code 3 means some files could not be read (listed as warnings).\n"
        "\nExamples:\n"
        "  docqa ingest ~/contracts\n"
        "  docqa ingest --no-embed ~/src/linux --index ~/idx/linux\n"
        "  docqa ingest --ocr-lang deu+eng ~/scans\n",
    .opts = ingest_opts,
    .min_args = 0,
    .max_args = -1,
    .run = run};
