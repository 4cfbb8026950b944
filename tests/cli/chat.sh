#!/usr/bin/env bash
# chat.sh - `docqa chat` end to end with the default model: a scripted
# session through standard input with --json against a --no-embed index of a
# copy of samples/ (BM25 retrieval: no embedding pass). It checks what a user
# relies on in a long conversation:
#   - every turn's prompt (and prompt + answer) fits the model's context;
#   - once the session is long, /summary is non-empty (older turns folded);
#   - `docqa chat --session same` in a new process resumes the session
#     (/history holds the earlier turns, /summary survives);
#   - a vague follow-up retrieves passages of the previous topic, both within
#     a run and right after the restart (the previous question comes from the
#     index);
#   - a follow-up's "it" after an answer whose facts open with a code name
#     is that name (not a defined term).
# The model's context: tokens.context of the chat JSON when present, else
# min(<arch>.context_length of the GGUF, 4096), the engine's default context
# (engine.h) - read here with a small GGUF header reader, not from docqa.
#
# Cost: each turn prefills a few hundred tokens and the fold generates a
# summary; on a loaded 2-core machine a turn takes 10-40 s. `docqa chat` has
# no --max-tokens (answers may run to 256 tokens) and no --history-budget
# (the fold starts past n_ctx/4 tokens of turns), so the session uses --k 1,
# --keep-turns 1 and three long user messages to reach the fold in few turns.
# DQ_CHAT_TURNS (default 6, at least 6, at most 40) sets the length of the
# first run; DQ_CHAT_TURNS=40 runs the full scripted session.
# SKIPs (exit 0) when the default model is missing.
set -u
DOCQA=${DOCQA:?set DOCQA to the docqa binary}
SRC=${DQ_SOURCE_DIR:?set DQ_SOURCE_DIR}
MODELS=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
MODEL=$MODELS/smollm2-135m-instruct-q4_1.gguf
if [ ! -f "$MODEL" ]; then
  echo "SKIP: default model missing ($MODEL); run scripts/fetch-models.sh"
  exit 0
fi
if [ -n "${DQ_SANITIZE:-}" ]; then
  # Real inference under ASan is many times slower; the engine's own tests
  # cover its memory safety under the sanitizers.
  echo "SKIP: model-driven chat session not run in the sanitizer build"
  exit 0
fi
TURNS=${DQ_CHAT_TURNS:-6}
if [ "$TURNS" -lt 6 ] || [ "$TURNS" -gt 40 ]; then
  echo "DQ_CHAT_TURNS must be 6..40, not $TURNS"; exit 2
fi
fail=0; n=0
ok() { n=$((n+1)); if [ "$1" != 0 ]; then echo "FAIL: $2"; fail=$((fail+1)); fi; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r "$SRC/samples" "$tmp/s"
IDX="$tmp/idx"
t_start=$(date +%s)
"$DOCQA" ingest "$tmp/s" --index "$IDX" --no-embed -q >/dev/null 2>"$tmp/e0"
ok $? "ingest --no-embed (stderr: $(head -c 300 "$tmp/e0"))"

# The model's context from the GGUF header (version 2/3 layout: magic, u32
# version, u64 tensor count, u64 key count, then key/value pairs).
CTX_TRAIN=$(python3 - "$MODEL" <<'PY'
import struct, sys
f = open(sys.argv[1], "rb")
def rd(fmt):
    return struct.unpack("<" + fmt, f.read(struct.calcsize("<" + fmt)))[0]
def rstr():
    return f.read(rd("Q")).decode("utf-8", "replace")
SIZES = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
         10: "Q", 11: "q", 12: "d"}
def value(t):
    if t == 8:
        return rstr()
    if t == 9:
        et, cnt = rd("I"), rd("Q")
        return [value(et) for _ in range(cnt)]
    return rd(SIZES[t])
assert f.read(4) == b"GGUF"
rd("I"); rd("Q"); n_kv = rd("Q")
for _ in range(n_kv):
    k = rstr(); v = value(rd("I"))
    if k.endswith(".context_length"):
        print(v); break
PY
)
[ -n "$CTX_TRAIN" ]; ok $? "context_length found in $MODEL"
CTX=$(( ${CTX_TRAIN:-0} < 4096 ? ${CTX_TRAIN:-0} : 4096 ))
echo "model context: $CTX tokens (GGUF context_length $CTX_TRAIN)"

