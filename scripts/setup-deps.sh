#!/usr/bin/env bash
# Installs docqa's system dependencies from Debian's packages.
# Idempotent and quiet when everything is already installed: it asks dpkg
# which packages are missing and only then runs apt-get.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config dpkg-dev git
  libsqlite3-dev sqlite3
  libfaiss-dev libopenblas-dev libgomp1
  libxml2-dev libpcre2-dev libzip-dev libpoppler-glib-dev libyaml-dev
  libjansson-dev libedit-dev
  zip poppler-utils python3-venv
  libtesseract5 tesseract-ocr-eng tesseract-ocr-osd
  global time universal-ctags
  gnuplot-nox
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
