#!/usr/bin/env bash
# Install the Debian packages hybench needs, only those missing. Idempotent; quiet when all present.
# Set HB_NO_INSTALL=1 to skip (e.g. on the device machine, which cannot install).
# libsqlite3-dev and libpq-dev: the history store (docs/history.md); postgresql: the server test_store
# starts for its PostgreSQL tests; sqlite3: the command-line shell (a test and docs use it).
# libdnnl-dev: oneDNN, the cpu backend's conv2d (kernels/cpu/cpu_dnnl.c; optional to the build).
# valgrind: the merge gate's deterministic measure (`hybench ab --instructions` runs the builds under
# callgrind; its <valgrind/callgrind.h> client requests are compiled into measure/instr.c when present).
# libjs-dygraphs: the graphs of the history site (`hybench publish` copies its dygraph.min.js and
# dygraph.css into the site; ./run_all.sh --nightly publishes it).
# `install_deps.sh test` adds what only the tests need (`make test`): cmocka, libxml2 (the report's
# HTML check) and the headless browser that screenshots the report (chromium, about 350 MB); `make`
# and ./run_all.sh do not install them.
# `install_deps.sh fuzz` adds what `make fuzz` needs (docs/fuzzing.md): clang, the libFuzzer and
# sanitizer runtimes (libclang-rt-dev) and LLVM's OpenMP headers and runtime for clang -fopenmp.
set -u
[ "${HB_NO_INSTALL:-0}" = 1 ] && exit 0
pkgs="build-essential pkg-config libopenblas-dev libopenblas-openmp-dev libhwloc-dev libjansson-dev libinih-dev
gnuplot-nox ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libclblast-dev clinfo libsqlite3-dev libpq-dev libsleef-dev libdnnl-dev
libjs-dygraphs python3-pip valgrind"
[ "${1:-}" = test ] && pkgs="$pkgs libcmocka-dev libxml2-dev chromium postgresql sqlite3"
[ "${1:-}" = fuzz ] && pkgs="$pkgs clang libclang-rt-dev libomp-dev"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "hybench: installing missing packages:$missing" >&2
if [ "$(id -u)" != 0 ]; then
  SUDO=sudo
  if ! command -v sudo >/dev/null || ! sudo -n true 2>/dev/null; then
    echo "hybench: not root and no password-less sudo: install them as root (apt-get install$missing)," >&2
    echo "hybench: or build without this step when the packages are present: HB_NO_INSTALL=1 make (README)" >&2
    exit 1
  fi
else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || { echo "hybench: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2 || {
  echo "hybench: apt-get install failed for:$missing" >&2; exit 1; }
