# qkv — build the library, the program, the tests.
#   make            build/libqkv.a, build/libqkv.so, build/qkv
#   make test       every Check suite (float and double builds)
#   make sanitize   the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make mutants    inject each bug of tests/mutants.list into a copy: a suite must catch it
#   make install PREFIX=/usr/local
#   make clean      remove build/ (with BUILD=DIR: remove DIR)

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
OPT     ?= -O2
CFLAGS  ?=
WARN    := -Wall -Wextra
# No FP traps and no errno from libm: what lets GCC vectorize the kernels'
# selects and square roots on AVX2 and SSE2 (tensor/kernels/cpu.h); no value changes.
MATH    := -fno-trapping-math -fno-math-errno
# -I. lets internal headers be named from the top ("tensor/check.h"), never by "../".
BASE    := -std=c11 -D_POSIX_C_SOURCE=200809L -fopenmp -fPIC -fvisibility=hidden -Iinclude -I. $(WARN) $(MATH) $(OPT) -g $(SAN)
LDLIBS  := -lm -fopenmp

LIB_SRC  := $(wildcard tensor/*.c tensor/kernels/*.c nn/*.c io/*.c data/*.c decode/*.c train/*.c models/*.c models/gpt/*.c models/seq2seq/*.c)
# The program's parts that its tests call too (the pictures, and how busy
# the machine is): an archive of their own, $(BUILD)/libqkvcli.a, linked
# into build/qkv and the test suites, never into libqkv nor installed. The
# attention page is a real file, cli/viz/attn_page.html, embedded as a C
# array (PAGE_C, made below).
VIZ_SRC  := $(wildcard cli/viz/*.c)
# The program's sources but for how it trains over several processes: one
# rank (dist_none.c), or MPI (dist_mpi.c, compiled and linked with $(MPICC)).
# `make MPI=1` makes build/qkv the MPI flavour; the library never links MPI.
# MPICC and MPIRUN choose the MPI (Debian's default, or e.g. mpicc.mpich and
# mpirun.mpich); tests/cli/test_mpi.c launches the ranks with $(MPIRUN).
CLI_SRC  := $(filter-out cli/dist_%.c,$(wildcard cli/*.c))
MPICC    ?= mpicc
MPIRUN   ?= mpirun
ifeq ($(MPI),1)
CLI_SRC  += cli/dist_mpi.c
CLI_LD   := $(MPICC)
else
CLI_SRC  += cli/dist_none.c
CLI_LD   := $(CC)
endif
SUP_SRC  := $(wildcard tests/support/*.c)
# The suites sit in folders that mirror the source (tests/tensor, tests/nn, ...);
# their programs are flat in $(BUILD)/tests, found by name through vpath.
TEST_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard tests/*/test_*.c tests/*/grad_*.c tests/*/dump_*.c))))
TEST_SRC := $(wildcard tests/*/test_*.c)
GRAD_SRC := $(wildcard tests/*/grad_*.c)
DUMP_SRC := $(wildcard tests/*/dump_*.c)
vpath test_%.c $(TEST_DIRS)
vpath grad_%.c $(TEST_DIRS)
vpath dump_%.c $(TEST_DIRS)
# The misuse suite's cases, a file per public header, linked into test_misuse.
MISUSE_SRC := $(wildcard tests/misuse/*.c)

# Float objects (the library) and double objects (the gradient-check copy).
OBJ     := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
OBJ64   := $(LIB_SRC:%.c=$(BUILD)/obj64/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
PAGE_C  := $(BUILD)/gen/attn_page_html.c
VIZ_OBJ := $(VIZ_SRC:%.c=$(BUILD)/obj/%.o) $(PAGE_C:%.c=%.o)
SUP_OBJ := $(SUP_SRC:%.c=$(BUILD)/obj/%.o)
SUP64   := $(SUP_SRC:%.c=$(BUILD)/obj64/%.o)
MISUSE_OBJ := $(MISUSE_SRC:%.c=$(BUILD)/obj/%.o)
TESTS   := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(TEST_SRC) $(GRAD_SRC))))
# Double-precision helper programs the float tests compare against.
DUMPS   := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(DUMP_SRC))))

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

.PHONY: all test sanitize clean install bench bench-bf16 bench-bpe test-install test-readme misuse-coverage tour-coverage abi-check abi-baseline run mutants FORCE
# The version lives in include/qkv/version.h; the SONAME carries its ABI
# version: the major number, or before 1.0 "0.MINOR" (see version.h).
VERSION := $(shell sed -n 's/^.define QKV_VERSION_[MP][A-Z]* \([0-9]*\)$$/\1/p' include/qkv/version.h | paste -sd.)
VMAJOR  := $(word 1,$(subst ., ,$(VERSION)))
ABI     := $(if $(filter 0,$(VMAJOR)),0.$(word 2,$(subst ., ,$(VERSION))),$(VMAJOR))
SONAME  := libqkv.so.$(ABI)
.SECONDARY:
all: $(BUILD)/libqkv.a $(BUILD)/libqkv.so $(BUILD)/qkv

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj64/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -DQKV_DOUBLE -MMD -MP -c $< -o $@

$(BUILD)/libqkv.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libqkv64.a: $(OBJ64)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libqkvcli.a: $(VIZ_OBJ) $(BUILD)/obj/cli/threads_busy.o
	@rm -f $@
	ar rcs $@ $^

# The page's bytes as a NUL-terminated C array, written with od and awk (POSIX),
# so a cross or sanitizer build needs no tool of its own.
$(PAGE_C): cli/viz/attn_page.html
	@mkdir -p $(dir $@)
	{ echo '/* Made by the Makefile from $<: edit that file, not this one. */'; \
	  echo '#include "cli/viz/viz_internal.h"'; \
	  echo 'const unsigned char qkv__attn_page_html[] = {'; \
	  od -An -v -tu1 $< | awk '{ for (i = 1; i <= NF; i++) printf "%s,", $$i; print "" }'; \
	  echo '0};'; } > $@.tmp && mv $@.tmp $@

