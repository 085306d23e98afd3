#!/usr/bin/env bash
# Build hybench here for the lent GPU machine and gather what it needs into .gpu/ (git-ignored):
#   .gpu/build/hybench, hb_cuda.so, hb_opencl.so, opencl/*.cl   the binary and its plugins
#   .gpu/build/tests/test_cuda, test_opencl(_ops), .gpu/build/cuda_selftest   the plugins' tests and the CUDA timing tool
#   .gpu/build/tests/test_cpu_attn_isa, test_cpu_dnnl_gemm      the cpu paths chosen at run time (AVX-512, oneDNN), run.sh --test-cpu
#   .gpu/lib/                                                     shared libraries the device may lack
#   .gpu/workloads/                                               the workload files and benchdnn lists (workloads/benchdnn/)
#   .gpu/run.sh                                                   wrapper: LD_LIBRARY_PATH, HB_NO_INSTALL=1, runs hybench
# The device machine (Ubuntu 24.04, CUDA 13, cuBLAS, cuDNN, driver) has no OpenBLAS, jansson, hwloc,
# inih or cmocka and cannot install packages; it has its own libc, libstdc++ and the CUDA libraries,
# which are never bundled. Build flags: ARCH=-march=x86-64-v3 (the device CPU differs from this one),
# into a separate build tree (build/gpu) so build/ keeps its -march=native objects.
# Usage: tools/gpu_bundle.sh            then see tools/gpu_run.md for the `run` call.
#        HB_GPU_DIR=/abs/main/.gpu-x tools/gpu_bundle.sh   gathers into another (ignored) folder, e.g. from a
#        git worktree into the checkout that the `run` tool copies; carry ".gpu-x" then.
set -euo pipefail
cd "$(dirname "$0")/.."
G=${HB_GPU_DIR:-.gpu}
B=build/gpu  # ignored with build/, so it does not travel; only .gpu is carried
mkdir -p "$G" "$B"
ex=$(git rev-parse --git-path info/exclude); mkdir -p "$(dirname "$ex")"
grep -qx '/.gpu*/' "$ex" 2>/dev/null || echo '/.gpu*/' >> "$ex"

