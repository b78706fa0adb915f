# flash-attention-from-first-principles: one Makefile for every chapter.
#
#   make                 build every chapter present (chNN/run)
#   make ch03            build one chapter;   ./ch03/run --help
#   make test            build and run every test (installs Criterion when missing and root)
#   make test-ch02       one chapter's tests
#   make reproduce       build, run every chapter at the article's configuration, draw the plots
#   make plots           roofline plots from the latest results (results/latest)
#   make report          every claim of ARTICLES.md: the article, our model, our measurement (results/latest; no GPU)
#   make docs            the measured tables of the chapter READMEs, from the committed results (no GPU)
#   make docs-check      exit 1 where a README differs from what `make docs` writes (a test of `make test`)
#   make compare BASE=results/NVIDIA_H200 NEW=DIR [COMPARE_TOL=0.05]   a run against another: bytes equal, times within 10%
#   make profile CH=02 [ARGS="--seq 4096"]  ncu on a chapter: model | counted | DRAM bytes side by side
#   make ARCH=90 ...     build for one architecture (default: this GPU's, else sm_75..sm_90 + PTX)
#   make DEBUG_WAITS=1 ... mbarrier waits that give up with a message instead of hanging (chapter 06 on)
#   make PTX=75 ...      the code of one architecture as PTX alone (no machine code), in build-ptx75/: the driver
#                        compiles it at the first launch for whatever GPU runs it, with __CUDA_ARCH__ = 750, so a
#                        newer GPU runs the article's sm_75 code path (make PTX=75 test; chapter 06 stays sm_90a)
#   make RESOURCES=1 ... print ptxas resource usage (registers, shared memory, spills; kept in build/**/*.o.ptxas)
#   make SANITIZE=1 test the host code (C files and the link) with AddressSanitizer and UBSan, in build-san/
#                        (the CUDA objects are build/'s: nvcc's are not sanitized either way)
#                        (the programs and test binaries are relinked; a later plain make relinks them back)
#   make digest [DIGEST_ARCH=sm_90]  a digest of each kernel's machine code in the chapter programs
#   make digest-check [RESULTS=results/NVIDIA_H200]  the measured kernels whose code changed since that results
#                        folder's provenance.json recorded it (a test of `make test`)
#   make assignment CH=03 [DEST=dir] [NAME=...]  a student's copy of a chapter, its assignments stubbed out
#                        (default DEST assignment-chNN/; NAME picks some of the chapter's assignments)
#   make grade CH=03 [XML=grade.xml] [TESTS='cpu/*']  build a chapter, run its tests (those of the Criterion
#                        filter TESTS), print a grade sheet and, with XML, write JUnit XML
#   make clean
#   make help            this text
#
# Jobs: as many as this machine has cores, unless -j is given (make -j1 for one at a time).

# ---- parallel by default --------------------------------------------------------------------------------
# GNU make shows a command line's -j only to recipes, so the first make looks at it there and runs the goals
# in a second make, with -j<cores> added when none was given.
ifeq ($(FA_SUBMAKE),)
FA_GOALS := $(or $(MAKECMDGOALS),all)
.PHONY: $(FA_GOALS) fa-dispatch
$(FA_GOALS): fa-dispatch ; @:
fa-dispatch:
	@case " $$MAKEFLAGS" in *" -j"*) jobs= ;; *) jobs=-j$$(nproc 2>/dev/null || echo 1) ;; esac; \
	$(MAKE) --no-print-directory $$jobs FA_SUBMAKE=1 $(FA_GOALS)
else

