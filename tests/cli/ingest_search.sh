#!/usr/bin/env bash
# ingest_search.sh - the ingest -> index -> search/xref path end to end on a
# copy of samples/, without models (--no-embed): counts by kind, incremental
# behaviour (unchanged, touched, edited, deleted files; documents an older
# chunker stored read again), retrieval of a gold
# passage from samples/questions.txt, xref of code symbols and contract terms,
# paths in an index of several roots (shown behind the root's name, taken
# so by --path and by a question naming a file), folders inside a root
# ingested before (one root, not two copies), xref's marks on files
# changed since ingest, and the errors users see for missing indexes and
# models.
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
SRC=${DQ_SOURCE_DIR:?set DQ_SOURCE_DIR}
fail=0; n=0
ok() { n=$((n+1)); if [ "$1" != 0 ]; then echo "FAIL: $2"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r "$SRC/samples" "$tmp/s"
IDX="$tmp/idx"
# json FILE PYTHON-EXPR: evaluates EXPR with d = the parsed JSON; exit 0 if true
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/j1" 2>"$tmp/e1"; rc=$?
ok $rc "first ingest exits 0 (stderr: $(head -c 300 "$tmp/e1"))"
json "$tmp/j1" "d['added'] >= 25 and d['failed'] == 0 and d['updated'] == 0"; ok $? "first ingest adds every sample, none failed: $(cat "$tmp/j1")"
json "$tmp/j1" "all(d['by_kind'].get(k,0) >= 1 for k in ('text','markdown','html','docx','pdf','code'))"; ok $? "every reader kind is represented"
json "$tmp/j1" "d['chunks'] > 50 and d['symbols'] > 100 and d['refs'] > 500"; ok $? "chunks, symbols and refs were written"

"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/j2" 2>/dev/null; rc=$?
ok $rc "second ingest exits 0"
json "$tmp/j2" "d['added'] == 0 and d['updated'] == 0 and d['removed'] == 0 and d['chunks'] == 0"; ok $? "second ingest does no work: $(cat "$tmp/j2")"
"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed 2>"$tmp/e2" >/dev/null
grep -q "up to date" "$tmp/e2"; ok $? "second ingest says the index is up to date"

# Documents an older chunker stored (parts below DQ_CHUNK_VERSION; 0 in an
# index from before versions) are read again though unchanged, once.
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE documents SET parts = 0 WHERE path LIKE \'contracts/%\''); c.commit()" "$IDX/docqa.db"
"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/jv" 2>/dev/null
json "$tmp/jv" "d['added'] == 0 and d['updated'] == d['reread'] == $(ls "$tmp/s/contracts" | wc -l) and d['unchanged'] > 0 and d['chunks'] > 0"; ok $? "documents of an older chunker are read again: $(cat "$tmp/jv")"
"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/jv2" 2>/dev/null
json "$tmp/jv2" "d['updated'] == 0 and d['reread'] == 0"; ok $? "and only once: $(cat "$tmp/jv2")"

# A bump that changed one kind's reading reads that kind again, not every
# document (nor every scan by OCR): version 8 changed e-mail alone.
mkdir -p "$tmp/v7" && cp "$SRC/tests/ingest_read/fixtures/thread.mbox" "$tmp/v7/" && echo "a note" >"$tmp/v7/note.txt"
"$DOCQA" ingest "$tmp/v7" --index "$tmp/idx_v7" --no-embed >/dev/null 2>&1
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE documents SET parts = 7'); c.commit()" "$tmp/idx_v7/docqa.db"
"$DOCQA" ingest "$tmp/v7" --index "$tmp/idx_v7" --no-embed --json >"$tmp/jv3" 2>/dev/null
json "$tmp/jv3" "d['reread'] == 1 and d['updated'] == 1 and d['unchanged'] == 1"; ok $? "version 7's mailbox is read again, its text file not: $(cat "$tmp/jv3")"
# version 10 read DOCX and ODT again (their headers and footers) alone
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('UPDATE documents SET parts = 9'); c.commit()" "$IDX/docqa.db"
"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/jv4" 2>/dev/null
json "$tmp/jv4" "d['reread'] == 1 and d['updated'] == 1"; ok $? "version 9's DOCX is read again, nothing else: $(cat "$tmp/jv4")"

# touch (same content), edit, delete
touch -d '2001-01-01' "$tmp/s/repo/src/money.c"
printf '\nfn_added_for_test_xyz();\n' >> "$tmp/s/contracts/master_services_agreement.txt"
printf 'int fresh_symbol_for_test(void) { return 1; }\n' > "$tmp/s/repo/src/fresh.c"
rm "$tmp/s/repo/src/report.c"
"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed --json >"$tmp/j3" 2>/dev/null
json "$tmp/j3" "d['added'] == 1 and d['updated'] == 1 and d['removed'] == 1"; ok $? "edit/add/delete detected, touch is not a change: $(cat "$tmp/j3")"
"$DOCQA" xref fresh_symbol_for_test --index "$IDX" --json >"$tmp/x0" 2>/dev/null
json "$tmp/x0" "d['definitions'][0]['path'] == 'repo/src/fresh.c' and d['definitions'][0]['line'] == 1"; ok $? "new file's symbol is found"
"$DOCQA" search "report_print" --index "$IDX" --json --k 50 >"$tmp/s0" 2>/dev/null
json "$tmp/s0" "all(r['path'] != 'repo/src/report.c' for r in d['results'])"; ok $? "deleted file is gone from search"

