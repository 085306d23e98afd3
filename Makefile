# hybench Makefile. Targets: all (default), test, clean, deps, cuda-plugin, check-warnings,
#   test-sanitize (the cmocka tests under ASan+UBSan, a pointer into a returned function's stack
#   frame caught too: detect_stack_use_after_return=1), fuzz (libFuzzer targets, docs/fuzzing.md).
# Options (tri-state where a dependency is optional, stress-ng/Lua style):
#   WITH_OPENCL=auto|yes|no   WITH_CUDA=auto|yes|no   WITH_ONEDNN=auto|yes|no   ARCH=-march=native   SANITIZE=address,undefined
#   WERROR=1 (CI)   PLANT=1 (tests and acceptance of the merge gate only: the HB_PLANT environment
#   variable then slows chosen ops by a known factor, docs/compare.md "Planted slowdowns"; off by default)
CC      ?= gcc
ARCH    ?= -march=native
OPT     ?= -O3
WARN    := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wdouble-promotion \
           -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN    += -Werror
endif
CFLAGS  ?=
GIT_COMMIT := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
PLANT   ?= 0
PLANT_FLAG := $(if $(filter 1,$(PLANT)),-DHB_PLANT)
CFLAGS  += -DHB_GIT_COMMIT='"$(GIT_COMMIT)"' -DHB_CFLAGS='"$(OPT) $(ARCH) -fopenmp$(if $(PLANT_FLAG), $(PLANT_FLAG))"' $(PLANT_FLAG)
# One thread runtime per process: Debian's OpenMP build of OpenBLAS, so that OpenBLAS and hybench's own
# OpenMP loops (conversion, cpu kernels) share libgomp's one pool and no phase's threads spin on the
# cores another phase computes on (the pthread build keeps its own pool). Linked by path with a run
# path, because Debian's alternatives would otherwise resolve libopenblas.so.0 to the pthread build.
BLAS_DIR ?= $(firstword $(wildcard /usr/lib/$(shell gcc -print-multiarch 2>/dev/null)/openblas-openmp) /usr/lib/x86_64-linux-gnu/openblas-openmp)
BLAS_INC ?= $(patsubst /usr/lib/%/openblas-openmp,/usr/include/%/openblas-openmp,$(BLAS_DIR))
BLAS_LIBS := -L$(BLAS_DIR) -Wl,-rpath,$(BLAS_DIR) -lopenblas
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(ARCH) -g -fopenmp -fPIC $(WARN) -Iharness -Ikernels \
           $(shell pkg-config --cflags hwloc jansson inih sqlite3 libpq 2>/dev/null) -I$(BLAS_INC)
LDLIBS  := $(shell pkg-config --libs hwloc jansson inih sqlite3 libpq 2>/dev/null) $(BLAS_LIBS) -lm -ldl -fopenmp
# SLEEF (vector expf/tanhf for the cpu backend's gelu and silu, Debian libsleef-dev) when installed;
# without it those two ops run hybench's own polynomial exp (fexp in kernels/cpu/cpu_priv.h).
ifeq ($(shell pkg-config --exists sleef 2>/dev/null && echo y),y)
CFLAGS  += -DHB_HAVE_SLEEF $(shell pkg-config --cflags sleef)
LDLIBS  += $(shell pkg-config --libs sleef)
endif
# oneDNN (conv2d, matmul and bmm of the cpu backend, kernels/cpu/cpu_dnnl.c and cpu_dnnl_gemm.c; Debian
# libdnnl-dev, its OpenMP build, so it shares libgomp's pool) when its header and library are found
# (Debian ships no pkg-config file); without it conv2d runs the own im2col + sgemm path and matmul/bmm
# OpenBLAS, and each case's extra.conv_choice / extra.gemm_choice says so.
WITH_ONEDNN ?= auto
HAVE_ONEDNN := $(shell test -f /usr/include/oneapi/dnnl/dnnl.h && test -e "$$($(CC) -print-file-name=libdnnl.so)" && echo 1)
ifeq ($(WITH_ONEDNN),no)
HAVE_ONEDNN :=
endif
ifeq ($(WITH_ONEDNN)$(HAVE_ONEDNN),yes)
$(error WITH_ONEDNN=yes but oneapi/dnnl/dnnl.h or libdnnl.so not found: apt-get install libdnnl-dev)
endif
ifeq ($(HAVE_ONEDNN),1)
CFLAGS  += -DHB_HAVE_DNNL
LDLIBS  += -ldnnl
endif
# gelu/silu's AVX-512 loop (kernels/cpu/ew_avx512.c) is compiled with AVX-512 on every x86-64 build
# and chosen at run time from cpuid, so a build for AVX2 (ARCH=-march=x86-64-v3, the GPU bundle) runs
# it on an AVX-512 CPU and an AVX-512 build's binary is the same code as the bundle's.
ifneq ($(filter x86_64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
AVX512_FLAGS := -mavx512f -mfma
endif
# A sanitizer finding is fatal (UBSan would otherwise print and go on, and a test would pass).
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all
endif
BUILD   := build
WITH_OPENCL ?= auto
WITH_CUDA   ?= auto
NVCC    ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))