$(PAGE_C:%.c=%.o): $(PAGE_C)
	$(CC) $(BASE) $(CFLAGS) -MMD -MP -c $< -o $@

# libqkv.so.MAJOR.MINOR.PATCH, with the SONAME libqkv.so.ABI (what programs
# record and the loader looks for) and libqkv.so (what -lqkv finds) linking to it.
$(BUILD)/libqkv.so.$(VERSION): $(OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) $(SAN) -o $@ $^ $(LDLIBS)

$(BUILD)/$(SONAME): $(BUILD)/libqkv.so.$(VERSION)
	ln -sf $(notdir $<) $@

$(BUILD)/libqkv.so: $(BUILD)/$(SONAME)
	ln -sf $(notdir $<) $@

# The double-precision library, installed beside the float one under its own
# name (libqkv64, pkg-config qkv64, which adds -DQKV_DOUBLE): for checking
# gradients at double's tolerance (qkv/gradcheck.h). The same symbols: a
# program links one precision or the other, and the precision guard
# (qkv/base.h) refuses a mismatch at link time.
SONAME64 := libqkv64.so.$(ABI)
$(BUILD)/libqkv64.so.$(VERSION): $(OBJ64)
	$(CC) -shared -Wl,-soname,$(SONAME64) $(SAN) -o $@ $^ $(LDLIBS)

$(BUILD)/$(SONAME64): $(BUILD)/libqkv64.so.$(VERSION)
	ln -sf $(notdir $<) $@

$(BUILD)/libqkv64.so: $(BUILD)/$(SONAME64)
	ln -sf $(notdir $<) $@

# mpi.h and libmpi are the chosen MPI's own: a change of MPICC recompiles this.
$(BUILD)/obj/cli/dist_mpi.o: cli/dist_mpi.c $(BUILD)/program-flavour
	@mkdir -p $(dir $@)
	$(MPICC) $(BASE) $(CFLAGS) -MMD -MP -c $< -o $@

# Both flavours are build/qkv: the program is relinked when MPI= or MPICC= changes.
$(BUILD)/program-flavour: FORCE
	@mkdir -p $(dir $@)
	@echo "MPI=$(MPI) MPICC=$(MPICC)" | cmp -s - $@ || echo "MPI=$(MPI) MPICC=$(MPICC)" > $@

$(BUILD)/qkv: $(CLI_OBJ) $(BUILD)/libqkvcli.a $(BUILD)/libqkv.a $(BUILD)/program-flavour
	$(CLI_LD) $(SAN) -o $@ $(filter %.o %.a,$^) $(LDLIBS)

# The MPI flavour beside the default one, for the tests (make test builds it
# when $(MPICC) and $(MPIRUN) are there).
$(BUILD)/qkv-mpi: $(filter-out %/dist_none.o %/dist_mpi.o,$(CLI_OBJ)) $(BUILD)/obj/cli/dist_mpi.o $(BUILD)/libqkvcli.a $(BUILD)/libqkv.a
	$(MPICC) $(SAN) -o $@ $(filter %.o %.a,$^) $(LDLIBS)

# Test programs compile and link in one step; PROGRAM.d lists the headers they
# include (tests/support/*.h too), so editing one rebuilds them. Those headers
# become prerequisites, so TEST_INPUTS keeps them off the command line; it puts
# the libraries last, after objects a program's own rule adds (test_misuse's).
TEST_DEPS   = -MMD -MP -MT $@ -MF $@.d
TEST_INPUTS = $(filter %.c %.o,$^) $(filter %.a,$^)

