#!/usr/bin/env bash
# Install the Debian packages hybench needs, only those missing. Idempotent; quiet when all present.
# Set HB_NO_INSTALL=1 to skip (e.g. on the device machine, which cannot install).
# libsqlite3-dev and libpq-dev: the history store (docs/history.md); postgresql: the server test_store
# starts for its PostgreSQL tests; sqlite3: the command-line shell (a test and docs use it).
# `install_deps.sh fuzz` adds what `make fuzz` needs (docs/fuzzing.md): clang, the libFuzzer and
# sanitizer runtimes (libclang-rt-dev) and LLVM's OpenMP headers and runtime for clang -fopenmp.
set -u
[ "${HB_NO_INSTALL:-0}" = 1 ] && exit 0
pkgs="build-essential pkg-config libopenblas-dev libopenblas-openmp-dev libhwloc-dev libjansson-dev libinih-dev libcmocka-dev
gnuplot-nox ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev clinfo chromium libxml2-dev
libsqlite3-dev libpq-dev postgresql sqlite3 libsleef-dev python3-pip"
[ "${1:-}" = fuzz ] && pkgs="$pkgs clang libclang-rt-dev libomp-dev"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "hybench: installing missing packages:$missing" >&2
if [ "$(id -u)" != 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || { echo "hybench: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2 || {
  echo "hybench: apt-get install failed for:$missing" >&2; exit 1; }