# retrieval of a gold passage (questions.txt: DPA breach notice, lines 128-130)
"$DOCQA" search "Within how many hours must the Processor notify the Controller of a Personal Data Breach" --index "$IDX" --json --k 3 >"$tmp/s1" 2>/dev/null; rc=$?
ok $rc "search exits 0"
json "$tmp/s1" "d['mode'] == 'bm25' and any(r['path'] == 'contracts/data_processing_addendum.html' and r['line_start'] <= 128 and r['line_end'] >= 130 for r in d['results'])"; ok $? "gold passage in the top 3: $(head -c 400 "$tmp/s1")"
json "$tmp/s1" "all(k in d['results'][0] for k in ('path','line_start','line_end','section','text','score','bm25_rank','dense_rank'))"; ok $? "search JSON has the DESIGN.md fields"
# Each result carries its signals' scores (here BM25's; no vectors), and
# the search's weight of BM25 against vectors is checked like any key.
"$DOCQA" search "Within how many hours must the Processor notify the Controller of a Personal Data Breach" --index "$IDX" --json --k 10 --no-symbols --set search.lexical_weight=1 >"$tmp/sw" 2>/dev/null
json "$tmp/sw" "(s := [(x['bm25_rank'], x['bm25_score']) for x in d['results']]) and len(s) > 1 and all(r for r, _ in s) and s == sorted(s) and [v for _, v in s] == sorted((v for _, v in s), reverse=True) and all(x['dense_score'] is None for x in d['results'])"; ok $? "results carry BM25 scores in BM25's order"
"$DOCQA" search "notice" --index "$IDX" --set search.lexical_weight=0 >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -eq 2 ] && grep -q "search.lexical_weight: 0 is out of range" "$tmp/e"; ok $? "a lexical weight of 0 exits 2 naming the key: $(cat "$tmp/e")"
"$DOCQA" search "six months written notice break clause" --index "$IDX" --json --k 5 >"$tmp/s2" 2>/dev/null
json "$tmp/s2" "any(r['path'] == 'contracts/commercial_lease.pdf' and r['page'] == 4 for r in d['results'])"; ok $? "PDF passage cited by page"

# the symbols signal: the caller's chunk first, saying what it holds; off
# with --no-symbols
"$DOCQA" search "Which functions call tax_compute_line?" --index "$IDX" --json --k 3 >"$tmp/s3" 2>/dev/null
json "$tmp/s3" "(d['results'][0]['path'], d['results'][0]['symbol'], d['results'][0]['symbol_kind'], d['results'][0]['symbol_where']) == ('repo/src/invoice.c', 'tax_compute_line', 'call', 'invoice_compute_totals') and d['results'][0]['symbol_line'] == 103 and d['results'][0]['line_start'] <= 103 <= d['results'][0]['line_end']"; ok $? "who calls tax_compute_line: invoice_compute_totals's chunk first, the call's line: $(head -c 300 "$tmp/s3")"
"$DOCQA" search "Which functions call tax_compute_line?" --index "$IDX" --k 1 2>/dev/null | grep -q "symbol #1 tax_compute_line: call in invoice_compute_totals"; ok $? "search's text output says why"
"$DOCQA" search "Which functions call tax_compute_line?" --index "$IDX" --json --k 3 --no-symbols >"$tmp/s4" 2>/dev/null
json "$tmp/s4" "all(r['symbol_rank'] is None and r['symbol'] is None for r in d['results'])"; ok $? "--no-symbols: BM25 alone"
"$DOCQA" search "How does the mutual NDA define Derived Materials?" --index "$IDX" --json --k 1 >"$tmp/s5" 2>/dev/null
json "$tmp/s5" "d['results'][0]['path'] == 'contracts/mutual_nda.md' and d['results'][0]['line_start'] <= 41 <= d['results'][0]['line_end'] and d['results'][0]['symbol_kind'] == 'term'"; ok $? "a term's definition when its meaning is asked: $(head -c 300 "$tmp/s5")"

# xref: code and contracts
"$DOCQA" xref tax_compute_line --index "$IDX" --json >"$tmp/x1" 2>/dev/null; rc=$?
ok $rc "xref of a known symbol exits 0"
json "$tmp/x1" "any(x['path'] == 'repo/src/tax.c' and x['line'] == 51 for x in d['definitions'])"; ok $? "definition of tax_compute_line at repo/src/tax.c:51"
json "$tmp/x1" "any(x['path'] == 'repo/src/invoice.c' and x['kind'] == 'call' and x['caller'] == 'invoice_compute_totals' for x in d['references'])"; ok $? "call from invoice_compute_totals"
# comments and strings must not produce references (src/invoice.c line 5 names it in a comment)
json "$tmp/x1" "not any(x['path'] == 'repo/src/invoice.c' and x['line'] == 5 for x in d['references'])"; ok $? "a comment mentioning the name is not a reference"
# variables, fields and enumerators are definitions too, with their scope
"$DOCQA" xref LL_ERR_NOMEM --index "$IDX" --json >"$tmp/x4" 2>/dev/null
json "$tmp/x4" "[(x['path'], x['line'], x['kind'], x['scope']) for x in d['definitions']] == [('repo/include/status.h', 12, 'enumerator', 'll_status')] and any(x['caller'] == 'grow_lines' for x in d['references'])"; ok $? "enumerator LL_ERR_NOMEM defined in ll_status and used in grow_lines: $(head -c 300 "$tmp/x4")"
"$DOCQA" xref line_count --kind def --index "$IDX" >"$tmp/x5" 2>/dev/null
grep -q '^repo/include/invoice.h:60:[0-9]*: field in invoice: ' "$tmp/x5"; ok $? "struct member line_count is a field in invoice: $(head -c 300 "$tmp/x5")"
# a qualified lookup: the member of one struct, not every use of the name
# (net is a member of four C structs and of three Python classes)
"$DOCQA" xref invoice_line.net --index "$IDX" --json >"$tmp/x6" 2>"$tmp/x6e"
json "$tmp/x6" "d['owner'] == 'invoice_line' and [(x['path'], x['line']) for x in d['definitions']] == [('repo/include/invoice.h', 36)] and [(x['path'], x['line'], x['owner_known']) for x in d['references']] == [('repo/src/invoice.c', 102, True), ('repo/src/invoice.c', 103, True)] and d['other_owner_uses'] >= 20"; ok $? "xref invoice_line.net: the two uses through a struct invoice_line pointer (report.c, the third, was deleted above): $(head -c 400 "$tmp/x6")"
grep -q "2 uses of net in invoice_line shown by their site" "$tmp/x6e"; ok $? "qualified xref says how many uses it told apart: $(cat "$tmp/x6e")"
"$DOCQA" xref ledger.net --index "$IDX" >"$tmp/o" 2>"$tmp/x7"; rc=$?
[ $rc -eq 1 ] && grep -q "no definition of net in ledger.*invoice_line.net" "$tmp/x7"; ok $? "an owner without the member exits 1 naming the owners that have it: $(cat "$tmp/x7")"
"$DOCQA" xref "Personal Data Breach" --index "$IDX" --json >"$tmp/x2" 2>/dev/null
json "$tmp/x2" "any(x['kind'] == 'term' for x in d['definitions']) and len(d['references']) >= 2"; ok $? "contract defined term and its uses"
# a PDF's lines count within their page: xref gives the page (the lease
# defines "Term" on page 2's first line)
"$DOCQA" xref Term --kind def --index "$IDX" --json >"$tmp/xp" 2>/dev/null
json "$tmp/xp" "[(x['page'], x['line']) for x in d['definitions'] if x['path'] == 'contracts/commercial_lease.pdf'] == [(2, 1)] and all(x['page'] is None for x in d['definitions'] if not x['path'].endswith('.pdf'))"; ok $? "xref gives a PDF definition's page: $(head -c 400 "$tmp/xp")"
"$DOCQA" xref Term --kind def --index "$IDX" >"$tmp/xp2" 2>/dev/null
grep -q "^contracts/commercial_lease.pdf p.2:1:2: term" "$tmp/xp2"; ok $? "and prints it: $(cat "$tmp/xp2")"
# with the line as the PDF's and the DOCX's readers extract it
grep -qF 'contracts/commercial_lease.pdf p.2:1:2: term in 1.1: "Term" means the term of this Lease set out in the Particulars.' "$tmp/xp2" &&
  grep -q '^contracts/software_licence_agreement.docx:41:[0-9]*: term in 9.1: .*(together, the "Term")' "$tmp/xp2"; ok $? "a PDF's and a DOCX's definitions show their lines: $(cat "$tmp/xp2")"