$(BUILD)/tests/test_%: test_%.c $(SUP_OBJ) $(BUILD)/libqkvcli.a $(BUILD)/libqkv.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) $(CHECK_CFLAGS) $(TEST_DEPS) -Itests/support -o $@ $(TEST_INPUTS) $(CHECK_LIBS) $(LDLIBS)

# test_misuse is tests/api/test_misuse.c (the suite) and the case files, compiled
# one by one (each with its own .d) and linked as objects: in an archive they
# would be dropped, as nothing calls them (each case registers itself from a
# constructor).
$(MISUSE_OBJ): BASE += -Itests/support
$(BUILD)/tests/test_misuse: $(MISUSE_OBJ)

# test_full_eval checks the program's exact evaluation (cli/full_eval.c) as a unit.
$(BUILD)/tests/test_full_eval: $(BUILD)/obj/cli/full_eval.o $(BUILD)/obj/cli/runtime.o
# test_recipe checks a budgeted run's recipe (cli/recipe.c) as a function, then in the program.
$(BUILD)/tests/test_recipe: $(BUILD)/obj/cli/recipe.o $(BUILD)/obj/cli/runtime.o

$(BUILD)/tests/dump_%: dump_%.c $(SUP64) $(BUILD)/libqkv64.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -DQKV_DOUBLE $(CHECK_CFLAGS) $(TEST_DEPS) -Itests/support -o $@ $(TEST_INPUTS) $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/grad_%: grad_%.c $(SUP64) $(BUILD)/libqkv64.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -DQKV_DOUBLE $(CHECK_CFLAGS) $(TEST_DEPS) -Itests/support -o $@ $(TEST_INPUTS) $(CHECK_LIBS) $(LDLIBS)

# Run every suite even when one fails, then fail if any did, and end with one
# summary line (tests/run_suites.sh). Tests find the double-precision dump
# programs through QKV_TEST_BUILD, the MPI launcher through QKV_MPIRUN. The
# steps before that may be skipped (no abidiff, no cross compiler, no emcc...)
# add their SKIPPED line to $(QKV_SKIPS) too, a file of this run's own, which
# the summary reads and removes.
ifneq ($(filter test,$(MAKECMDGOALS)),)
ifndef QKV_SKIPS
export QKV_SKIPS := $(shell mktemp -u /tmp/qkv-skipped-XXXXXX)
endif
endif
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null && command -v $(MPIRUN) >/dev/null && echo 1)

test: $(TESTS) $(DUMPS) $(BUILD)/qkv $(if $(and $(HAVE_MPI),$(if $(SAN),,1)),$(BUILD)/qkv-mpi) test-install test-readme misuse-coverage tour-coverage $(if $(SAN),,abi-check fuzz-smoke test-aarch64-quick wasm-if-there)
	@QKV_MPIRUN=$(MPIRUN) sh tests/run_suites.sh $(BUILD) $(TESTS)

# libqkv.so against the committed ABI baseline (tests/install/check_abi.sh says
# what may change under one SONAME); make abi-baseline writes a new baseline,
# for a new major version. Both need libabigail (abigail-tools).
abi-check: $(BUILD)/libqkv.so
	@sh tests/install/check_abi.sh $(BUILD)/libqkv.so.$(VERSION) abi/libqkv.abi include/qkv

abi-baseline: $(BUILD)/libqkv.so
	abidw --headers-dir include/qkv --out-file abi/libqkv.abi $(BUILD)/libqkv.so.$(VERSION)

# Every public function has a case in the misuse suite (tests/misuse/*.c).
misuse-coverage:
	@sh tests/misuse_coverage.sh

# The float-vs-double tour calls every op of qkv/ops.h.
tour-coverage:
	@sh tests/tour_coverage.sh

# Not part of make test: each named bug of tests/mutants.list injected into a
# copy of the tree must make a suite fail (MUTANTS="name ..." for some only).
mutants:
	@sh tests/mutants.sh

# Speed on this machine: GEMM against the FMA peak, training steps, sampling, memory.
bench: $(BUILD)/qkv
	$(BUILD)/qkv bench $(ARGS)

# The bf16 GEMM beside the fp32 one on the big shapes, 1 and 2 threads (tests/tensor/bench_gemm_bf16.c).
bench-bf16: $(BUILD)/tests/bench_gemm_bf16
	$(BUILD)/tests/bench_gemm_bf16 $(ARGS)

$(BUILD)/tests/bench_gemm_bf16: tests/tensor/bench_gemm_bf16.c $(BUILD)/libqkv.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) $(TEST_DEPS) -o $@ $(TEST_INPUTS) $(LDLIBS)

