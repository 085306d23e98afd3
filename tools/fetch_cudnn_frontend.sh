#!/usr/bin/env bash
# Fetch the header-only C++ cudnn-frontend (NVIDIA, MIT licence) from its PyPI wheel
# `nvidia-cudnn-frontend` and unpack only its include/ folder into DIR/include (default
# build/cudnn-frontend). The CUDA plugin's cuda_sdpa.cpp compiles against it; the headers are never
# copied into the repository. Idempotent: does nothing when DIR/include/cudnn_frontend.h exists.
# `pip download` fetches the wheel without installing anything (no clash with a system-managed
# Python); the wheel's headers are the same for every Python version, so one tag is named.
# Exit status: 0 headers present; 1 the download or unpacking failed (the plugin then builds
# without cuDNN SDPA and says so in every attention case's extra.algo).
# Usage: tools/fetch_cudnn_frontend.sh [DIR]      (the Makefile runs it; CUDNN_FE_VERSION overrides)
set -u
dir=${1:-build/cudnn-frontend}
ver=${CUDNN_FE_VERSION:-1.32.0}
[ -e "$dir/include/cudnn_frontend.h" ] && exit 0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "hybench: fetching nvidia-cudnn-frontend $ver headers into $dir" >&2
if ! python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
     --platform manylinux_2_28_x86_64 -d "$tmp" "nvidia-cudnn-frontend==$ver" >&2; then
  echo "hybench: WARNING: pip download nvidia-cudnn-frontend==$ver failed; CUDA attention will use the own kernels" >&2
  exit 1
fi
whl=$(ls "$tmp"/nvidia_cudnn_frontend-*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || exit 1
mkdir -p "$dir"
python3 - "$whl" "$dir" <<'PY' || exit 1
import sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist() if n.startswith("include/")]
    if not any(n.endswith("cudnn_frontend.h") for n in names):
        sys.exit("no include/cudnn_frontend.h in " + whl)
    z.extractall(dest, names)
PY
exit 0