# The scripted questions. Three long user messages (pasted background, as
# users do) make the history pass n_ctx/4 tokens early; a vague follow-up
# ("What does it have to say?") retrieves nothing about the DPA on its own
# (checked below) but should with the previous question.
LONG1="I am reviewing the Master Services Agreement between Northwind Analytics Limited and Bellhaven Logistics plc for our finance team. Our accounts payable process runs a weekly payment batch, invoices arrive by email and are approved by the budget holder before they are scheduled, and we sometimes dispute a line item when the timesheets do not match the Statement of Work. Last quarter two invoices were paid late because the approver was on leave, the supplier's credit controller chased us by telephone, and our treasury team had to move the payment run forward by a week. We also want to understand whether a disputed invoice stops the clock for the undisputed part, because our internal policy is to hold the whole invoice until every line is agreed, which may not match the contract. Our auditors have asked for a short note on the payment terms of every major supplier contract, with the clause numbers, the interest that can be charged on overdue amounts and the period for raising a dispute, so that the accruals at the year end are right and the board can see the exposure for each supplier in one table. The finance director wants to know whether our usual approval cycle, which can take up to three weeks when the budget holder is travelling, puts us at risk of paying interest on late invoices, and how long we really have from the date we receive a valid invoice. Within how many days must the Customer pay a valid invoice?"
LONG2="We are about to share prototype sensor calibration data with a partner under the mutual non-disclosure agreement between Orchard Peak Robotics and Saltmarsh Instruments. Our engineers keep notes and analyses of the partner's test results in a shared wiki, the wiki is backed up every night, and some of the material may be forwarded to contractors who help with firmware. The partner has asked us to keep a log of every person who accessed the data, our contractors sign their own confidentiality undertakings, and our IT department is moving the wiki to a new hosting provider next month, which means a migration window during which access controls are temporarily relaxed for the migration team. The partner's lawyers have also asked whether the notes and analyses our engineers write count as their confidential information, whether backup copies must be destroyed at the end of the project, and whether we may keep one archival copy for our legal department, so we are preparing a short briefing for the engineering leads before any data arrives. Our security team also runs an incident process that can take several days before a leak is confirmed, and the legal team wants to know how quickly we would have to tell the other side if we discovered unauthorised use or disclosure of their information. Within how many hours must the Receiving Party notify the Disclosing Party?"
LONG3="Our credit union is negotiating the renewal of the Kestrel Ledger Systems software licence agreement and the procurement team keeps a calendar of contract dates. The agreement started on the Commencement Date, has an initial term, renews automatically for further periods, and our board only meets quarterly, so any decision not to renew has to be planned well in advance and approved in a board meeting. We are also comparing two alternative core banking vendors, which means a migration project of at least nine months, data export in CSV format from the current system, and a parallel run of both ledgers for one quarter before we can switch off the Kestrel software. The regulator expects us to notify it of material outsourcing changes, and the audit committee wants the renewal decision documented with the relevant contract clauses. Our finance team also needs the licence fee for the current year, the number of named seats, the cost of additional seats, and the escrow arrangements for the source code in case the vendor becomes insolvent during the migration, and they have asked for a summary of the warranty and liability caps as well. The procurement lead asked how far ahead of the end of the current period we must send written notice if we decide not to renew. How much notice of non-renewal is required under the Kestrel licence?"
DPA_Q="Within how many hours must the Processor notify the Controller of a Personal Data Breach?"
DPA_FOLLOW="What does it have to say?"
LEASE_Q="How much notice must the Tenant give to exercise the break clause in the Unit 4 Wharfside lease?"
LEASE_FOLLOW="What else must be true on that date?"
EXTRA=(
  "Which law governs the mutual non-disclosure agreement?"
  "What is each party's liability cap under the Master Services Agreement?"
  "Which C function computes the tax on a single invoice line in ledgerlite?"
  "Where is the tax_category enum defined?"
  "What is the day rate of an Analyst in Schedule 2?"
  "How long does the Disclosure Period of the NDA last?"
  "Which sub-processor provides transactional email?"
  "What encryption protects Personal Data at rest?"
  "How much is the Deposit under the lease?"
  "When is the Rent of the lease reviewed?"
  "Which rounding mode does the NL tax table use?"
  "What does money_format return?"
  "Which function parses a money amount?"
  "How long do the MSA confidentiality obligations survive termination?"
  "Who signed the MSA for the Supplier?"
  "What is the Rent Free Period of the lease?"
  "How many Authorised Users does the Kestrel licence include?"
  "Which courts have jurisdiction over NDA disputes?"
  "What must the Processor do with Personal Data on termination?"
  "How often may the Controller audit the Processor?"
  "What service credit applies to dashboard availability?"
  "Which escrow agent holds the Kestrel source code?"
  "What is MONEY_SCALE in ledgerlite?"
  "Which function calls tax_compute_line?"
  "How long is the warranty period of the Kestrel software?"
  "What is the initial term of the Master Services Agreement?"
  "What happens if the Tenant pays rent fourteen days late?"
  "Which jurisdictions have built-in tax tables?"
  "What is the non-solicitation period in the NDA?"
  "How does the NDA define Derived Materials?"
  "Who is the Processor's contact for notices?"
  "What does the Customer's sole remedy for defective Deliverables consist of?"
  "What is the governing law of the Data Processing Addendum?"
  "How much notice ends the Master Services Agreement for convenience?"
)
Q=("$LONG1" "$LONG2" "$DPA_Q" "$DPA_FOLLOW" "$LONG3")
for ((i = 0; ${#Q[@]} < TURNS - 1; i++)); do Q+=("${EXTRA[$i]}"); done
Q+=("$LEASE_Q")   # last, so the restart's follow-up refers to it
printf '%s\n' "${Q[@]}" > "$tmp/in1"
printf '/summary\n' >> "$tmp/in1"

"$DOCQA" search "$DPA_FOLLOW" --index "$IDX" --k 1 --json >"$tmp/f1" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if all('data_processing' not in r['path'] for r in d['results']) else 1)" "$tmp/f1"
ok $? "precondition: '$DPA_FOLLOW' alone does not retrieve the DPA: $(head -c 300 "$tmp/f1")"
"$DOCQA" search "$LEASE_FOLLOW" --index "$IDX" --k 1 --json >"$tmp/f2" 2>/dev/null
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if all('commercial_lease' not in r['path'] for r in d['results']) else 1)" "$tmp/f2"
ok $? "precondition: '$LEASE_FOLLOW' alone does not retrieve the lease: $(head -c 300 "$tmp/f2")"

OPTS=(--session s1 --index "$IDX" --k 1 --keep-turns 1 --max-tokens 24 --history-budget 256 --json)
t0=$(date +%s)
"$DOCQA" chat "${OPTS[@]}" <"$tmp/in1" >"$tmp/o1" 2>"$tmp/e1"; rc=$?
t1=$(date +%s)
ok $rc "chat run 1 exits 0 (stderr: $(tail -c 400 "$tmp/e1"))"
echo "run 1: $TURNS turns in $((t1 - t0)) s"

# check FILE PY-EXPR [message]: EXPR over T (the turns' JSON objects, in
# order) and X (stdout lines that are not JSON: slash-command output).
check() {
  python3 - "$1" "$CTX" "$2" <<'PY'
import json, sys
T, X = [], []
for ln in open(sys.argv[1], encoding="utf-8"):
    ln = ln.rstrip("\n")
    if ln.startswith("{"):
        T.append(json.loads(ln))
    elif ln.strip():
        X.append(ln)
CTX = int(sys.argv[2])
sys.exit(0 if eval(sys.argv[3]) else 1)
PY
}
check "$tmp/o1" "len(T) == $TURNS"; ok $? "one JSON object per turn ($TURNS)"
check "$tmp/o1" "all(t['tokens']['prompt'] > 0 and t['tokens']['prompt'] < t['tokens'].get('context', CTX) and t['tokens']['prompt'] + t['tokens']['answer'] <= t['tokens'].get('context', CTX) for t in T)"
ok $? "every turn's prompt (and prompt + answer) fits the context of $CTX: $(grep -o '"tokens":{[^}]*}' "$tmp/o1" | tr '\n' ' ')"
check "$tmp/o1" "all(t['answer'].strip() for t in T)"; ok $? "every turn has an answer"
check "$tmp/o1" "X and not X[0].startswith('(no summary yet') and len(' '.join(X).strip()) > 20"
ok $? "/summary is non-empty after $TURNS turns: $(grep -v '^{' "$tmp/o1" | head -c 300)"
echo "summary after run 1: $(grep -v '^{' "$tmp/o1" | tr '\n' ' ' | head -c 300)"
# A self-contained question after a long one on another topic is searched
# on its own (only follow-ups borrow the previous question).
check "$tmp/o1" "any('data_processing_addendum' in p['path'] for p in T[2]['passages'])"
ok $? "self-contained '$DPA_Q' retrieves the DPA: $(sed -n 3p "$tmp/o1" | grep -o '"passages":\[[^]]*\]' | head -c 200)"
# Each turn quotes the best matching sentence of its passages (null when
# none holds enough of the question's words); the DPA question's comes
# from the DPA.
check "$tmp/o1" "all('quote' in t for t in T) and all(t['quote'] is None or (t['quote']['text'] and t['quote']['path'] and t['quote']['line_start'] <= t['quote']['line_end']) for t in T) and T[2]['quote'] and 'data_processing_addendum' in T[2]['quote']['path']"
ok $? "every turn has a quote (or null); the DPA question's is from the DPA: $(sed -n 3p "$tmp/o1" | grep -o '"quote":{[^}]*}' | head -c 300)"
idx=3  # the DPA follow-up is the 4th turn
check "$tmp/o1" "T[$idx]['question'] == '$DPA_FOLLOW' and any('data_processing_addendum' in p['path'] and p['line_start'] <= 130 and p['line_end'] >= 128 for p in T[$idx]['passages'])"
ok $? "follow-up '$DPA_FOLLOW' retrieves the DPA breach clause: $(sed -n 4p "$tmp/o1" | grep -o '"passages":\[[^]]*\]' | head -c 300)"

# Restart: a new process on the same session.
printf '/history\n/summary\n%s\n' "$LEASE_FOLLOW" > "$tmp/in2"
t0=$(date +%s)
"$DOCQA" chat "${OPTS[@]}" <"$tmp/in2" >"$tmp/o2" 2>"$tmp/e2"; rc=$?
t1=$(date +%s)
ok $rc "chat run 2 (resume) exits 0 (stderr: $(tail -c 400 "$tmp/e2"))"
echo "run 2: 1 turn in $((t1 - t0)) s"
check "$tmp/o2" "sum(1 for x in X if x.startswith('user: ')) >= $TURNS and any(x == 'user: $DPA_Q' for x in X) and any(x == 'user: $LEASE_Q' for x in X)"
ok $? "after a restart /history holds the earlier turns ($(grep -c '^user: ' "$tmp/o2") user turns)"
check "$tmp/o2" "len(T) == 1 and any(x.startswith('assistant: ') for x in X)"; ok $? "history has the answers too"
check "$tmp/o2" "not any(x.startswith('(no summary yet') for x in X)"; ok $? "the summary survives the restart"
check "$tmp/o2" "any('commercial_lease.pdf' in p['path'] and p['page'] == 4 for p in T[0]['passages'])"
ok $? "follow-up after the restart retrieves the lease break clause (p.4): $(grep -o '"passages":\[[^]]*\]' "$tmp/o2" | head -c 300)"
check "$tmp/o2" "T[0]['tokens']['prompt'] < T[0]['tokens'].get('context', CTX)"; ok $? "resumed turn fits the context"

# A follow-up's query holds the previous question, so it ranks the same
# named term; the index's facts are for what this question names, not for
# "Derived Materials" again.
printf '%s\n' "How does the NDA define Derived Materials?" \
  "Within how many days must they be returned?" > "$tmp/in3"
"$DOCQA" chat --session s3 --index "$IDX" --k 2 --max-tokens 8 --json \
  <"$tmp/in3" >"$tmp/o3" 2>"$tmp/e3"
ok $? "chat run 3 exits 0 (stderr: $(tail -c 400 "$tmp/e3"))"
check "$tmp/o3" "len(T) == 2 and T[0]['answer'].startswith('From the index: Derived Materials')"
ok $? "precondition: the first turn opens with the index's fact on Derived Materials: $(head -c 300 "$tmp/o3")"
check "$tmp/o3" "'From the index' not in T[1]['answer']"
ok $? "the follow-up does not repeat the previous question's fact: $(tail -n 1 "$tmp/o3" | head -c 300)"
# "it" after an answer whose facts open with a code name is that name:
# "Which function calls it?" is asked as "Which function calls
# tax_compute_line?", and its facts name the caller; the turn keeps the
# user's words; so is "this function". After a defined term's facts "it"
# stays as it is.
printf '%s\n' "Which C function computes the tax on a single invoice line in ledgerlite?" \
  "Which function calls it?" "How does the NDA define Derived Materials?" \
  "What is it?" "Where is tax_compute_line defined?" \
  "Where is this function called?" > "$tmp/in4"
"$DOCQA" chat --session s4 --index "$IDX" --k 2 --max-tokens 8 --json -v \
  <"$tmp/in4" >"$tmp/o4" 2>"$tmp/e4"
ok $? "chat run 4 exits 0 (stderr: $(tail -c 400 "$tmp/e4"))"
check "$tmp/o4" "len(T) == 6 and T[0]['answer'].startswith('From the index: tax_compute_line (function)')"
ok $? "precondition: the first turn's facts open with tax_compute_line: $(head -c 300 "$tmp/o4")"
check "$tmp/o4" "T[1]['question'] == 'Which function calls it?' and T[1]['answer'].startswith('From the index: tax_compute_line is called in invoice_compute_totals at repo/src/invoice.c:103 [')"
ok $? "'Which function calls it?' is asked of tax_compute_line: $(sed -n 2p "$tmp/o4" | head -c 300)"
grep -q "follow-up read as: Which function calls tax_compute_line?" "$tmp/e4"; ok $? "-v says how the follow-up was read"
check "$tmp/o4" "'From the index' not in T[3]['answer']" && ! grep -q "follow-up read as: What is Derived" "$tmp/e4"
ok $? "after a term's facts 'it' is not the term: $(sed -n 4p "$tmp/o4" | head -c 300)"
grep -q "follow-up read as: Where is tax_compute_line called?" "$tmp/e4"; ok $? "'this function' is the name too: $(grep 'follow-up read as' "$tmp/e4")"
echo "runtime: $(( $(date +%s) - t_start )) s"
echo "$((n-fail)) passed, $fail failed"
[ $fail -eq 0 ]
