# hybench Makefile. Targets: all (default), test, clean, deps, cuda-plugin, check-warnings.
# Options (tri-state where a dependency is optional, stress-ng/Lua style):
#   WITH_OPENCL=auto|yes|no   WITH_CUDA=auto|yes|no   ARCH=-march=native   SANITIZE=address,undefined
#   WERROR=1 (CI)
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
CFLAGS  += -DHB_GIT_COMMIT='"$(GIT_COMMIT)"' -DHB_CFLAGS='"$(OPT) $(ARCH) -fopenmp"'
# One thread runtime per process: Debian's OpenMP build of OpenBLAS, so that OpenBLAS and hybench's own
# OpenMP loops (conversion, cpu kernels) share libgomp's one pool and no phase's threads spin on the
# cores another phase computes on (the pthread build keeps its own pool). Linked by path with a run
# path, because Debian's alternatives would otherwise resolve libopenblas.so.0 to the pthread build.
BLAS_DIR ?= $(firstword $(wildcard /usr/lib/$(shell gcc -print-multiarch 2>/dev/null)/openblas-openmp) /usr/lib/x86_64-linux-gnu/openblas-openmp)
BLAS_INC ?= $(patsubst /usr/lib/%/openblas-openmp,/usr/include/%/openblas-openmp,$(BLAS_DIR))
BLAS_LIBS := -L$(BLAS_DIR) -Wl,-rpath,$(BLAS_DIR) -lopenblas
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(ARCH) -g -fopenmp -fPIC $(WARN) -Iharness -Ikernels \
           $(shell pkg-config --cflags hwloc jansson inih 2>/dev/null) -I$(BLAS_INC)
LDLIBS  := $(shell pkg-config --libs hwloc jansson inih 2>/dev/null) $(BLAS_LIBS) -lm -ldl -fopenmp
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SANITIZE)
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
# `make` and `make test` first install missing Debian packages (tools/install_deps.sh), then build
# in a fresh make so that pkg-config sees what was installed.
all:
	@./tools/install_deps.sh
	@$(MAKE) --no-print-directory build
build: info $(BUILD)/hybench $(PLUGINS)

info:
	@echo "hybench build: OpenCL plugin: $(if $(HAVE_OPENCL),yes,no (WITH_OPENCL=$(WITH_OPENCL), CL/cl.h $(if $(wildcard /usr/include/CL/cl.h),found,missing))); CUDA plugin: $(if $(HAVE_CUDA),yes ($(NVCC)),no (WITH_CUDA=$(WITH_CUDA)))"

deps:
	@./tools/install_deps.sh

$(BUILD)/%.o: %.c $(wildcard harness/*/*.h) $(wildcard kernels/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# meta.c records the commit and flags the binary was built from: rebuild it whenever they change
# (a stamp rewritten only when its text differs, so an unchanged tree rebuilds nothing).
$(BUILD)/build-id.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_COMMIT) $(OPT) $(ARCH)' | cmp -s - $@ || echo '$(GIT_COMMIT) $(OPT) $(ARCH)' > $@
$(BUILD)/harness/measure/meta.o: $(BUILD)/build-id.stamp
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
$(BUILD)/kernels/cuda/%.cu.o: kernels/cuda/%.cu $(wildcard kernels/cuda/*.h) harness/core/hybench.h harness/core/backend.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
$(BUILD)/hb_cuda.so: $(patsubst %.cu,$(BUILD)/%.cu.o,$(CUDA_SRC)) $(patsubst %.c,$(BUILD)/%.o,$(CUDA_CSRC))
	$(NVCC) -shared -o $@ $^ -L$(CUDA_HOME)/lib64 -lcudart -lcublas -lcublasLt -lcudnn -ldl \
	  -Xlinker -rpath -Xlinker '$$ORIGIN'

# Each test links the layer it tests and the layers below it (TEST_TOP_<name>, default: cli, all).
TEST_TOP_test_rstats     := core
TEST_TOP_test_convert    := core
TEST_TOP_test_stats      := measure
TEST_TOP_test_clock      := measure
TEST_TOP_test_workload   := workload
TEST_TOP_test_benchdnn   := workload
TEST_TOP_test_cpu_kernels := measure
TEST_TOP_test_cuda       := kernels
TEST_TOP_test_opencl     := kernels
TEST_TOP_test_modecheck  := report
layers_upto  = $(firstword $(2))$(if $(filter $(1),$(firstword $(2))),, $(call layers_upto,$(1),$(wordlist 2,$(words $(2)),$(2))))
test_libs    = $(call lib_of,$(call reverse,$(call layers_upto,$(or $(TEST_TOP_$(1)),cli),$(LAYERS))))
.SECONDEXPANSION:
$(BUILD)/tests/%: tests/%.c $$(call test_libs,$$*)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-prototypes -Itests $(shell pkg-config --cflags libxml-2.0 2>/dev/null) -o $@ $< \
	  $(call test_libs,$*) $(LDLIBS) -lcmocka $(shell pkg-config --libs libxml-2.0 2>/dev/null)

test:
	@./tools/install_deps.sh
	@$(MAKE) --no-print-directory test-run
test-run: build $(TEST_BIN)
	@./tests/run_tests.sh $(TEST_BIN)

clean:
	rm -rf $(BUILD)

print-%:
	@echo $($*)