# The BPE tokenizer's speed: training, encoding, decoding a text (tests/data/bench_bpe.c):
#   make bench-bpe ARGS="tinyshakespeare.txt 4096"
#   make bench-bpe ARGS="tinyshakespeare.txt DIR/vocab.json DIR/merges.txt"   (GPT-2's, loaded)
bench-bpe: $(BUILD)/tests/bench_bpe
	$(BUILD)/tests/bench_bpe $(ARGS)

$(BUILD)/tests/bench_bpe: tests/data/bench_bpe.c $(BUILD)/libqkv.a
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) $(TEST_DEPS) -o $@ $(TEST_INPUTS) $(LDLIBS)

# An allocation too large to satisfy must come back NULL under ASan as under
# libc (the tests check qkv reports it), not end the process.
sanitize:
	ASAN_OPTIONS=allocator_may_return_null=1 $(MAKE) test BUILD=build/san SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

# The main job: train the GPT with the fast recipe for just under three
# minutes (its final evaluation and save included), on tokens of a byte-level
# BPE of 1024 trained on the text's training split: at 300 s it compresses
# held-out text to fewer bits per byte than the character model on both corpora
# of docs/speedrun.md (the measure every loss is also printed in). Text: $$QKV_DATA, else tiny
# Shakespeare if data/corpora/fetch_shakespeare.sh fetched it, else the offline
# default corpus (qkv's own sources and docs, which every checkout has).
run: $(BUILD)/qkv
	@data="$${QKV_DATA:-}"; \
	if [ -z "$$data" ] && [ -f data/tinyshakespeare.txt ]; then data=data/tinyshakespeare.txt; fi; \
	if [ -z "$$data" ]; then data=$(BUILD)/default_corpus.txt; bash data/corpora/default_corpus.sh $$data; \
	    echo "no data/tinyshakespeare.txt (data/corpora/fetch_shakespeare.sh fetches it): training on qkv's own sources"; fi; \
	$(BUILD)/qkv train --time 170 --data "$$data" --out $(BUILD)/fast.ckpt --force $(ARGS) && \
	$(BUILD)/qkv sample --ckpt $(BUILD)/fast.ckpt --tokens 300 --temperature 0.8