json "$tmp/xp" "[x['text'] for x in d['definitions'] if x['path'].endswith('.pdf')] == ['\"Term\" means the term of this Lease set out in the Particulars.']"; ok $? "--json: each site's line as text: $(head -c 600 "$tmp/xp")"
"$DOCQA" xref Term --kind ref --index "$IDX" >"$tmp/xp3" 2>/dev/null
grep -q '^contracts/commercial_lease.pdf p.1:12:[0-9]*: use: Ten (10) years from and including the Term Commencement Date.$' "$tmp/xp3"; ok $? "a PDF use on page 1 shows page 1's line 12: $(head -c 600 "$tmp/xp3")"
"$DOCQA" xref tax_compute --index "$IDX" >"$tmp/o" 2>"$tmp/x3"; rc=$?
[ $rc -eq 1 ]; ok $? "unknown symbol exits 1"
grep -q "did you mean: .*tax_compute_line" "$tmp/x3"; ok $? "unknown symbol suggests a close name"

# a minified file (one line of 1.2 MB): xref shows each site's line cut
# around it, not the whole line per site (which was 1.2 MB x 5,000 here)
mkdir -p "$tmp/min"
python3 -c "import sys; open(sys.argv[1], 'w').write(';'.join('function f%d(a){return g%d(a)+%d}' % (i, i % 7, i) for i in range(35000)))" "$tmp/min/app.min.js"
"$DOCQA" ingest "$tmp/min" --index "$tmp/idx-min" --no-embed >/dev/null 2>&1
"$DOCQA" xref g3 --kind call --index "$tmp/idx-min" >"$tmp/xm" 2>"$tmp/e"; rc=$?
ok $rc "xref in a minified file exits 0 ($(head -c 200 "$tmp/e"))"
[ "$(wc -l <"$tmp/xm")" -eq 5000 ]; ok $? "every call site of g3 listed: $(wc -l <"$tmp/xm") lines"
awk 'length($0) > 400 || !/g3\(a\)/ { bad = 1 } END { exit bad }' "$tmp/xm"; ok $? "each site's line is cut to a window that holds the call: $(head -c 300 "$tmp/xm")"
grep -q '^app.min.js:1:[0-9]*: call in f10: \.\.\..*function f10(a){return g3(a)+10}.*\.\.\.$' "$tmp/xm"; ok $? "a window marked as cut on both sides"

# hidden files and folders: skipped (reported under -v) unless --hidden;
# once taken, a run without --hidden removes them again
mkdir -p "$tmp/h/.pc/p" "$tmp/h/src"
printf 'int hidden_copy_xyz(void) { return 0; }\n' >"$tmp/h/.pc/p/a.c"
printf 'int hidden_copy_xyz(void) { return 1; }\n' >"$tmp/h/src/a.c"
printf 'API_KEY=secret_token_xyz\n' >"$tmp/h/.env"
"$DOCQA" ingest "$tmp/h" --index "$tmp/idx-h" --no-embed --json -v >"$tmp/jh" 2>"$tmp/e"
json "$tmp/jh" "d['added'] == 1 and d['skipped'] == 2"; ok $? "hidden file and folder skipped: $(cat "$tmp/jh")"
grep -q "skipped .pc: hidden folder (--hidden takes it)" "$tmp/e" && grep -q "skipped .env: hidden file" "$tmp/e"; ok $? "-v says why: $(head -c 300 "$tmp/e")"
"$DOCQA" xref hidden_copy_xyz --index "$tmp/idx-h" --json >"$tmp/xh" 2>/dev/null
json "$tmp/xh" "[x['path'] for x in d['definitions']] == ['src/a.c']"; ok $? "one definition, not the backup's: $(head -c 300 "$tmp/xh")"
"$DOCQA" ingest "$tmp/h" --index "$tmp/idx-h" --no-embed --hidden --json >"$tmp/jh" 2>/dev/null
json "$tmp/jh" "d['added'] == 2 and d['skipped'] == 0"; ok $? "--hidden takes them: $(cat "$tmp/jh")"
"$DOCQA" search secret_token_xyz --index "$tmp/idx-h" --json >"$tmp/sh" 2>/dev/null
json "$tmp/sh" "any(r['path'] == '.env' for r in d['results'])"; ok $? ".env searchable with --hidden"
"$DOCQA" ingest "$tmp/h" --index "$tmp/idx-h" --no-embed --json >"$tmp/jh" 2>/dev/null
json "$tmp/jh" "d['removed'] == 2"; ok $? "without --hidden again they leave the index: $(cat "$tmp/jh")"
"$DOCQA" ingest "$tmp/h/.env" --index "$tmp/idx-h" --no-embed --json >"$tmp/jh" 2>/dev/null
json "$tmp/jh" "d['added'] == 1"; ok $? "a hidden file named as the path is taken: $(cat "$tmp/jh")"