CUDA       ?= /usr/local/cuda
NVCC       ?= $(CUDA)/bin/nvcc
CC         ?= gcc
BUILD      := $(if $(filter 1,$(SANITIZE)),build-san,$(if $(filter 1,$(DEBUG_WAITS)),build-debug,$(if $(PTX),build-ptx$(PTX),build)))
# The CUDA objects' folder. SANITIZE=1 instruments the C files and the links, not nvcc's objects (their host code
# is compiled without the sanitizers either way): a sanitized build links the plain build's CUDA objects, from
# build/, and compiles them there only where they are missing or out of date (for its ARCH).
CU_BUILD   := $(if $(filter 1,$(SANITIZE)),build,$(BUILD))
TESTBIN    := tests/bin

CHAPTER_DIRS := $(sort $(patsubst %/,%,$(dir $(wildcard [0-9][0-9]_*/kernels.cu))))
CHAPTER_IDS  := $(foreach c,$(CHAPTER_DIRS),$(firstword $(subst _, ,$(c))))

# ---- architectures ---------------------------------------------------------------------------------------
ARCH_FROM := ARCH=$(ARCH) given
ifeq ($(origin ARCH), undefined)
  ARCH_FROM := the GPU of this machine
  ARCH := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '.[:space:]')
endif
ifneq ($(ARCH),)
  GENCODE := -gencode arch=compute_$(ARCH),code=[sm_$(ARCH),compute_$(ARCH)]
  COUNTED_GENCODE := $(GENCODE)
  ARCH_LINE := build: sm_$(ARCH) + PTX ($(ARCH_FROM)); the five of a machine without GPU: make ARCH=