# The layers of harness/ (docs/architecture.md), bottom first. Each is one static library that may
# use only the layers before it; hybench links them top layer first, without --start-group, so a call
# from a lower layer to a higher one is an undefined symbol (tools/check_layers.sh names it).
LAYERS      := core kernels workload results analysis report measure cli
SRC_core     := $(wildcard harness/core/*.c)
# every kernels/<name>/ folder is linked in, except the plugins built below as their own .so
PLUGIN_DIRS  := opencl cuda
SRC_kernels  := $(filter-out $(foreach d,$(PLUGIN_DIRS),kernels/$(d)/%),$(wildcard kernels/*/*.c))
SRC_workload := $(wildcard harness/workload/*.c)
SRC_results  := $(wildcard harness/results/*.c)
SRC_analysis := $(wildcard harness/analysis/*.c)
SRC_report   := $(wildcard harness/report/*.c)
SRC_measure  := $(wildcard harness/measure/*.c)
SRC_cli      := $(filter-out harness/cli/main.c,$(wildcard harness/cli/*.c))
reverse      = $(if $(1),$(call reverse,$(wordlist 2,$(words $(1)),$(1))) $(firstword $(1)))
lib_of       = $(foreach L,$(1),$(BUILD)/libhb_$(L).a)
# Link order of everything: cli measure report analysis results workload kernels core.
LIBS        := $(call lib_of,$(call reverse,$(LAYERS)))
TEST_SRC    := $(wildcard tests/test_*.c)
TEST_BIN    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))

# --- optional plugins, probed once ---
HAVE_OPENCL := $(shell test -f /usr/include/CL/cl.h && echo 1)
ifeq ($(WITH_OPENCL),no)
HAVE_OPENCL :=
endif
ifeq ($(WITH_OPENCL)$(HAVE_OPENCL),yes)
$(error WITH_OPENCL=yes but CL/cl.h not found: apt-get install opencl-headers ocl-icd-opencl-dev)
endif
HAVE_CUDA := $(if $(NVCC),1)
ifeq ($(WITH_CUDA),no)
HAVE_CUDA :=
endif
ifeq ($(WITH_CUDA)$(HAVE_CUDA),yes)
$(error WITH_CUDA=yes but nvcc not found)
endif
PLUGINS := $(if $(HAVE_OPENCL),$(if $(wildcard kernels/opencl/*.c),$(BUILD)/hb_opencl.so)) \
           $(if $(HAVE_CUDA),$(if $(wildcard kernels/cuda/*.cu),$(BUILD)/hb_cuda.so))

.PHONY: all build test test-run clean deps info FORCE
# `make` and `make test` first install missing Debian packages (tools/install_deps.sh; `make test`
# adds the test-only ones: cmocka, libxml2, the headless browser), then build in a fresh make so that
# pkg-config sees what was installed. Without root: `make build` / `make test-run` (or
# HB_NO_INSTALL=1) skip the installing step when the packages are present.
all:
	@./tools/install_deps.sh
	@$(MAKE) --no-print-directory build
build: info $(BUILD)/hybench $(BUILD)/synth_history $(PLUGINS)

info:
	@echo "hybench build: OpenCL plugin: $(if $(HAVE_OPENCL),yes,no (WITH_OPENCL=$(WITH_OPENCL), CL/cl.h $(if $(wildcard /usr/include/CL/cl.h),found,missing))); CUDA plugin: $(if $(HAVE_CUDA),yes ($(NVCC)),no (WITH_CUDA=$(WITH_CUDA))); oneDNN (cpu conv2d, matmul, bmm): $(if $(HAVE_ONEDNN),yes,no (WITH_ONEDNN=$(WITH_ONEDNN)))"

deps:
	@./tools/install_deps.sh

$(BUILD)/%.o: %.c $(wildcard harness/*/*.h) $(wildcard kernels/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

%/kernels/cpu/ew_avx512.o: CFLAGS += $(AVX512_FLAGS)
# attention's micro-kernel is written with vector types: a*b + c must become FMAs (-std=c11 turns
# contraction off otherwise). Its body (attn_body.h) is compiled twice: 8 wide in cpu_attn.c with the
# build's -march, 16 wide in attn_avx512.c with AVX-512 on every x86-64 build, chosen per call from
# cpuid (cpu_attn.c attn_width), as gelu/silu's ew_avx512.c is.
%/kernels/cpu/cpu_attn.o: CFLAGS += -ffp-contract=fast
%/kernels/cpu/attn_avx512.o: CFLAGS += $(AVX512_FLAGS) -ffp-contract=fast

# meta.c records the commit and flags the binary was built from: rebuild it whenever they change
# (a stamp rewritten only when its text differs, so an unchanged tree rebuilds nothing).
$(BUILD)/build-id.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_COMMIT) $(OPT) $(ARCH) $(PLANT_FLAG)' | cmp -s - $@ || echo '$(GIT_COMMIT) $(OPT) $(ARCH) $(PLANT_FLAG)' > $@
$(BUILD)/harness/measure/meta.o: $(BUILD)/build-id.stamp
# cpu_dnnl.c and cpu_dnnl_gemm.c are compiled with or without oneDNN (HB_HAVE_DNNL): rebuild them when that changes, so that an
# object calling oneDNN is never linked without -ldnnl (a stamp rewritten only when its text differs)
$(BUILD)/onednn.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo 'onednn=$(HAVE_ONEDNN)' | cmp -s - $@ || echo 'onednn=$(HAVE_ONEDNN)' > $@
$(BUILD)/kernels/cpu/cpu_dnnl.o $(BUILD)/kernels/cpu/cpu_dnnl_gemm.o: $(BUILD)/onednn.stamp
# The f64 references' on-disk cache (measure/refcache.h) keys its entries by the version of the code
# that computes them: a hash of kernels/cpu_ref's sources, core/ops.c (tensor sizes), the compiler
# and the flags; refcache.o is rebuilt when any of them changes.
REF_SRCS    := $(wildcard kernels/cpu_ref/*.c kernels/cpu_ref/*.h) harness/core/ops.c
REF_VERSION := $(shell { cat $(REF_SRCS); $(CC) --version 2>/dev/null | head -1; echo '$(OPT) $(ARCH) $(SANITIZE)'; } | sha256sum | cut -c1-16)
$(BUILD)/harness/measure/refcache.o: CFLAGS += -DHB_REF_VERSION='"$(REF_VERSION)"'
$(BUILD)/harness/measure/refcache.o: $(REF_SRCS) $(BUILD)/build-id.stamp
# the planted-slowdown hook (PLANT=1) is compiled into these two: rebuild them when PLANT changes
$(BUILD)/harness/measure/sample.o $(BUILD)/harness/measure/plant.o: $(BUILD)/build-id.stamp
FORCE:

$(foreach L,$(LAYERS),$(eval $(BUILD)/libhb_$(L).a: $(patsubst %.c,$(BUILD)/%.o,$(SRC_$(L)))))
$(BUILD)/libhb_%.a:
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/hybench: $(BUILD)/harness/cli/main.o $(LIBS)
	@./tools/check_layers.sh $(call lib_of,$(LAYERS))
	$(CC) $(LDFLAGS) -rdynamic -o $@ $(BUILD)/harness/cli/main.o $(LIBS) $(LDLIBS)

# OpenCL plugin: kernels/opencl/*.c, linked against the ocl-icd loader; .cl files are read at run
# time from kernels/opencl/ (HB_KERNEL_DIR) and copied beside the plugin.
OCL_SRC := $(wildcard kernels/opencl/*.c)
$(BUILD)/hb_opencl.so: $(patsubst %.c,$(BUILD)/%.o,$(OCL_SRC)) $(wildcard kernels/opencl/*.cl)
	@mkdir -p $(BUILD)/opencl
	cp kernels/opencl/*.cl $(BUILD)/opencl/ 2>/dev/null || true
	$(CC) -shared -o $@ $(filter %.o,$^) $(shell pkg-config --libs OpenCL 2>/dev/null || echo -lOpenCL) \
	  $(shell test -e /usr/lib/x86_64-linux-gnu/libclblast.so && echo -lclblast) \
	  $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm -fopenmp

# CUDA plugin: kernels/cuda/*.cu and *.c, sm_90 SASS plus compute_90 PTX; links cudart, cuBLAS,
# cuBLASLt and cuDNN dynamically (loaded by dlopen of the plugin, so a machine without the driver
# still runs every other backend). NVML is not linked: this build machine has no libnvidia-ml, so the
# plugin dlopens libnvidia-ml.so.1 at run time.
NVCCFLAGS ?= -O3 -std=c++17 -Xcompiler -fPIC -gencode=arch=compute_90,code=sm_90 \
             -gencode=arch=compute_90,code=compute_90 -Iharness -Ikernels -lineinfo
CUDA_SRC  := $(wildcard kernels/cuda/*.cu)
CUDA_CSRC := $(wildcard kernels/cuda/*.c)
# cuDNN's header-only C++ frontend (cuda_sdpa.cpp, cuda_conv.cpp) is fetched from PyPI into
# build/cudnn-frontend by tools/fetch_cudnn_frontend.sh (never copied into the repository); when the
# fetch fails the plugin still builds and its attention cases say cuDNN SDPA is unavailable.
CUDNN_FE_DIR ?= build/cudnn-frontend
$(CUDNN_FE_DIR)/.fetched:
	@mkdir -p $(CUDNN_FE_DIR)
	-./tools/fetch_cudnn_frontend.sh $(CUDNN_FE_DIR)
	@touch $@
$(BUILD)/kernels/cuda/%.cu.o: kernels/cuda/%.cu $(wildcard kernels/cuda/*.h) harness/core/hybench.h harness/core/opdesc.h harness/core/quant.h harness/core/backend.h harness/core/config.h harness/core/launch.h harness/core/rendezvous.h | $(CUDNN_FE_DIR)/.fetched
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -isystem $(CUDNN_FE_DIR)/include -c $< -o $@
# Host-only C++ of the plugin (the cudnn-frontend users): g++, not nvcc, since nvcc would also run the
# device front end over the frontend's large headers (minutes per file, for no device code).
# NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING: the frontend reaches cuDNN, cudart and NVRTC through dlopen
# and guards every feature by the loaded cuDNN's version (headers 9.19 here, 9.14 on the GPU machine);
# it also keeps NVRTC (used only by its experimental sm100 engines) out of the plugin's link.
CUDA_CXXSRC := $(wildcard kernels/cuda/*.cpp)
$(BUILD)/kernels/cuda/%.cpp.o: kernels/cuda/%.cpp $(wildcard kernels/cuda/*.h) harness/core/hybench.h harness/core/backend.h harness/core/config.h | $(CUDNN_FE_DIR)/.fetched
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -fPIC -Wall -Wextra -Wno-unused-parameter -Iharness -Ikernels -I$(CUDA_HOME)/include \
	  -DNV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING $(CUDA_CXXDEFS) \
	  -isystem $(CUDNN_FE_DIR)/include -c $< -o $@
# The algorithm-choice cache (HB_ALGO_CACHE, kernels/cuda/cuda_choice_cache.cpp) keys its entries by the
# code that makes each choice: a hash of the conv2d choice's sources (and the attention choice's: the
# SDPA choice and the own kernels it is timed against), nvcc's version and NVCCFLAGS. A build whose
# choice code differs never reads another build's entries. Evaluated only when that object is built.
CONV_CHOICE_SRCS := kernels/cuda/cuda_conv_pool.cu kernels/cuda/cuda_conv.cpp kernels/cuda/cuda_transpose.cu kernels/cuda/cuda_conv_gemm.cu
ATTN_CHOICE_SRCS := kernels/cuda/cuda_sdpa.cpp kernels/cuda/cuda_attention.cu kernels/cuda/cuda_attn_tf32.cu kernels/cuda/cuda_attn_common.h
choice_version = $(shell { cat $(1); $(NVCC) --version 2>/dev/null | tail -1; echo '$(NVCCFLAGS)'; } | sha256sum | cut -c1-16)
$(BUILD)/kernels/cuda/cuda_choice_cache.cpp.o: CUDA_CXXDEFS = -DHBC_CONV_CHOICE_VERSION='"$(call choice_version,$(CONV_CHOICE_SRCS))"' \
  -DHBC_ATTN_CHOICE_VERSION='"$(call choice_version,$(ATTN_CHOICE_SRCS))"'
$(BUILD)/kernels/cuda/cuda_choice_cache.cpp.o: $(CONV_CHOICE_SRCS) $(ATTN_CHOICE_SRCS)
$(BUILD)/hb_cuda.so: $(patsubst %.cu,$(BUILD)/%.cu.o,$(CUDA_SRC)) $(patsubst %.cpp,$(BUILD)/%.cpp.o,$(CUDA_CXXSRC)) \
                     $(patsubst %.c,$(BUILD)/%.o,$(CUDA_CSRC))
	$(NVCC) -shared -o $@ $^ -L$(CUDA_HOME)/lib64 -lcudart -lcublas -lcublasLt -lcudnn -ljansson -ldl \
	  -Xlinker -rpath -Xlinker '$$ORIGIN'

# Each test links the layer it tests and the layers below it (TEST_TOP_<name>, default: cli, all).
TEST_TOP_test_rstats     := core
TEST_TOP_test_convert    := core
TEST_TOP_test_quant      := core
TEST_TOP_test_stats      := measure
TEST_TOP_test_clock      := measure
TEST_TOP_test_workload   := workload
TEST_TOP_test_gatelist   := workload
TEST_TOP_test_benchdnn   := workload
TEST_TOP_test_gguf       := workload
TEST_TOP_test_cpu_kernels := measure
TEST_TOP_test_cpu_ref     := kernels
TEST_TOP_test_cpu_quant  := kernels
TEST_TOP_test_cpu_dnnl   := measure
TEST_TOP_test_cpu_attn_isa := measure
TEST_TOP_test_cpu_dnnl_gemm := measure
TEST_TOP_test_cuda       := kernels
TEST_TOP_test_opencl     := kernels
TEST_TOP_test_opencl_ops := kernels
TEST_TOP_test_modecheck  := report
TEST_TOP_test_changepoint := analysis
TEST_TOP_test_plan       := analysis
TEST_TOP_test_store      := results
TEST_TOP_test_records    := results
TEST_TOP_test_record_write := results
TEST_TOP_test_site       := report
TEST_TOP_test_collective := measure
TEST_TOP_test_cuda_collective := kernels
TEST_TOP_test_chain_tp   := measure
TEST_TOP_test_replay     := measure
TEST_TOP_test_rounds     := measure
TEST_TOP_test_refcache   := measure
TEST_TOP_test_verify     := measure
TEST_TOP_test_model      := measure
# the CUDA plugin's algorithm-choice cache files (plain C, no CUDA): its object linked into the test
TEST_TOP_test_algocache  := core
TEST_OBJS_test_algocache := $(BUILD)/kernels/cuda/cuda_algocache.o
TEST_OBJS_test_cuda      := $(BUILD)/kernels/cuda/cuda_algocache.o
layers_upto  = $(firstword $(2))$(if $(filter $(1),$(firstword $(2))),, $(call layers_upto,$(1),$(wordlist 2,$(words $(2)),$(2))))
test_libs    = $(call lib_of,$(call reverse,$(call layers_upto,$(or $(TEST_TOP_$(1)),cli),$(LAYERS))))
.SECONDEXPANSION:
# tools/gguf_matmul.c: hybench's quantized matmul on a GGUF w/x pair for the output check against ggml
# (docs/ggml.md; tests/check_ggml_agree.sh); every layer up to cli's (the GGUF reader and writer, the
# backend registry that loads the plugins).
$(BUILD)/gguf_matmul: tools/gguf_matmul.c $(call test_libs,gguf_matmul)
	$(CC) $(CFLAGS) -o $@ $< $(call test_libs,gguf_matmul) $(LDLIBS)
$(BUILD)/tests/%: tests/%.c $(wildcard tests/*.h) $$(call test_libs,$$*) $$(TEST_OBJS_$$*)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-prototypes -Itests $(shell pkg-config --cflags libxml-2.0 2>/dev/null) -o $@ $< \
	  $(TEST_OBJS_$*) $(call test_libs,$*) $(LDLIBS) -lcmocka $(shell pkg-config --libs libxml-2.0 2>/dev/null)

test:
	@./tools/install_deps.sh test
	@$(MAKE) --no-print-directory test-run
test-run: build $(TEST_BIN) plant-build results/h100-reference.jsonl
	@./tests/run_tests.sh $(TEST_BIN)
# The GPU reference run the report tests and the roofline check read (tools/gpu_run.md: an H100 run
# of 2026-11-26, 1161 cases): kept compressed under tests/data, unpacked here for the tests. A results
# file of the same name that is already there (a newer run of one's own) is left as it is.
results/h100-reference.jsonl: | tests/data/h100-reference.jsonl.gz
	gzip -dc tests/data/h100-reference.jsonl.gz > $@.tmp && mv $@.tmp $@
# the planted-slowdown build (PLANT=1) that the merge gate's end-to-end tests run (tests/check_ab.sh;
# tests/check_gate_instr.sh runs it under valgrind, which has no AVX-512: hence -march=x86-64-v3)
.PHONY: plant-build
plant-build:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/plant PLANT=1 WITH_CUDA=no ARCH=-march=x86-64-v3 $(BUILD)/plant/hybench
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/plant PLANT=1 WITH_CUDA=no ARCH=-march=x86-64-v3 $(BUILD)/plant/hb_opencl.so \
	  || echo "plant-build: no OpenCL plugin (the planted build runs cpu-ref and cpu only)"

clean:
	rm -rf $(BUILD)

# --- sanitizers: the cmocka tests built with SANITIZE=address,undefined into their own tree ---
# Only the unit tests: tests/run_tests.sh's end-to-end checks run build/hybench, the normal build.
# Counts like run_tests.sh and ends with "sanitize: N passed, N failed". UBSan stops at the first
# finding (-fno-sanitize-recover above) and prints its stack; ASan's leak check stays on.
SAN_BUILD ?= build/asan
.PHONY: test-sanitize test-sanitize-run
test-sanitize:
	@./tools/install_deps.sh test
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) SANITIZE=address,undefined OPT=-O1 WITH_CUDA=no test-sanitize-run
test-sanitize-run: $(BUILD)/hybench $(PLUGINS) $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC)) results/h100-reference.jsonl
	@pass=0; fail=0; failed=""; \
	for t in $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC)); do \
	  n=$$(basename $$t); \
	  out=$$(UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_stack_use_after_return=1 $$t 2>&1); rc=$$?; \
	  printf '%s\n' "$$out" | sed "s/^/[asan $$n] /"; \
	  p=$$(printf '%s\n' "$$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$$1} END {print s+0}'); \
	  f=$$(printf '%s\n' "$$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$$1} END {print s+0}'); \
	  if [ $$rc -ne 0 ] && [ $$f -eq 0 ]; then f=1; fi; \
	  pass=$$((pass + p)); fail=$$((fail + f)); [ $$f -gt 0 ] && failed="$$failed $$n"; \
	done; \
	[ -n "$$failed" ] && echo "sanitize: failed:$$failed"; \
	echo "sanitize: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# --- fuzzing (docs/fuzzing.md): libFuzzer targets tests/fuzz/fuzz_<name>.c, linked against the
# layer libraries built by clang with -fsanitize=fuzzer-no-link,address,undefined into build/fuzz.
# `make fuzz FUZZ_SECONDS=60` runs each target that long on its seed corpus tests/fuzz/corpus/<name>/
# (new inputs kept in build/fuzz/corpus/<name>/) and fails on any crash, leak, UB, timeout or OOM;
# the reproducer is written to build/fuzz/artifacts/<name>/. `make fuzz-build` only builds.
# `make fuzz-repro` re-runs every recorded reproducer under tests/fuzz/crashes/<name>/.
FUZZ_CC      ?= clang
FUZZ_BUILD   ?= build/fuzz
FUZZ_SECONDS ?= 60
# a fixed seed: a run that finds something finds it again with the same command
FUZZ_SEED    ?= 1
FUZZ_FLAGS   ?= -seed=$(FUZZ_SEED) -timeout=30 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
# the top layer each target links (it and the layers below it, as the tests' TEST_TOP_); no target
# needs measure/ or cli/, which are not built here
FUZZ_TOP_workload := workload
FUZZ_TOP_benchdnn := workload
FUZZ_TOP_gguf     := workload
FUZZ_TOP_results  := results
FUZZ_TOP_report   := report
fuzz_libs = $(foreach L,$(call reverse,$(call layers_upto,$(or $(FUZZ_TOP_$(1)),report),$(LAYERS))),$(FUZZ_BUILD)/libhb_$(L).a)
FUZZ_SAN     := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
.PHONY: fuzz fuzz-build fuzz-deps fuzz-libs fuzz-repro
fuzz-deps:
	@./tools/install_deps.sh fuzz
fuzz-libs: fuzz-deps
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) ARCH= OPT=-O1 \
	  SANITIZE=fuzzer-no-link,address,undefined WITH_CUDA=no WITH_OPENCL=no \
	  $(foreach L,$(call layers_upto,report,$(LAYERS)),$(FUZZ_BUILD)/libhb_$(L).a)
fuzz-build: fuzz-libs
	@$(MAKE) --no-print-directory $(foreach t,$(FUZZ_TARGETS),$(FUZZ_BUILD)/fuzz_$(t))
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $$(call fuzz_libs,$$*)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 $(FUZZ_SAN) -Iharness -Ikernels -Itests/fuzz \
	  $(shell pkg-config --cflags jansson hwloc inih 2>/dev/null) -o $@ $< $(call fuzz_libs,$*) $(LDLIBS)
fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/artifacts/$$t; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) \
	    -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t/ $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t \
	    > $(FUZZ_BUILD)/fuzz_$$t.log 2>&1 || { tail -n 60 $(FUZZ_BUILD)/fuzz_$$t.log; \
	      echo "fuzz: $$t FAILED; reproducer: $$(ls $(FUZZ_BUILD)/artifacts/$$t/)"; exit 1; }; \
	  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' $(FUZZ_BUILD)/fuzz_$$t.log | sed "s/^/fuzz: $$t /"; \
	done; echo "fuzz: $(words $(FUZZ_TARGETS)) targets, $(FUZZ_SECONDS) s each, no crash"
fuzz-repro: fuzz-build
	@rc=0; for t in $(FUZZ_TARGETS); do \
	  for c in tests/fuzz/crashes/$$t/*; do [ -f "$$c" ] || continue; \
	    echo "fuzz-repro: $$t $$c"; $(FUZZ_BUILD)/fuzz_$$t $$c || rc=1; done; \
	done; exit $$rc

print-%:
	@echo $($*)

# tools/synth_history.c: a synthetic nightly history in a store (docs/history.md, the scale check)
$(BUILD)/synth_history: tools/synth_history.c $(call lib_of,results core)
	$(CC) $(CFLAGS) -o $@ $< $(call lib_of,results core) $(LDLIBS)