# several roots: a path is shown behind its root's last folder name where
# another root holds a document of the same name; JSON keeps the stored
# path and the root; --path takes either form
mkdir -p "$tmp/r/acme" "$tmp/r/beta/lib"
printf 'int settle_claim_xyz(void) { return 1; }\n' >"$tmp/r/acme/claim.c"
printf 'int settle_claim_xyz(void) { return 2; }\n' >"$tmp/r/beta/claim.c"
printf 'void settle_all_xyz(void) { settle_claim_xyz(); }\n' >"$tmp/r/beta/lib/all.c"
"$DOCQA" ingest "$tmp/r/acme" --index "$tmp/idx-r" --no-embed -q
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" >"$tmp/o" 2>/dev/null
grep -q '^1\. claim\.c:1-1' "$tmp/o"; ok $? "one root: the path as stored: $(head -c 200 "$tmp/o")"
"$DOCQA" ingest "$tmp/r/beta" --index "$tmp/idx-r" --no-embed -q
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" >"$tmp/o" 2>/dev/null
grep -q '^[0-9]\. acme/claim\.c:1-1' "$tmp/o" && grep -q '^[0-9]\. beta/claim\.c:1-1' "$tmp/o" && grep -q '^[0-9]\. beta/lib/all\.c:1-1' "$tmp/o"; ok $? "two roots: each path behind its root's name: $(head -c 300 "$tmp/o")"
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "sorted((r['path'], r['root'][-4:]) for r in d['results']) == [('claim.c', 'acme'), ('claim.c', 'beta'), ('lib/all.c', 'beta')]"; ok $? "search JSON: stored paths and roots: $(head -c 300 "$tmp/o")"
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" --path beta/claim.c --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "[(r['path'], r['root'][-4:]) for r in d['results']] == [('claim.c', 'beta')]"; ok $? "--path takes the path as shown: $(head -c 300 "$tmp/o")"
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" --path claim.c --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "len(d['results']) == 2"; ok $? "--path as stored matches in both roots"
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" --path gamma/ >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q -- "--path gamma/: no document in the index is at or under it" "$tmp/e"; ok $? "a --path that names no document fails naming it: $(cat "$tmp/e")"
"$DOCQA" search no_such_word_xyz --index "$tmp/idx-r" --path beta/ >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q 'no results' "$tmp/o"; ok $? "one that names documents without a match: no results, exit 0"
"$DOCQA" search "what does beta/claim.c do" --index "$tmp/idx-r" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "(r := d['results'][0]) and (r['path'], r['root'][-4:], r['symbol'], r['symbol_kind']) == ('claim.c', 'beta', 'beta/claim.c', 'file') and all(x['root'][-4:] == 'beta' for x in d['results'] if x['symbol_kind'] == 'file')"; ok $? "a question naming a file as shown ranks that root's file: $(head -c 300 "$tmp/o")"
"$DOCQA" search "what does ./lib/all.c do" --index "$tmp/idx-r" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "(r := d['results'][0]) and (r['path'], r['symbol']) == ('lib/all.c', 'lib/all.c')"; ok $? "a file named with its folders ranks first: $(head -c 300 "$tmp/o")"
"$DOCQA" search "what does /elsewhere/lib/all.c do" --index "$tmp/idx-r" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "(r := d['results'][0]) and (r['path'], r['symbol']) == ('lib/all.c', 'all.c')"; ok $? "folders that match no path: the file's name alone: $(head -c 300 "$tmp/o")"
"$DOCQA" xref settle_claim_xyz --index "$tmp/idx-r" >"$tmp/o" 2>/dev/null
grep -q '^acme/claim\.c:1:5: function' "$tmp/o" && grep -q '^beta/claim\.c:1:5: function' "$tmp/o" && grep -q '^beta/lib/all\.c:1:[0-9]*: call in settle_all_xyz' "$tmp/o"; ok $? "xref: definitions and calls behind their roots' names: $(cat "$tmp/o")"
"$DOCQA" xref settle_claim_xyz --index "$tmp/idx-r" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "[(x['path'], x['root'][-4:]) for x in d['definitions']] == [('claim.c', 'acme'), ('claim.c', 'beta')]"; ok $? "xref JSON: stored paths and roots"
json "$tmp/o" "d['stale_files'] == [] and not any(x['stale'] for x in d['definitions'] + d['references'])"; ok $? "nothing changed since ingest: nothing stale"
# files changed or gone since ingest: their hits are marked (the lines
# xref reads may have moved), a touched file is not changed
printf '\n\nint moved_down_xyz;\n' | cat - "$tmp/r/beta/claim.c" >"$tmp/c" && mv "$tmp/c" "$tmp/r/beta/claim.c"
rm "$tmp/r/beta/lib/all.c"
touch -d '2001-01-01' "$tmp/r/acme/claim.c"
"$DOCQA" xref settle_claim_xyz --index "$tmp/idx-r" >"$tmp/o" 2>"$tmp/e"
grep -q '^beta/claim\.c:1:5: function (file changed since ingest)' "$tmp/o" && grep -q '^acme/claim\.c:1:5: function: ' "$tmp/o" && grep -q '^beta/lib/all\.c:1:[0-9]*: call in settle_all_xyz (file changed since ingest)' "$tmp/o"; ok $? "hits in changed or deleted files are marked, a touched one is not: $(cat "$tmp/o")"
grep -q "warning: 2 files changed since they were ingested.*beta/claim.c, beta/lib/all.c; 'docqa ingest' again updates the index" "$tmp/e"; ok $? "a warning names them and the fix: $(cat "$tmp/e")"
"$DOCQA" xref settle_claim_xyz --index "$tmp/idx-r" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "d['stale_files'] == ['beta/claim.c', 'beta/lib/all.c'] and [x['stale'] for x in d['definitions']] == [False, True]"; ok $? "xref JSON: stale_files and each hit's stale: $(head -c 400 "$tmp/o")"
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "sorted((r['root'][-4:] + '/' + r['path'], r['stale']) for r in d['results']) == [('acme/claim.c', False), ('beta/claim.c', True), ('beta/lib/all.c', True)]"; ok $? "search marks results of changed files: $(head -c 300 "$tmp/o")"
"$DOCQA" search settle_claim_xyz --index "$tmp/idx-r" >"$tmp/o" 2>/dev/null
grep -q '^[0-9]\. beta/claim\.c:1-1 .*\]  (file changed since ingest)$' "$tmp/o" && ! grep -q '^[0-9]\. acme/claim\.c.*changed' "$tmp/o"; ok $? "and says so in text: $(head -c 300 "$tmp/o")"