install: $(BUILD)/libqkv.a $(BUILD)/libqkv.so $(BUILD)/libqkv64.a $(BUILD)/libqkv64.so $(BUILD)/qkv
	install -d $(DESTDIR)$(PREFIX)/include/qkv $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/qkv/*.h include/qkv/*.hpp $(DESTDIR)$(PREFIX)/include/qkv/
	install -m 644 $(BUILD)/libqkv.a $(BUILD)/libqkv64.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libqkv.so.$(VERSION) $(BUILD)/libqkv64.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libqkv.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libqkv.so
	ln -sf libqkv64.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME64)
	ln -sf $(SONAME64) $(DESTDIR)$(PREFIX)/lib/libqkv64.so
	install -m 755 $(BUILD)/qkv $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' qkv.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qkv.pc
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' qkv64.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qkv64.pc

# Install into a throwaway prefix; check it is packaged like a C library
# (SONAME, exports, the precision guard); build and run every example the way
# an outside program would, only through pkg-config (one as C++ too, one
# statically); compile every header's usage block.
test-install: $(BUILD)/libqkv.a $(BUILD)/libqkv.so $(BUILD)/libqkv64.a $(BUILD)/libqkv64.so $(BUILD)/qkv
	@rm -rf $(BUILD)/prefix $(BUILD)/install-check
	@$(MAKE) --no-print-directory -s install PREFIX=$(CURDIR)/$(BUILD)/prefix BUILD=$(BUILD) SAN="$(SAN)"
	@CC="$(CC)" SAN="$(SAN)" sh tests/install/check_library.sh $(CURDIR)/$(BUILD)/prefix $(BUILD)/install-check
	@CC="$(CC)" SAN="$(SAN)" sh tests/install/check_double.sh $(CURDIR)/$(BUILD)/prefix $(BUILD)/install-check/double
	@CC="$(CC)" SAN="$(SAN)" sh tests/install/build_examples.sh $(CURDIR)/$(BUILD)/prefix $(BUILD)/install-check/examples
	@CC="$(CC)" SAN="$(SAN)" sh tests/install/compile_usage_blocks.sh $(CURDIR)/$(BUILD)/prefix $(BUILD)/install-check/usage

# The README's tensor example must compile and run as printed.
test-readme: $(BUILD)/libqkv.a
	@mkdir -p $(BUILD)/readme
	@awk '/<!-- readme-example -->/{on=1; next} on && /^```c/{go=1; next} go && /^```/{exit} go' README.md > $(BUILD)/readme/example.c
	@test -s $(BUILD)/readme/example.c || { echo "README example not found"; exit 1; }
	@$(CC) $(BASE) $(BUILD)/readme/example.c -o $(BUILD)/readme/example $(BUILD)/libqkv.a $(LDLIBS)
	@$(BUILD)/readme/example > $(BUILD)/readme/example.out && echo "README example: compiled and ran"
	@for cxx in g++ $(if $(SAN),,clang++); do \
	    if ! command -v $$cxx > /dev/null; then echo "README example as C++: SKIPPED: no $$cxx" | tee -a "$${QKV_SKIPS:-/dev/null}"; continue; fi; \
	    $$cxx -x c++ -std=c++11 -Wall -Wextra -pedantic -Werror $(SAN) -Iinclude $(BUILD)/readme/example.c -x none \
	        -o $(BUILD)/readme/example.$$cxx $(BUILD)/libqkv.a $(LDLIBS) && \
	    $(BUILD)/readme/example.$$cxx | cmp -s - $(BUILD)/readme/example.out && \
	    echo "README example: compiled as C++ with $$cxx, ran, printed what the C build printed" || exit 1; \
	done

clean:
	rm -rf $(BUILD)

-include $(OBJ:.o=.d) $(OBJ64:.o=.d) $(CLI_OBJ:.o=.d) $(BUILD)/obj/cli/dist_mpi.d $(VIZ_OBJ:.o=.d) $(SUP_OBJ:.o=.d) $(SUP64:.o=.d) $(MISUSE_OBJ:.o=.d)
-include $(TESTS:=.d) $(DUMPS:=.d)

# ---- robustness: fuzzing the checkpoint loader, valgrind on the program ----
#   make fuzz [FUZZ_SECONDS=600]   libFuzzer on the checkpoint loader (clang, libclang-rt-14-dev, libomp-14-dev)
#   make fuzz-smoke                the same for 20 s (skipped, saying so, without clang's libFuzzer)
#   make fuzz-seeds                rewrite the seed checkpoints in tests/fuzz/corpus/
#   make fuzz-safetensors [FUZZ_SECONDS=600]   libFuzzer on the safetensors reader and GPT-2 loader
#   make valgrind                  train, resume, sample and evaluate a tiny model under valgrind
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BASE    := -std=c11 -D_POSIX_C_SOURCE=200809L -fopenmp -Iinclude -I. $(WARN) -Wno-pass-failed -O1 -g $(FUZZ_SAN)
FUZZ_OBJ     := $(LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_ARGS    := -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

.PHONY: fuzz fuzz-smoke fuzz-seeds fuzz-safetensors valgrind

# The library again, instrumented for libFuzzer's coverage and the sanitizers.
$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_BASE) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(BUILD)/fuzz/fuzz_checkpoint: tests/fuzz/fuzz_checkpoint.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_BASE) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

$(BUILD)/fuzz/fuzz_safetensors: tests/fuzz/fuzz_safetensors.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_BASE) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# The safetensors reader and GPT-2 loader; seeds in tests/fuzz/corpus-safetensors.
fuzz-safetensors: $(BUILD)/fuzz/fuzz_safetensors
	@mkdir -p $(BUILD)/fuzz/corpus-safetensors
	OMP_NUM_THREADS=1 $< $(FUZZ_ARGS) -artifact_prefix=$(BUILD)/fuzz/ -max_total_time=$(FUZZ_SECONDS) $(BUILD)/fuzz/corpus-safetensors tests/fuzz/corpus-safetensors

# New inputs go to $(BUILD)/fuzz/corpus; tests/fuzz/corpus holds the seeds.
fuzz: $(BUILD)/fuzz/fuzz_checkpoint
	@mkdir -p $(BUILD)/fuzz/corpus
	OMP_NUM_THREADS=1 $< $(FUZZ_ARGS) -artifact_prefix=$(BUILD)/fuzz/ -max_total_time=$(FUZZ_SECONDS) $(BUILD)/fuzz/corpus tests/fuzz/corpus

fuzz-smoke:
	@if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
	    $(FUZZ_CC) -x c -fopenmp -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then \
	    echo "fuzz-smoke: SKIPPED: '$(FUZZ_CC)' cannot build OpenMP libFuzzer targets" \
	         "(install clang, libclang-rt-14-dev and libomp-14-dev)" | tee -a "$${QKV_SKIPS:-/dev/null}"; \
	else \
	    $(MAKE) --no-print-directory -s $(BUILD)/fuzz/fuzz_checkpoint BUILD=$(BUILD) && mkdir -p $(BUILD)/fuzz/corpus && \
	    if OMP_NUM_THREADS=1 $(BUILD)/fuzz/fuzz_checkpoint $(FUZZ_ARGS) -artifact_prefix=$(BUILD)/fuzz/ -max_total_time=20 \
	        $(BUILD)/fuzz/corpus tests/fuzz/corpus > $(BUILD)/fuzz/smoke.log 2>&1; then \
	        echo "fuzz-smoke: $$(grep -o 'stat::number_of_executed_units: [0-9]*' $(BUILD)/fuzz/smoke.log | grep -o '[0-9]*$$') inputs in 20 s, no crash"; \
	    else tail -40 $(BUILD)/fuzz/smoke.log; echo "fuzz-smoke: FAILED (log: $(BUILD)/fuzz/smoke.log)"; exit 1; fi; \
	fi

fuzz-seeds: $(BUILD)/libqkv.a
	@mkdir -p $(BUILD)/fuzz tests/fuzz/corpus
	$(CC) $(BASE) tests/fuzz/make_seeds.c -o $(BUILD)/fuzz/make_seeds $(BUILD)/libqkv.a $(LDLIBS)
	$(BUILD)/fuzz/make_seeds tests/fuzz/corpus

# --error-exitcode=1 for runs that must succeed; 99 for runs that must fail
# with status 1, so a valgrind error is told apart from the expected failure.
VALGRIND  := valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
             --errors-for-leak-kinds=definite,indirect
VG_DIR    := $(BUILD)/valgrind
VG_TINY   := --layers 1 --heads 2 --embd 16 --block 16 --batch 4 --eval-iters 2 --threads 1

valgrind: $(BUILD)/qkv
	@mkdir -p $(VG_DIR)
	@for i in $$(seq 200); do echo "the quick brown fox jumps over the lazy dog."; done > $(VG_DIR)/text.txt
	OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=1 $(BUILD)/qkv train --data $(VG_DIR)/text.txt \
	    $(VG_TINY) --iters 6 --eval-every 3 --log-every 2 --out $(VG_DIR)/v.ckpt --force
	OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=1 $(BUILD)/qkv train --resume $(VG_DIR)/v.ckpt \
	    --data $(VG_DIR)/text.txt --iters 8 --threads 1
	OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=1 $(BUILD)/qkv sample --ckpt $(VG_DIR)/v.ckpt \
	    --tokens 40 --top-k 5 --top-p 0.9 --threads 1 > /dev/null
	OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=1 $(BUILD)/qkv sample --ckpt $(VG_DIR)/v.ckpt \
	    --tokens 20 --no-cache --threads 1 > /dev/null
	OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=1 $(BUILD)/qkv eval --ckpt $(VG_DIR)/v.ckpt \
	    --data $(VG_DIR)/text.txt --eval-iters 2 --threads 1
	OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=1 $(BUILD)/qkv attn --ckpt $(VG_DIR)/v.ckpt \
	    --text "the quick brown" --html $(VG_DIR)/attn.html --force --threads 1 > /dev/null
	OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=1 $(BUILD)/qkv attn --ckpt $(VG_DIR)/v.ckpt \
	    --text "the quick brown" --rows 5:9 --out $(VG_DIR)/rows.svg --force --threads 1 > /dev/null
	@for bad in "train --data $(VG_DIR)/missing.txt $(VG_TINY)" \
	            "train --resume $(VG_DIR)/v.ckpt --data /dev/null --threads 1" \
	            "sample --ckpt $(VG_DIR)/text.txt --threads 1" \
	            "sample --ckpt $(VG_DIR)/v.ckpt --prompt ZZZ --threads 1"; do \
	    OMP_NUM_THREADS=1 $(VALGRIND) --error-exitcode=99 $(BUILD)/qkv $$bad 2>&1; rc=$$?; \
	    if [ $$rc -ne 1 ]; then echo "valgrind: 'qkv $$bad' ended with $$rc, expected 1"; exit 1; fi; \
	done
	@# attn --live: with the module when make wasm built it; without, it must fail (status 1).
	@if [ -f $(BUILD)/wasm/qkv_live.js ]; then OMP_NUM_THREADS=1 QKV_WASM=$(BUILD)/wasm $(VALGRIND) --error-exitcode=1 \
	    $(BUILD)/qkv attn --ckpt $(VG_DIR)/v.ckpt --text "the quick" --html $(VG_DIR)/live.html --live --force \
	    --threads 1 > /dev/null || exit 1; fi
	@OMP_NUM_THREADS=1 QKV_WASM=$(VG_DIR)/none $(VALGRIND) --error-exitcode=99 $(BUILD)/qkv attn --ckpt $(VG_DIR)/v.ckpt \
	    --text "the quick" --html $(VG_DIR)/none.html --live --threads 1 2>/dev/null; rc=$$?; \
	if [ $$rc -ne 1 ]; then echo "valgrind: attn --live without the module ended with $$rc, expected 1"; exit 1; fi
	@echo "valgrind: train, resume, sample (cached and not), eval, attn --html (and --live) and --rows, and five failing runs: no errors, no leaks"

-include $(FUZZ_OBJ:.o=.d)

# ---- aarch64: the library and the core suites, cross-built, run under qemu-user ----
#   make test-aarch64   build into $(BUILD)/aarch64 with $(AARCH64_CC), check that the hot row
#                       kernels are NEON code (tests/aarch64/neon_kernels.sh) and the bf16 GEMM's
#                       ARM path BFDOT (tests/aarch64/bf16_kernel.sh), run the suites with
#                       $(AARCH64_QEMU) on a CPU with BF16 ($(AARCH64_CPU_BF16)), then test_gemm_bf16's
#                       path cases on one without ($(AARCH64_CPU_NO_BF16)): it must choose portable
#                       and refuse neon_bf16
# Needs gcc-aarch64-linux-gnu, qemu-user and Debian's arm64 multiarch Check, libc
# and libgomp (dpkg --add-architecture arm64; check:arm64 libsubunit-dev:arm64
# libgomp1:arm64): the programs run on that loader and those libraries, so qemu
# gets no -L (the cross toolchain's own libc, an older build, must not meet
# the multiarch one: threads hang in pthread_create).
AARCH64_CC      ?= aarch64-linux-gnu-gcc
AARCH64_QEMU    ?= qemu-aarch64
# qemu's "max" has FEAT_BF16 (HWCAP2_BF16), so test_gemm_bf16 runs the ARM
# BF16 path on every shape; the Cortex-A72 (ARMv8.0) lacks it.
AARCH64_CPU_BF16    ?= max
AARCH64_CPU_NO_BF16 ?= cortex-a72
AARCH64_OBJDUMP ?= $(AARCH64_CC:%gcc=%objdump)
AARCH64_PC      := PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig pkg-config
# The core suites, and the others that run in a second or less under qemu (the
# rest run the program, or dump programs, as child processes: qemu-user cannot).
AARCH64_SUITES  := test_tensor_memory test_autograd test_gemm test_gemm_bf16 test_vecmath test_gpt test_checkpoint $(basename $(notdir $(GRAD_SRC))) \
                   test_optim test_nn_attention test_nn_modules test_attention_core test_attention_backward test_training test_generate

# Any aarch64 build, native or cross. NEON is the baseline there, so the row
# kernels are compiled once, and these let GCC vectorize them: no FP traps
# (the selects of GELU, ReLU² and the clamps become vector selects), no errno
# (AdamW's sqrt), loop unswitching (the norms' `w ? w[j] : 1` becomes two
# loops); and in the float library, contraction of a·b + c into FMLA (the same
# values up to float rounding). The double build, the gradient checks' finite
# differences, keeps separate roundings (contracted, grad_nn's decoder block
# missed the checks' 1e-6 tolerance).
ifneq ($(filter aarch64%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
BASE += -fno-trapping-math -fno-math-errno -funswitch-loops
$(BUILD)/obj/%.o: BASE += -ffp-contract=fast
endif

# make test runs the quick form: every suite built, all but test_gpt run
# (about a minute under qemu on a busy 2-core machine; test_gpt alone takes 80 s).
# Check's timeouts are 20 times theirs under qemu: at 5 times, a busy machine
# made test_attention_core's tiles case time out (a timeout is for a hang).
.PHONY: test-aarch64 test-aarch64-quick
test-aarch64: AARCH64_RUN := $(AARCH64_SUITES)
test-aarch64-quick: AARCH64_RUN := $(filter-out test_gpt,$(AARCH64_SUITES))
test-aarch64 test-aarch64-quick:
	@missing=""; \
	command -v $(AARCH64_CC) >/dev/null || missing="$$missing $(AARCH64_CC)"; \
	command -v $(AARCH64_QEMU) >/dev/null || missing="$$missing $(AARCH64_QEMU)"; \
	$(AARCH64_PC) --exists check 2>/dev/null || missing="$$missing check:arm64"; \
	[ -e /usr/lib/aarch64-linux-gnu/libgomp.so.1 ] || missing="$$missing libgomp1:arm64"; \
	if [ -n "$$missing" ]; then echo "$@: SKIPPED: no$$missing" | tee -a "$${QKV_SKIPS:-/dev/null}"; exit 0; fi; \
	$(MAKE) -s --no-print-directory BUILD=$(BUILD)/aarch64 CC=$(AARCH64_CC) SAN= \
	    CHECK_CFLAGS="$$($(AARCH64_PC) --cflags check)" CHECK_LIBS="$$($(AARCH64_PC) --libs check)" \
	    $(AARCH64_SUITES:%=$(BUILD)/aarch64/tests/%) || exit 1; \
	fail=0; sh tests/aarch64/neon_kernels.sh $(BUILD)/aarch64 $(AARCH64_OBJDUMP) || fail=1; \
	sh tests/aarch64/bf16_kernel.sh $(BUILD)/aarch64 $(AARCH64_OBJDUMP) || fail=1; \
	for t in $(AARCH64_RUN); do echo "== $(BUILD)/aarch64/tests/$$t (under $(AARCH64_QEMU) -cpu $(AARCH64_CPU_BF16))"; \
	    CK_TIMEOUT_MULTIPLIER=20 QKV_TEST_BUILD=$(BUILD)/aarch64 QKV_TEST_BF16_PATH=neon_bf16 \
	    $(AARCH64_QEMU) -cpu $(AARCH64_CPU_BF16) $(BUILD)/aarch64/tests/$$t || fail=1; done; \
	echo "== $(BUILD)/aarch64/tests/test_gemm_bf16, its paths (under $(AARCH64_QEMU) -cpu $(AARCH64_CPU_NO_BF16))"; \
	CK_TIMEOUT_MULTIPLIER=20 CK_RUN_CASE=paths QKV_TEST_BUILD=$(BUILD)/aarch64 QKV_TEST_BF16_PATH=portable \
	    $(AARCH64_QEMU) -cpu $(AARCH64_CPU_NO_BF16) $(BUILD)/aarch64/tests/test_gemm_bf16 || fail=1; \
	if [ $$fail -ne 0 ]; then echo "$@: SOME AARCH64 TEST SUITES FAILED"; exit 1; fi

# ---- the live attention page's module: WebAssembly, with emscripten ----
#   make wasm   $(BUILD)/wasm/qkv_live.js and qkv_live.wasm, which `qkv attn --html OUT --live`
#               embeds: the library's forward pass, the page's recording (attn_record.c)
#               and the sampler, compiled from the same sources, single-threaded
# Optional like the browser: make test builds it when $(EMCC) is there and says
# SKIPPED when not. No -fopenmp: the pragmas are ignored, and the library's few
# omp_* calls find the one-thread answers in cli/viz/live/omp.h. Objects
# go into an archive, so the link takes only what the module calls (not the
# page writer, nor the SVG pictures). Debian's emcc runs its JS tools with
# node, which finds acorn in /usr/share/nodejs.
EMCC      ?= emcc
EMCC_ENV  := NODE_PATH=$${NODE_PATH:+$$NODE_PATH:}/usr/share/nodejs
WASM      := $(BUILD)/wasm
WASM_SRC  := $(LIB_SRC) $(filter-out cli/viz/attn_html.c,$(VIZ_SRC))
WASM_OBJ  := $(WASM_SRC:%.c=$(WASM)/obj/%.o)
WASM_BASE := -std=c11 -D_POSIX_C_SOURCE=200809L -Icli/viz/live -Iinclude -I. $(WARN) $(MATH) -O3 -msimd128
WASM_EXPORTS := _live_load,_live_gpt,_live_seq2seq,_live_numbers,_live_generate,_live_error,_malloc,_free
WASM_LINK := --no-entry -sMODULARIZE=1 -sEXPORT_NAME=qkvLive -sENVIRONMENT=web -sALLOW_MEMORY_GROWTH=1 \
             -sDYNAMIC_EXECUTION=0 -sEXPORTED_FUNCTIONS=$(WASM_EXPORTS) -sEXPORTED_RUNTIME_METHODS=ccall,UTF8ToString
HAVE_EMCC := $(shell command -v $(EMCC) >/dev/null && echo 1)

.PHONY: wasm wasm-if-there
wasm: $(WASM)/qkv_live.js

$(WASM)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(EMCC_ENV) $(EMCC) $(WASM_BASE) -MMD -MP -c $< -o $@

$(WASM)/libqkv_live.a: $(WASM_OBJ)
	@rm -f $@
	$(EMCC_ENV) emar rcs $@ $^

# The .js loader and its .wasm, side by side (the page embeds both).
$(WASM)/qkv_live.js: $(WASM)/obj/cli/viz/live/live.o $(WASM)/libqkv_live.a
	$(EMCC_ENV) $(EMCC) -O3 $(WASM_LINK) -o $@ $^

wasm-if-there:
	@if [ -n "$(HAVE_EMCC)" ]; then $(MAKE) --no-print-directory -s wasm BUILD=$(BUILD); \
	else echo "wasm: SKIPPED: no $(EMCC) (apt-get install emscripten); qkv attn --live needs it" | tee -a "$${QKV_SKIPS:-/dev/null}"; fi

-include $(WASM_OBJ:.o=.d) $(WASM)/obj/cli/viz/live/live.d