ARCH_FLAGS=-march=x86-64-v3
echo "gpu_bundle: building into $B with ARCH=$ARCH_FLAGS" >&2
# hybench and plugins; a target that fails (someone's half-written file) is reported, not fatal.
make -j2 --no-print-directory BUILD="$B" ARCH="$ARCH_FLAGS" "$B/libhb_kernels.a" "$B/libhb_core.a" >&2
make -j2 --no-print-directory BUILD="$B" ARCH="$ARCH_FLAGS" "$B/hybench" >&2 || echo "gpu_bundle: WARNING: hybench did not build" >&2
make -j2 --no-print-directory BUILD="$B" ARCH="$ARCH_FLAGS" "$B/hb_opencl.so" >&2 || echo "gpu_bundle: WARNING: hb_opencl.so did not build" >&2
if ! make -j2 --no-print-directory BUILD="$B" ARCH="$ARCH_FLAGS" "$B/hb_cuda.so" >&2; then
  # Fallback while the Makefile rule still links -lnvidia-ml (absent here; kernels/cuda/NOTES.md):
  # the plugin loads NVML itself with dlopen, so it links without it.
  echo "gpu_bundle: linking hb_cuda.so without -lnvidia-ml (see kernels/cuda/NOTES.md)" >&2
  NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  CUDA_HOME=${NVCC%/bin/nvcc}
  "$NVCC" -shared -o "$B/hb_cuda.so" "$B"/kernels/cuda/*.o -L"$CUDA_HOME/lib64" -lcudart -lcublas -lcublasLt -lcudnn -ljansson \
    -Xlinker -rpath -Xlinker '$ORIGIN'
fi
make -j2 --no-print-directory BUILD="$B" ARCH="$ARCH_FLAGS" "$B/tests/test_cuda" "$B/tests/test_opencl" "$B/tests/test_opencl_ops" "$B/tests/test_cuda_collective" "$B/tests/test_collective" \
  "$B/tests/test_cpu_attn_isa" "$B/tests/test_cpu_dnnl_gemm" "$B/gguf_matmul" >&2
BLAS_DIR=$(make -s --no-print-directory print-BLAS_DIR)
LDLIBS="$(pkg-config --libs hwloc jansson inih 2>/dev/null) $(pkg-config --exists sleef && pkg-config --libs sleef) -L$BLAS_DIR -Wl,-rpath,$BLAS_DIR -lopenblas -lm -ldl -fopenmp"
# oneDNN (kernels/cpu/cpu_dnnl.c, in libhb_kernels.a when the build found it); gathered below by ldd
[ "$(make -s --no-print-directory print-HAVE_ONEDNN)" = 1 ] && LDLIBS="$LDLIBS -ldnnl"
# cuda_selftest uses the backend interface and the cpu-ref reference: the kernels and core layers.
# shellcheck disable=SC2086
cc -std=c11 -D_GNU_SOURCE -O2 $ARCH_FLAGS -fopenmp -Wall -Wextra -Iharness -Ikernels tools/cuda_selftest.c \
  "$B/libhb_kernels.a" "$B/libhb_core.a" $LDLIBS -o "$B/cuda_selftest"

# Gather.
rm -rf "$G/build" "$G/lib" "$G/workloads" "$G/benchdnn"
mkdir -p "$G/build/tests" "$G/lib"
for f in hybench hb_cuda.so hb_opencl.so cuda_selftest gguf_matmul; do
  [ -e "$B/$f" ] && cp "$B/$f" "$G/build/"
done
cp "$B/tests/test_cuda" "$B/tests/test_opencl" "$B/tests/test_opencl_ops" "$B/tests/test_cuda_collective" "$B/tests/test_collective" "$B/tests/test_cpu_attn_isa" \
  "$B/tests/test_cpu_dnnl_gemm" "$G/build/tests/"
[ -d "$B/opencl" ] && cp -r "$B/opencl" "$G/build/"
cp -r workloads "$G/"
# (the benchdnn problem lists travel with them: workloads/benchdnn/, found beside build/hybench)
# Debug info is not needed there and costs transfer size.
strip --strip-debug "$G"/build/* "$G"/build/tests/* 2>/dev/null || true

# Shared libraries from ldd, except the C runtime and what must come from the device (CUDA, driver).
# OpenSSL's libcrypto and libssl (pulled in by libpq, the history store) are on the lent GPU machine's
# Ubuntu 24.04 (runs there without them, 2026-11-23); bundled, they put the carry over its 64 MiB
# limit. The rest of libpq's dependencies (LDAP, SASL, Kerberos, GnuTLS) are not all there: bundled.
skip_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libresolv\.so|libstdc\+\+\.so|libgcc_s\.so|libcuda\.so|libcudart|libcublas|libcudnn|libnvidia|libnvrtc|libnvJitLink|libcrypto\.so|libssl\.so)'
for bin in "$G"/build/hybench "$G"/build/*.so "$G"/build/cuda_selftest "$G"/build/tests/test_*; do
  [ -e "$bin" ] || continue
  ldd "$bin" 2>/dev/null | awk '/=> \// {print $1, $3}' | while read -r name path; do
    if [[ "$name" =~ $skip_re ]]; then continue; fi
    [ -e "$G/lib/$name" ] || cp -L "$path" "$G/lib/$name"
  done
done

cat > "$G/run.sh" <<'EOF'
#!/usr/bin/env bash
# Run hybench from the bundle made by tools/gpu_bundle.sh (on the device machine).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HB_NO_INSTALL=1
# OpenBLAS 0.3.21 (the bundled Debian build, DYNAMIC_ARCH) does not know the device's Xeon model and
# falls back to its Prescott (SSE3) kernels: sgemm at a fraction of the machine. Name the core type
# from the CPU's flags unless the caller chose one.
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  if grep -qw avx512f /proc/cpuinfo; then export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo; then export OPENBLAS_CORETYPE=Haswell; fi
fi
export HB_PLUGIN_DIR="$here/build"
export HB_KERNEL_DIR="${HB_KERNEL_DIR:-$here/build/opencl}"
case "${1:-}" in
  --selftest) shift; exec "$here/build/cuda_selftest" "$@" ;;
  --test) shift; exec "$here/build/tests/test_cuda" "$@" ;;
  --test-opencl) shift; "$here/build/tests/test_opencl" "$@" || exit; exec "$here/build/tests/test_opencl_ops" "$@" ;;
  --test-cpu) shift; "$here/build/tests/test_cpu_attn_isa" "$@" || exit; exec "$here/build/tests/test_cpu_dnnl_gemm" "$@" ;;
  --test-collective) shift; "$here/build/tests/test_collective" "$@" || exit; exec "$here/build/tests/test_cuda_collective" "$@" ;;
esac
exec "$here/build/hybench" "$@"
EOF
chmod +x "$G/run.sh"
echo "gpu_bundle: $(du -sh "$G" | cut -f1) in $G; libraries bundled: $(ls "$G/lib" | tr '\n' ' ')" >&2