# a folder or file inside a root ingested before is part of that root (no
# second copy of its files), its ignore files apply, and deletions under
# it (only there) are removed; a folder that holds a root ingested before
# takes that root's documents over
mkdir -p "$tmp/ov/sub" "$tmp/ov/other"
printf 'alpha_xyz beta\n' >"$tmp/ov/sub/a.txt"
printf 'alpha_xyz gamma\n' >"$tmp/ov/other/b.txt"
printf '*.log\n' >"$tmp/ov/.gitignore"
printf 'alpha_xyz log\n' >"$tmp/ov/sub/x.log"
O="$tmp/idx-ov"
"$DOCQA" ingest "$tmp/ov" --index "$O" --no-embed -q
"$DOCQA" ingest "$tmp/ov/sub" --index "$O" --no-embed --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "d['added'] == 0 and d['unchanged'] == 1 and d['removed'] == 0"; ok $? "a subfolder of a root: nothing new, the root's .gitignore applies: $(cat "$tmp/o")"
printf 'alpha_xyz new\n' >"$tmp/ov/sub/n.txt"
rm "$tmp/ov/sub/a.txt" "$tmp/ov/other/b.txt"
"$DOCQA" ingest "$tmp/ov/sub" --index "$O" --no-embed --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "d['added'] == 1 and d['removed'] == 1"; ok $? "its new file is added, its deleted one removed: $(cat "$tmp/o")"
"$DOCQA" status --index "$O" --docs --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "len(d['roots']) == 1 and sorted(x['path'] for x in d['docs']) == ['other/b.txt', 'sub/n.txt']"; ok $? "one root, paths from it; other/ (deleted on disk) untouched: $(head -c 300 "$tmp/o")"
printf 'alpha_xyz named\n' >"$tmp/ov/other/c.txt"
"$DOCQA" ingest "$tmp/ov/other/c.txt" --index "$O" --no-embed -q
"$DOCQA" status --index "$O" --docs --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "len(d['roots']) == 1 and 'other/c.txt' in [x['path'] for x in d['docs']]"; ok $? "a file named inside the root joins it: $(head -c 300 "$tmp/o")"
O2="$tmp/idx-ov2"
"$DOCQA" ingest "$tmp/ov/sub" --index "$O2" --no-embed -q
"$DOCQA" ingest "$tmp/ov" --index "$O2" --no-embed --json >"$tmp/o" 2>/dev/null
"$DOCQA" status --index "$O2" --docs --json >"$tmp/so" 2>/dev/null
json "$tmp/so" "[r['root'][-3:] for r in d['roots']] == ['/ov'] and sorted(x['path'] for x in d['docs']) == ['other/c.txt', 'sub/n.txt']"; ok $? "the outer folder takes the inner root over (its x.log now ignored): $(head -c 300 "$tmp/so")"
"$DOCQA" search alpha_xyz --index "$O2" --json >"$tmp/o" 2>/dev/null
json "$tmp/o" "sorted(r['path'] for r in d['results']) == ['other/c.txt', 'sub/n.txt']"; ok $? "each file found once: $(head -c 300 "$tmp/o")"

# errors users see
"$DOCQA" search "anything" --index "$tmp/none" >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -ne 0 ] && grep -q "$tmp/none" "$tmp/e"; ok $? "search on a missing index names it"
mkdir -p "$tmp/nothing"
"$DOCQA" ingest "$tmp/nothing" --index "$tmp/idx-empty" -q 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ]; ok $? "an empty folder ingests (exit 0, no leak under ASan): $rc $(head -c 600 "$tmp/e")"
"$DOCQA" search "anything" --index "$tmp/idx-empty" >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "idx-empty holds no documents yet: add some with 'docqa ingest PATH --index" "$tmp/e"; ok $? "search on an empty index says how to fill it: $(cat "$tmp/e")"
"$DOCQA" ask "anything" --index "$IDX" --model "$tmp/missing.gguf" >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -ne 0 ] && grep -q "missing.gguf" "$tmp/e" && grep -q "fetch-models" "$tmp/e"; ok $? "ask with a missing model names it and says how to fetch"
"$DOCQA" ask "   " --index "$IDX" >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -ne 0 ]; ok $? "empty question fails"
"$DOCQA" ingest "$tmp/s" --index "$IDX" --embed-model "$tmp/missing.gguf" >"$tmp/o" 2>"$tmp/e"; rc=$?
[ $rc -ne 0 ] && grep -q "missing.gguf" "$tmp/e"; ok $? "ingest with a missing embedding model names it"
# one writer at a time: a held lock makes a second ingest fail cleanly
if command -v flock >/dev/null; then
  flock "$IDX/ingest.lock" -c "\"$DOCQA\" ingest \"$tmp/s\" --index \"$IDX\" --no-embed >\"$tmp/o\" 2>\"$tmp/e\""; rc=$?
  [ $rc -ne 0 ] && grep -q "another 'docqa ingest'" "$tmp/e"; ok $? "concurrent ingest refused: $(cat "$tmp/e")"