else
  # sm_86 and sm_89 machine code from compute_80's PTX, as sm_80's: one front end (cicc) for the three, since they
  # add no instruction the book uses; a front end for each took a third of the build's time. A CUDA file that
  # tests __CUDA_ARCH__ for 860, 870 or 890 (chapter 01's launch bounds) is compiled from the PTX of each
  # (FULL_GENCODE, below).
  GENCODE := -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=[sm_80,sm_86,sm_89] \
             -gencode arch=compute_90,code=[sm_90,compute_90]
  FULL_GENCODE := $(foreach a,75 80 86 89,-gencode arch=compute_$(a),code=sm_$(a)) \
                  -gencode arch=compute_90,code=[sm_90,compute_90]
  ARCH_SPECIFIC_CU := $(shell grep -l -E '__CUDA_ARCH__ *== *8[6-9]0' $(wildcard [0-9][0-9]_*/*.cu common/*.cu))
  # The instrumented objects (which count bytes, and are never timed) of this build for no one GPU: machine code
  # for sm_90 only (its digests are the record's), PTX for compute_75 and compute_80 that the driver compiles for
  # any other GPU at its first launch. Half the build's time went to them; the timed objects still compile for all five.
  COUNTED_GENCODE := -gencode arch=compute_75,code=compute_75 -gencode arch=compute_80,code=compute_80 \
                     -gencode arch=compute_90,code=[sm_90,compute_90]
  # nvcc compiles an object's five architectures on as many threads as there are CPUs (a file alone at the end of
  # a make -j build no longer takes five times one architecture's time)
  NVCC_THREADS := --threads 0
  ARCH_LINE := build: sm_75 sm_80 sm_86 sm_89 sm_90 + PTX (no GPU found here, or ARCH= given; the instrumented build: sm_90 + PTX); for one, faster: make ARCH=90
endif

# PTX=NN: compute_NN as PTX alone, for every object (the timed and the instrumented build); the GPU's driver turns it
# into machine code at the first launch, as it would for a GPU newer than any the build names.
ifneq ($(PTX),)
  GENCODE := -gencode arch=compute_$(PTX),code=compute_$(PTX)
  COUNTED_GENCODE := $(GENCODE)
  ARCH_LINE := build: compute_$(PTX) PTX only (PTX=$(PTX)), in $(BUILD)/: the driver compiles it for the GPU at the first launch, with __CUDA_ARCH__ = $(PTX)0
endif
# GENCODE=... given on the command line is what every object is built for: the line says so.
ifeq ($(origin GENCODE),command line)
  ARCH_LINE := build: $(GENCODE) (GENCODE given on the command line)
endif

# Every CUDA object and every link depends on the architectures. This stamp changes only when they do, so
# `make ARCH=90` after a default build (or the other way round) rebuilds exactly what it must
# (goals that build nothing leave it alone).
GENCODE_STAMP := $(BUILD)/gencode.stamp
CU_GENCODE_STAMP := $(CU_BUILD)/gencode.stamp
ifneq ($(filter-out plots clean deps help compare docs docs-check assignment,$(or $(MAKECMDGOALS),all)),)
  $(info $(ARCH_LINE))
  $(foreach s,$(sort $(GENCODE_STAMP) $(CU_GENCODE_STAMP)),$(shell mkdir -p $(dir $(s)); \
    [ "$$(cat $(s) 2>/dev/null)" = "$(GENCODE) $(COUNTED_GENCODE)" ] || echo "$(GENCODE) $(COUNTED_GENCODE)" > $(s)))
endif
# The programs and test binaries are shared by the plain and the sanitized build (the tests run ./chNN/run):
# this stamp, outside both build folders, changes when the flavour does, so every link is redone then (not
# in a dry run, make -n, which links nothing).
LINK_STAMP := .link-flavour
ifneq ($(filter-out plots clean deps help compare docs docs-check assignment,$(or $(MAKECMDGOALS),all)),)
  ifeq ($(findstring n,$(firstword -$(MAKEFLAGS))),)
    $(shell [ "$$(cat $(LINK_STAMP) 2>/dev/null)" = "$(BUILD) $(GENCODE)" ] || echo "$(BUILD) $(GENCODE)" > $(LINK_STAMP))
  endif
endif
LINK_INPUTS = $(filter-out $(GENCODE_STAMP) $(CU_GENCODE_STAMP) $(LINK_STAMP),$^)

# ---- flags -----------------------------------------------------------------------------------------------
CFLAGS    := -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -I$(CUDA)/include -Icommon -MMD -MP \
             -D_POSIX_C_SOURCE=200809L
NVCCFLAGS := -std=c++17 -O3 -lineinfo -Icommon -MMD -MP \
             -Xcompiler -Wall,-Wextra,-Wno-unused-parameter
# DEBUG_WAITS=1: mbarrier waits that give up after 10^7 tries, printing where, and trap (common/ptx_sm90.cuh), in
# build-debug/: for writing a pipeline, never for measuring one (it is another machine code).
ifeq ($(DEBUG_WAITS),1)
  NVCCFLAGS += -DMBAR_WAIT_LIMIT=10000000
endif
# ptxas's report of every kernel (registers, spills, and its performance notes: C75xx, wgmma serialized) is kept
# beside each object, in OBJECT.ptxas (tests read it: tests/ch06/test_sass.c); RESOURCES=1 prints it as well.
# Everything else nvcc says on stderr (errors, warnings) still reaches the terminal.
PTXAS_REPORT := ^ptxas info +: (Used|Compiling|Function properties|Compile time|[0-9]+ bytes (gmem|cmem))|^ +[0-9]+ bytes stack frame
nvcc_reporting = $(NVCC) $(NVCCFLAGS) $(NVCC_THREADS) $(GENCODE) -Xptxas -v $(1) -c $< -o $@ 2>$@.ptxas; status=$$?; \
	$(if $(filter 1,$(RESOURCES)),cat $@.ptxas >&2,grep -v -E '$(PTXAS_REPORT)' $@.ptxas >&2); exit $$status
# --as-needed: a program or test binary that calls no cuBLAS function (every chapter but 00) does not load
# libcublas (hundreds of MB mapped at each start: about 80 ms a process, half a second under the sanitizers'
# leak check, which scans it).
LDFLAGS   := -L$(CUDA)/lib64 -Xlinker -rpath=$(CUDA)/lib64 -Xlinker --as-needed
# SANITIZE=1: the C files compiled and every program linked with ASan and UBSan (a finding aborts: the test fails).
# The CUDA driver maps memory in the range ASan keeps unmapped (its shadow gap) on a machine with a GPU: that
# range is left open for it.
ifeq ($(SANITIZE),1)
  SAN_FLAGS := -fsanitize=address -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
  CFLAGS    += $(SAN_FLAGS)
  LDFLAGS   += $(addprefix -Xcompiler ,$(SAN_FLAGS))   # one flag each: nvcc splits -Xcompiler's value at commas
  export ASAN_OPTIONS := protect_shadow_gap=0:abort_on_error=1
  export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
endif
LDLIBS    := -lcublas -lm -lpthread   # -lpthread: common/threads.c (random inputs and the float64 checks on several threads)

COMMON_C   := $(wildcard common/*.c)
COMMON_CU  := $(wildcard common/*.cu)
COMMON_OBJ := $(COMMON_C:%.c=$(BUILD)/%.o) $(COMMON_CU:%.cu=$(CU_BUILD)/%.cu.o)
# An archive, so that a program links only the parts of common/ it uses (common/attention.c needs the
# counters of a chapter's instrumented build, which the common tests do not have).
COMMON_LIB := $(BUILD)/libcommon.a

.PHONY: all clean help test reproduce plots profile deps report compare docs docs-check assignment grade digest digest-check \
        $(foreach i,$(CHAPTER_IDS),ch$(i) test-ch$(i)) test-common
all: $(foreach i,$(CHAPTER_IDS),ch$(i)/run)

$(COMMON_LIB): $(COMMON_OBJ)
	@rm -f $@
	ar rcs $@ $^

# ---- compile rules ---------------------------------------------------------------------------------------
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(CU_BUILD)/%.cu.o: %.cu $(CU_GENCODE_STAMP)
	@mkdir -p $(dir $@)
	$(call nvcc_reporting,)
$(ARCH_SPECIFIC_CU:%.cu=$(CU_BUILD)/%.cu.o): GENCODE := $(FULL_GENCODE)

# Test sources need Criterion's headers: make sure it is installed first (order only).
$(BUILD)/tests/%.o: tests/%.c | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The instrumented build of a chapter's kernels: the same source, counting every global load and store.
$(CU_BUILD)/%.counted.o: GENCODE := $(COUNTED_GENCODE)
$(CU_BUILD)/%.counted.o: %.cu $(CU_GENCODE_STAMP)
	@mkdir -p $(dir $@)
	$(call nvcc_reporting,-DCOUNT_IO)

# Hopper's own kernels (wgmma exists on sm_90a alone): chapter 06's, and chapter 07's from step 6. Their objects are
# built for sm_90a and nothing else, whatever ARCH says; the programs refuse them on another GPU (each chapter.c). So
# they do not depend on the architectures' stamp: a build for another ARCH (the assignments' copies, make ARCH=90
# after the default) keeps them.
SM90A_CU := $(wildcard 06_flash_v3/*.cu) 07_backward/6_wgmma.cu 07_backward/7_lean_loop.cu \
  07_backward/8_dq_bulk.cu 07_backward/9_dq_overlap.cu 07_backward/10_warp_specialized.cu
SM90A_OBJ := $(SM90A_CU:%.cu=$(CU_BUILD)/%.cu.o)
SM90A_COUNTED := $(SM90A_CU:%.cu=$(CU_BUILD)/%.counted.o)

# STUB_CU=FILES: these CUDA sources compile for sm_90 machine code alone, whatever ARCH says, and without touching
# the architectures' stamp. tests/assignments/check.sh builds each student's copy from the book's objects, and the
# only CUDA files it compiles again are those a stub changed: compiled once for one architecture, they prove that the
# copy builds (the book's own objects of those files, compiled for every architecture, stay the book's). Hopper's
# files keep their sm_90a (below).
$(foreach f,$(filter-out $(SM90A_CU),$(STUB_CU)),$(eval \
  $(CU_BUILD)/$(f:.cu=.cu.o) $(CU_BUILD)/$(f:.cu=.counted.o): GENCODE := -gencode arch=compute_90,code=sm_90))

# Hopper's kernels (SM90A_CU, above): sm_90a, without the architectures' stamp.
$(SM90A_OBJ) $(SM90A_COUNTED): GENCODE := -gencode arch=compute_90a,code=sm_90a
$(SM90A_OBJ): $(CU_BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(call nvcc_reporting,)
$(SM90A_COUNTED): $(CU_BUILD)/%.counted.o: %.cu
	@mkdir -p $(dir $@)
	$(call nvcc_reporting,-DCOUNT_IO)

# ---- one block of rules per chapter ----------------------------------------------------------------------
# chNN/run = the chapter's main.c + its other .c files + each of its .cu files (kernels.cu and any other, each
# timed and instrumented) + common.
# tests/bin/test_chNN = tests/chNN/*.c + the same objects without main.c.
define CHAPTER_RULES
$(1)_DIR  := $(2)
$(1)_CU   := $$(wildcard $(2)/*.cu)
$(1)_LIB  := $$(patsubst %.c,$(BUILD)/%.o,$$(filter-out $(2)/main.c,$$(wildcard $(2)/*.c))) \
             $$(patsubst %.cu,$(CU_BUILD)/%.cu.o,$$($(1)_CU)) $$(patsubst %.cu,$(CU_BUILD)/%.counted.o,$$($(1)_CU))
$(1)_TEST_SRC := $$(wildcard tests/ch$(1)/*.c)
$(1)_TEST_OBJ := $$($(1)_TEST_SRC:%.c=$(BUILD)/%.o)

ch$(1): ch$(1)/run
ch$(1)/run: $(BUILD)/$(2)/main.o $$($(1)_LIB) $(COMMON_LIB) $(GENCODE_STAMP) $(LINK_STAMP)
	@mkdir -p $$(dir $$@)
	$(NVCC) $(GENCODE) -o $$@ $$(LINK_INPUTS) $(LDFLAGS) $(LDLIBS)

$(TESTBIN)/test_ch$(1): $$($(1)_TEST_OBJ) $$($(1)_LIB) $(COMMON_LIB) $(GENCODE_STAMP) $(LINK_STAMP)
	@mkdir -p $$(dir $$@)
	$(NVCC) $(GENCODE) -o $$@ $$(LINK_INPUTS) $(LDFLAGS) $(LDLIBS) -lcriterion

test-ch$(1): deps ch$(1)/run $(TESTBIN)/test_ch$(1)
	$(TESTBIN)/test_ch$(1) --jobs 1
endef
$(foreach c,$(CHAPTER_DIRS),$(eval $(call CHAPTER_RULES,$(firstword $(subst _, ,$(c))),$(c))))

# Common tests link common/ alone.
COMMON_TEST_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/common/*.c))
$(TESTBIN)/test_common: $(COMMON_TEST_OBJ) $(COMMON_LIB) $(GENCODE_STAMP) $(LINK_STAMP)
	@mkdir -p $(dir $@)
	$(NVCC) $(GENCODE) -o $@ $(LINK_INPUTS) $(LDFLAGS) $(LDLIBS) -lcriterion

test-common: deps all $(TESTBIN)/test_common
	$(TESTBIN)/test_common --jobs 1

# ---- the two commands of the README, and friends ---------------------------------------------------------
deps:
	@bash common/scripts/ensure-deps.sh

# Every test binary runs even when an earlier one fails; the target fails if any did.
# The common tests and the checks of the assignments, where this tree has them (a student's copy of one
# chapter, written by make assignment, has neither). check.sh reports like a test binary: it is counted too.
COMMON_TESTS     := $(if $(wildcard tests/common/*.c),$(TESTBIN)/test_common)
ASSIGNMENT_CHECK := $(wildcard tests/assignments/check.sh)
# the unit tests of the Python tooling (tests/tools/test_*.py), reported as a Criterion binary reports
TOOLS_CHECK := $(wildcard tests/tools/check.py)
# Under SANITIZE=1 the test target runs the test binaries alone: the assignment checks build their copies without
# the sanitizers (in build/, not build-san/) and the tooling's tests are Python, so both would repeat, unchanged,
# what the plain `make test` runs (CI runs both targets).
ifeq ($(SANITIZE),1)
  ASSIGNMENT_CHECK :=
  TOOLS_CHECK :=
endif
test: deps all $(COMMON_TESTS) $(foreach i,$(CHAPTER_IDS),$(TESTBIN)/test_ch$(i))
	@FA_ARCH='$(ARCH)' bash common/scripts/run-tests.sh $(COMMON_TESTS) $(foreach i,$(CHAPTER_IDS),$(TESTBIN)/test_ch$(i)) \
		$(ASSIGNMENT_CHECK) $(TOOLS_CHECK)

# ---- classroom assignments (common/scripts/cut-assignment.sh) --------------------------------------------
# CH must name a chapter of this tree.
ifneq ($(filter assignment grade,$(MAKECMDGOALS)),)
  ifeq ($(filter $(CH),$(CHAPTER_IDS)),)
    $(error CH=NN names the chapter: one of $(CHAPTER_IDS))
  endif
endif
assignment:
	@bash common/scripts/cut-assignment.sh $(CH) $(or $(DEST),assignment-ch$(CH)) $(NAME)

grade: deps ch$(CH)/run $(TESTBIN)/test_ch$(CH)
	@bash common/scripts/grade.sh $(TESTBIN)/test_ch$(CH) '$(XML)' '$(TESTS)'

# Criterion is for the tests only; gnuplot for the plots (without it reproduce still measures, and says so),
# cuobjdump and nvdisasm for the digests of the record (without them it says so).
reproduce: all
	@bash common/scripts/ensure-deps.sh gnuplot sass || true
	@bash common/scripts/reproduce.sh $(CHAPTER_IDS)

plots:
	@bash plots/render-all.sh results/latest

# The claims table, from the committed results of a GPU (RESULTS=results/<GPU>; default results/latest): no GPU
# needed, the programs are run with --model only.
report: all
	@python3 common/scripts/book.py report $(or $(RESULTS),results/latest)

# The measured tables of the chapter READMEs (common/scripts/book.py docs): written, or compared (nothing written).
docs:
	@python3 common/scripts/book.py docs

docs-check:
	@python3 common/scripts/book.py docs --check

# A run against a reference run: exit 1 on a regression (a time slower beyond COMPARE_TOL, a byte count changed).
compare:
	@python3 common/scripts/book.py compare "$(BASE)" "$(NEW)"

profile: all
	@python3 common/scripts/book.py profile $(CH) $(ARGS)

# Machine-code digests (common/scripts/provenance.py; cuobjdump and nvdisasm installed by ensure-deps.sh if need be).
digest: all
	@bash common/scripts/ensure-deps.sh sass
	@python3 common/scripts/provenance.py digest --arch $(or $(DIGEST_ARCH),sm_90)

digest-check: all
	@bash common/scripts/ensure-deps.sh sass
	@python3 common/scripts/provenance.py check $(or $(RESULTS),results/NVIDIA_H200)

help:
	@sed -n '/^#/!q; s/^# \{0,1\}//p' Makefile

clean:
	rm -rf build build-san build-debug $(LINK_STAMP) $(TESTBIN) $(foreach i,$(CHAPTER_IDS),ch$(i))

-include $(shell find $(sort $(BUILD) $(CU_BUILD)) -name '*.d' 2>/dev/null)
endif