fi
# an OpenDocument text (LibreOffice's, tests/ingest_read/fixtures): counted
# by kind, its outline numbers are clause symbols, xref shows its lines
mkdir -p "$tmp/odt" && cp "$SRC/tests/ingest_read/fixtures/outline.odt" "$tmp/odt/"
"$DOCQA" ingest "$tmp/odt" --index "$tmp/idx_odt" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
ok $rc "ODT ingest exits 0: $(head -c 300 "$tmp/e")"
json "$tmp/jo" "d['by_kind'] == {'odt': 1} and d['failed'] == 0"; ok $? "an ODT counts as odt: $(cat "$tmp/jo")"
"$DOCQA" xref 2.1 --index "$tmp/idx_odt" >"$tmp/xo" 2>&1
grep -q '^outline.odt:6:1: section in 2 Licence: 2.1 Grant$' "$tmp/xo"; ok $? "an ODT's numbered heading is a section, shown with its line: $(cat "$tmp/xo")"
# an EPUB (pandoc's): counted by kind, found by its footnote's words,
# cited by the extracted text's lines under its chapter's section
mkdir -p "$tmp/epub" && cp "$SRC/tests/ingest_read/fixtures/handbook.epub" "$tmp/epub/"
"$DOCQA" ingest "$tmp/epub" --index "$tmp/idx_epub" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
ok $rc "EPUB ingest exits 0: $(head -c 300 "$tmp/e")"
json "$tmp/jo" "d['by_kind'] == {'epub': 1} and d['failed'] == 0"; ok $? "an EPUB counts as epub: $(cat "$tmp/jo")"
"$DOCQA" search "first working day of the month" --index "$tmp/idx_epub" --json --k 1 >"$tmp/se" 2>/dev/null
json "$tmp/se" "(r := d['results'][0])['path'] == 'handbook.epub' and r['line_start'] <= 13 <= r['line_end'] and r['section'] == 'Rent and Deposits > Deposits' and '[1] Rent is due' in r['text']"; ok $? "an EPUB's passage, its lines and section: $(head -c 400 "$tmp/se")"
# a mailbox (Python's mailbox package wrote it): each message a section
# named by its subject
mkdir -p "$tmp/mail" && cp "$SRC/tests/ingest_read/fixtures/matter.mbox" "$SRC/tests/ingest_read/fixtures/lease_thread.eml" "$tmp/mail/"
"$DOCQA" ingest "$tmp/mail" --index "$tmp/idx_mail" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
ok $rc "e-mail ingest exits 0: $(head -c 300 "$tmp/e")"
json "$tmp/jo" "d['by_kind'] == {'email': 2} and d['failed'] == 0"; ok $? "a mailbox and a message count as email: $(cat "$tmp/jo")"
"$DOCQA" search "all drafts go to Carol" --index "$tmp/idx_mail" --json --k 1 >"$tmp/sm" 2>/dev/null
json "$tmp/sm" "(r := d['results'][0])['path'] == 'matter.mbox' and r['section'] == 'Minutes' and r['line_start'] <= 16 <= r['line_end']"; ok $? "a message found by its body, its subject the section: $(head -c 400 "$tmp/sm")"
# an attached DOCX's clause, under its message and its attachment (a mail
# is chunked by its messages, never as a contract)
"$DOCQA" search "Licensor grants the Licensee a licence" --index "$tmp/idx_mail" --json --k 1 >"$tmp/sm" 2>/dev/null
json "$tmp/sm" "(r := d['results'][0])['path'] == 'lease_thread.eml' and r['section'].endswith(' > Licence draft.docx > 2. Licence > 2.1 Grant') and r['section'].startswith('Re: D')"; ok $? "an attachment's clause under its message: $(head -c 400 "$tmp/sm")"
# an Outlook message (.msg, make_msg.py's): an e-mail, its attachment's
# text under its name
mkdir -p "$tmp/msg" && cp "$SRC/tests/ingest_read/fixtures/memo.msg" "$tmp/msg/"
"$DOCQA" ingest "$tmp/msg" --index "$tmp/idx_msg" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'email': 1} and d['failed'] == 0" && [ $rc = 0 ]; ok $? "an Outlook .msg counts as email: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "clause 60 tenant keeps the premises insured" --index "$tmp/idx_msg" --json --k 1 >"$tmp/sm" 2>/dev/null
json "$tmp/sm" "(r := d['results'][0])['path'] == 'memo.msg' and r['section'].endswith(' > renewal-terms.txt') and 'Clause 60.' in r['text']"; ok $? "a .msg attachment's text under its name: $(head -c 400 "$tmp/sm")"
# an RTF (LibreOffice's): counted as rtf, its list numbers clause symbols
mkdir -p "$tmp/rtf" && cp "$SRC/tests/ingest_read/fixtures/outline.rtf" "$tmp/rtf/"
"$DOCQA" ingest "$tmp/rtf" --index "$tmp/idx_rtf" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'rtf': 1} and d['failed'] == 0"; ok $? "an RTF counts as rtf: $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" xref 2.1 --index "$tmp/idx_rtf" >"$tmp/xo" 2>&1
grep -q '^outline.rtf:6:1: section in 2 Licence: 2.1 Grant$' "$tmp/xo"; ok $? "an RTF's numbered heading is a section, shown with its line: $(cat "$tmp/xo")"
# reviewers' comments in a DOCX, an ODT and an RTF (LibreOffice's, of one
# document): found by their words, with their author and date
mkdir -p "$tmp/cmt" && cp "$SRC/tests/ingest_read/fixtures/comments."{docx,odt,rtf} "$tmp/cmt/"
"$DOCQA" ingest "$tmp/cmt" --index "$tmp/idx_cmt" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['added'] == 3 and d['failed'] == 0" && [ $rc = 0 ]; ok $? "three documents with comments ingest: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "statutory rate" --index "$tmp/idx_cmt" --json --k 3 >"$tmp/sc" 2>/dev/null
json "$tmp/sc" "sorted(r['path'] for r in d['results']) == ['comments.docx', 'comments.odt', 'comments.rtf'] and all('[comment, Ann Lee, 2026-03-02] Statutory rate instead?' in r['text'] for r in d['results']) and [r['line_start'] <= 3 <= r['line_end'] for r in d['results'] if r['path'] == 'comments.docx'] == [True]"; ok $? "a comment found in each format, its author and date: $(head -c 600 "$tmp/sc")"
# a scanned PDF (two picture-only pages): read by OCR, cited by page;
# with OCR off its pages are counted and warned of, and the next ingest
# reads the file again; a malformed --ocr-lang is a usage error
mkdir -p "$tmp/scan" && cp "$SRC/tests/ingest_read/fixtures/scan.pdf" "$tmp/scan/"
"$DOCQA" ingest "$tmp/scan" --index "$tmp/idx_scan" --no-embed --no-ocr --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
ok $rc "ingest --no-ocr of a scan exits 0: $(head -c 300 "$tmp/e")"
json "$tmp/jo" "d['pages_no_text'] == 2 and d['ocr_pages'] == 0 and d['added'] == 1"; ok $? "--no-ocr leaves the scan's 2 picture pages unread: $(cat "$tmp/jo")"
grep -q "scan.pdf: 2 pages have no text layer (a scan?) and were not read: OCR is off" "$tmp/e"; ok $? "and warns, naming the file: $(cat "$tmp/e")"
"$DOCQA" ingest "$tmp/scan" --index "$tmp/idx_scan" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
ok $rc "ingest of the scan with OCR exits 0: $(head -c 300 "$tmp/e")"
json "$tmp/jo" "d['updated'] == 1 and d['reread'] == 0 and d['ocr_pages'] == 2 and d['pages_no_text'] == 0"; ok $? "the unchanged file is read again, now by OCR: $(cat "$tmp/jo")"
"$DOCQA" search "deposit returned within 30 days" --index "$tmp/idx_scan" --json --k 1 >"$tmp/ss" 2>/dev/null
json "$tmp/ss" "(r := d['results'][0])['path'] == 'scan.pdf' and r['page'] == 2 and 'EUR 4,500' in r['text']"; ok $? "a scanned page's passage, cited by page: $(head -c 400 "$tmp/ss")"
"$DOCQA" ingest "$tmp/scan" --index "$tmp/idx_scan" --no-embed --json >"$tmp/jo" 2>/dev/null
json "$tmp/jo" "d['unchanged'] == 1 and d['ocr_pages'] == 0"; ok $? "then it is unchanged, not read by OCR again: $(cat "$tmp/jo")"
"$DOCQA" ingest "$tmp/scan" --index "$tmp/idx_scan" --ocr-lang '../eng' >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q "ocr-lang" "$tmp/e"; ok $? "a malformed --ocr-lang is a usage error: $rc $(cat "$tmp/e")"
# image files (a two-page TIFF, a PNG): read by OCR, their pages cited;
# with --no-ocr skipped as binaries are, and no warning
mkdir -p "$tmp/img" && cp "$SRC/tests/ingest_read/fixtures/scan.tif" "$SRC/tests/ingest_read/fixtures/scan.png" "$tmp/img/"
"$DOCQA" ingest "$tmp/img" --index "$tmp/idx_img0" --no-embed --no-ocr --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['skipped'] == 2 and d['added'] == 0 and d['failed'] == 0" && [ $rc = 0 ] && [ ! -s "$tmp/e" ]; ok $? "--no-ocr skips images quietly: $rc $(cat "$tmp/jo") $(cat "$tmp/e")"
"$DOCQA" ingest "$tmp/img" --index "$tmp/idx_img" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
ok $rc "ingest of images exits 0: $(head -c 300 "$tmp/e")"
json "$tmp/jo" "d['by_kind'] == {'image': 2} and d['ocr_pages'] == 3"; ok $? "two images, three pages read by OCR: $(cat "$tmp/jo")"
"$DOCQA" search "governed by the laws of Ireland" --index "$tmp/idx_img" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['path'] == 'scan.tif' and r['page'] == 2 and r['line_start'] <= 2 <= r['line_end']"; ok $? "a TIFF's second page, cited by page and line: $(head -c 400 "$tmp/si")"
# a TIFF whose pages lie sideways and upside down: turned upright by
# Tesseract's orientation detection and read; without its data (a
# tessdata folder holding eng only) read as they lie, as noise, and left
# empty, the ingest going on
mkdir -p "$tmp/side" && cp "$SRC/tests/ingest_read/fixtures/sideways.tif" "$tmp/side/"
"$DOCQA" ingest "$tmp/side" --index "$tmp/idx_side" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['ocr_pages'] == 2 and d['chunks'] >= 1" && [ $rc = 0 ]; ok $? "pages lying sideways are turned and read: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "ninety days written notice" --index "$tmp/idx_side" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['path'] == 'sideways.tif' and r['page'] == 1"; ok $? "a sideways page found, cited by page: $(head -c 400 "$tmp/si")"
tessdata=$(dirname "$(dpkg -L tesseract-ocr-eng 2>/dev/null | grep '/eng.traineddata$' | head -1)")
if [ -f "$tessdata/eng.traineddata" ]; then
  mkdir -p "$tmp/tessdata" && ln -s "$tessdata/eng.traineddata" "$tmp/tessdata/"
  TESSDATA_PREFIX="$tmp/tessdata" "$DOCQA" ingest "$tmp/side" --index "$tmp/idx_side0" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
  json "$tmp/jo" "d['ocr_pages'] == 0 and d['chunks'] == 0 and d['failed'] == 0" && [ $rc = 0 ]; ok $? "without osd data they are read as they lie and left empty: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
  TESSDATA_PREFIX="$tmp/tessdata" "$DOCQA" version >"$tmp/v" 2>&1
  grep -q "no orientation detection: Debian's tesseract-ocr-osd" "$tmp/v"; ok $? "and docqa version says so: $(grep tesseract "$tmp/v")"
fi
# a PowerPoint deck: its slides are sections, cited by slide (page); the
# speaker notes are searched too
mkdir -p "$tmp/deck" && cp "$SRC/tests/ingest_read/fixtures/board.pptx" "$tmp/deck/"
"$DOCQA" ingest "$tmp/deck" --index "$tmp/idx_deck" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'pptx': 1} and d['failed'] == 0" && [ $rc = 0 ]; ok $? "a .pptx is read: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "indemnity cap not agreed" --index "$tmp/idx_deck" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['path'] == 'board.pptx' and r['page'] == 3 and r['page_unit'] == 'slide' and r['kind'] == 'pptx' and 'Deal terms' in r['section']"; ok $? "a slide's notes found, cited by slide and section: $(head -c 400 "$tmp/si")"
"$DOCQA" search "indemnity cap not agreed" --index "$tmp/idx_deck" --k 1 >"$tmp/st" 2>/dev/null
grep -q '^1\. board\.pptx slide 3 (.*Deal terms' "$tmp/st"; ok $? "and shown as 'slide 3': $(head -c 300 "$tmp/st")"
# LibreOffice Impress's own deck (.odp) of the same slides: read alike,
# cited by slide
mkdir -p "$tmp/odp" && cp "$SRC/tests/ingest_read/fixtures/board.odp" "$tmp/odp/"
"$DOCQA" ingest "$tmp/odp" --index "$tmp/idx_odp" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'odp': 1} and d['failed'] == 0" && [ $rc = 0 ]; ok $? "a .odp is read: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "indemnity cap not agreed" --index "$tmp/idx_odp" --k 1 >"$tmp/st" 2>/dev/null
grep -q '^1\. board\.odp slide 3 (.*Deal terms' "$tmp/st"; ok $? "an .odp slide's notes found, shown as 'slide 3': $(head -c 300 "$tmp/st")"
# an Excel workbook: its sheets are sections, a row cited by sheet (page)
# and row number (line); dates read as dates
mkdir -p "$tmp/book" && cp "$SRC/tests/ingest_read/fixtures/book.xlsx" "$tmp/book/"
"$DOCQA" ingest "$tmp/book" --index "$tmp/idx_book" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'xlsx': 1} and d['failed'] == 0" && [ $rc = 0 ]; ok $? "a .xlsx is read: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "Kestrel Partners bid" --index "$tmp/idx_book" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['path'] == 'book.xlsx' and r['page'] == 4 and r['page_unit'] == 'sheet' and r['line_start'] == 1 and 'Old (hidden)' in r['section']"; ok $? "a hidden sheet's row found, cited by sheet and row: $(head -c 400 "$tmp/si")"
"$DOCQA" search "Kestrel Partners bid" --index "$tmp/idx_book" --k 1 >"$tmp/st" 2>/dev/null
grep -q '^1\. book\.xlsx sheet 4 row 1 (.*Old (hidden)' "$tmp/st"; ok $? "and shown as 'sheet 4 row 1': $(head -c 300 "$tmp/st")"
"$DOCQA" search "2024-03-12" --index "$tmp/idx_book" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['page'] == 1 and '12.5%' in r['text']"; ok $? "a date cell found by its date, its row's percentage shown: $(head -c 400 "$tmp/si")"
# LibreOffice's own spreadsheet (.ods) of the same workbook: read alike
mkdir -p "$tmp/ods" && cp "$SRC/tests/ingest_read/fixtures/book.ods" "$tmp/ods/"
"$DOCQA" ingest "$tmp/ods" --index "$tmp/idx_ods" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'ods': 1} and d['failed'] == 0" && [ $rc = 0 ]; ok $? "a .ods is read: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "Kestrel Partners bid" --index "$tmp/idx_ods" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['path'] == 'book.ods' and r['page'] == 4 and r['line_start'] == 1 and 'Old (hidden)' in r['section']"; ok $? "an .ods hidden sheet's row found, cited by sheet and row: $(head -c 400 "$tmp/si")"
# an Excel 97-2003 .xls of the same workbook: read alike
mkdir -p "$tmp/xls" && cp "$SRC/tests/ingest_read/fixtures/book.xls" "$tmp/xls/"
"$DOCQA" ingest "$tmp/xls" --index "$tmp/idx_xls" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'xls': 1} and d['failed'] == 0" && [ $rc = 0 ]; ok $? "a .xls is read: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "2024-03-12" --index "$tmp/idx_xls" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['path'] == 'book.xls' and r['page'] == 1 and '12.5%' in r['text']"; ok $? "an .xls date cell found by its date: $(head -c 400 "$tmp/si")"
# a CSV's chunks far below its header name its columns in their section
mkdir -p "$tmp/csv" && python3 -c "
import sys
with open(sys.argv[1], 'w') as f:
    f.write('Supplier,Country,Contract value\n')
    for i in range(1500): f.write('Supplier %d,Country %d,%d\n' % (i, i % 7, 1000 + i))
" "$tmp/csv/suppliers.csv"
"$DOCQA" ingest "$tmp/csv" --index "$tmp/idx_csv" --no-embed -q 2>"$tmp/e"; rc=$?
"$DOCQA" search "Supplier 1400" --index "$tmp/idx_csv" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['line_start'] > 1 and 'Supplier 1400,' in r['text'] and r['section'] == 'columns: Supplier,Country,Contract value'" && [ $rc = 0 ]; ok $? "a CSV row far below its header: its chunk names the columns: $(head -c 400 "$tmp/si")"
# a Word 97-2003 .doc: its paragraphs as lines, a table's row a line
mkdir -p "$tmp/doc" && cp "$SRC/tests/ingest_read/fixtures/word97.doc" "$tmp/doc/"
"$DOCQA" ingest "$tmp/doc" --index "$tmp/idx_doc" --no-embed --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['by_kind'] == {'doc': 1} and d['failed'] == 0" && [ $rc = 0 ]; ok $? "a .doc is read: $rc $(cat "$tmp/jo") $(head -c 300 "$tmp/e")"
"$DOCQA" search "deposit held by Harbour Bank" --index "$tmp/idx_doc" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "(r := d['results'][0])['path'] == 'word97.doc' and 'Deposit | ' in r['text'] and r['line_start'] <= 6 <= r['line_end']"; ok $? "a .doc's table row found and cited by its paragraph: $(head -c 400 "$tmp/si")"
# a file over the size limit: skipped with a warning naming it, counted
# (--json too_large), the ingest going on (exit 0); --max-file-mb or
# ingest.max_file_mb reads it; 0 is no limit to set
mkdir -p "$tmp/size"
python3 -c "import sys; sys.stdout.write(''.join('line %d of the long ledger\\n' % i for i in range(60000)) + 'the escrow figure is 4711\\n')" >"$tmp/size/ledger.txt"
echo "a small note" >"$tmp/size/note.txt"
"$DOCQA" ingest "$tmp/size" --index "$tmp/idx_size" --no-embed --max-file-mb 1 --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['too_large'] == 1 and d['skipped'] == 1 and d['added'] == 1 and d['failed'] == 0" && [ $rc = 0 ] && grep -q "skipped ledger.txt: file is [0-9]* bytes (1.7 MiB), over the limit of 1 MiB$" "$tmp/e"; ok $? "a file over --max-file-mb is skipped with a warning: $rc $(cat "$tmp/jo") $(cat "$tmp/e")"
"$DOCQA" ingest "$tmp/size" --index "$tmp/idx_size" --no-embed --max-file-mb 1 >"$tmp/o" 2>"$tmp/e"; rc=$?
grep -q "1 file over the size limit was not read (the largest: 2 MiB; --max-file-mb N reads it)" "$tmp/e" && [ $rc = 0 ]; ok $? "and the summary says so on every run: $rc $(cat "$tmp/e")"
"$DOCQA" ingest "$tmp/size" --index "$tmp/idx_size" --no-embed --set ingest.max_file_mb=2 --json >"$tmp/jo" 2>"$tmp/e"; rc=$?
json "$tmp/jo" "d['too_large'] == 0 and d['added'] == 1 and d['unchanged'] == 1" && [ $rc = 0 ]; ok $? "ingest.max_file_mb=2 reads it: $rc $(cat "$tmp/jo") $(cat "$tmp/e")"
"$DOCQA" search "escrow figure 4711" --index "$tmp/idx_size" --json --k 1 >"$tmp/si" 2>/dev/null
json "$tmp/si" "d['results'][0]['path'] == 'ledger.txt'"; ok $? "its last line is found: $(head -c 300 "$tmp/si")"
"$DOCQA" ingest "$tmp/size" --index "$tmp/idx_size" --max-file-mb 0 >/dev/null 2>"$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q "max-file-mb must be a whole number from 1" "$tmp/e"; ok $? "--max-file-mb 0 is a usage error: $rc $(cat "$tmp/e")"
echo "$((n-fail)) passed, $fail failed"
[ $fail -eq 0 ]
