# mxprof build.
#
#   make              libmxprof.so, libmxprof.a and the mxprof command
#   make test         unit and integration tests (one summary line at the end)
#   make check        make test, then the same under ASan, UBSan and TSan
#   SLOW=1 make test  the same with the long forms of the longest tests
#                     (tests/run.sh lists them; the default forms cover
#                     the same code in a fraction of the time)
#   make demo         profile the bundled example and print its tables
#   make asan|ubsan|tsan   the test suite under a sanitizer (build-<name>/)
#   make format-check clang-format without changes
#   make cppcheck     cppcheck over the sources (tests/cppcheck.sh)
#   make install      PREFIX=/usr/local
#
# Sources are found by folder: every collector/*.c, preload/*.c and
# preload/*.S goes into the library; every tests/unit/test_*.c is a cmocka
# suite; every tests/programs/*.c, and the example examples/demo.c, is a
# program the integration tests run.

CC       ?= cc
PREFIX   ?= /usr/local
BUILD    ?= build
SAN      ?=
OPT      ?= -O2

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Wno-format-truncation
CPPFLAGS += -Iinclude -Icollector -Ipreload -D_GNU_SOURCE
CFLAGS   += -std=gnu11 $(OPT) -g -fPIC -pthread $(WARN) $(SAN) \
            -fvisibility=hidden -fno-omit-frame-pointer
LDLIBS_LIB := -lisal -ldl -lpthread
TEST_LDLIBS := -lcmocka -lyajl -lz -lisal -ldl -lpthread

LIB_SRC  := $(sort $(wildcard collector/*.c) $(wildcard preload/*.c))
LIB_ASM  := $(sort $(wildcard preload/*.S))
# NO_HOOK=1 leaves the C API hook engine out (preload/hook*).
ifdef NO_HOOK
LIB_SRC  := $(filter-out preload/hook%,$(LIB_SRC))
LIB_ASM  := $(filter-out preload/hook%,$(LIB_ASM))
else
CPPFLAGS += -DMXPROF_WITH_HOOK
endif
# CUDA: with the toolkit's headers (CUDA_HOME, default /usr/local/cuda) the
# library gains cupti/ and NVTX injection (preload/nvtx*.c), and the tests
# gain the fake libcupti/libcudart (tests/fakes/), the NVTX and CUDA
# programs and, with nvcc, tests/programs/cuda_*.cu. Without the headers
# these are left out and the tests that need them skip.
CUDA_HOME ?= /usr/local/cuda
CUDA_INC  := $(CUDA_HOME)/include
HAVE_CUDA := $(if $(wildcard $(CUDA_INC)/cupti.h),1,)
NVCC      := $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) \
                         $(shell command -v nvcc 2>/dev/null))
ifeq ($(HAVE_CUDA),1)
CPPFLAGS += -DMXPROF_WITH_CUDA -iquote cupti
LIB_SRC  += $(sort $(wildcard cupti/*.c))
FAKES    := $(BUILD)/fakes/libcupti.so.13 $(BUILD)/fakes/libcudart.so.13
CU_SRC   := $(if $(NVCC),$(sort $(wildcard tests/programs/cuda_*.cu)),)
CU_BIN   := $(CU_SRC:tests/programs/%.cu=$(BUILD)/programs/%) \
            $(CU_SRC:tests/programs/%.cu=$(BUILD)/programs/%_shared)
else
LIB_SRC  := $(filter-out preload/nvtx%,$(LIB_SRC))
FAKES    :=
CU_BIN   :=
endif
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(LIB_ASM:%.S=$(BUILD)/obj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
ifneq ($(HAVE_CUDA),1)
UNIT_SRC := $(filter-out tests/unit/test_gpu%,$(UNIT_SRC))
endif
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
PROG_SRC := $(sort $(wildcard tests/programs/*.c))
ifneq ($(HAVE_CUDA),1)
PROG_SRC := $(filter-out tests/programs/nvtx_% tests/programs/cuda_%,$(PROG_SRC))
endif
PROG_BIN := $(PROG_SRC:tests/programs/%.c=$(BUILD)/programs/%) \
            $(BUILD)/examples/demo
# The mxprof command: tools/mxprof.c (main) and every tools/cli/*.c, each
# compiled on its own, linked against libmxprof.a.
CLI_SRC  := tools/mxprof.c $(sort $(wildcard tools/cli/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TOOL_BIN := $(BUILD)/mxprof
HEADERS  := $(wildcard include/*.h collector/*.h preload/*.h cupti/*.h \
              tests/fakes/*.h)
# The unit suites' own header (testutil.h): only they are rebuilt for it.
UNIT_HDR := $(wildcard tests/unit/*.h)

SO       := $(BUILD)/libmxprof.so
AR_LIB   := $(BUILD)/libmxprof.a

.PHONY: all test check unit integration demo asan ubsan tsan cross cppcheck \
        format format-check install clean bench programs deps

all: $(SO) $(AR_LIB) $(TOOL_BIN) libmxprof.so

# The top-level libmxprof.so is a link to the default build, so that
# LD_PRELOAD=$PWD/libmxprof.so works from the checkout.
libmxprof.so: $(SO)
	@if [ "$(BUILD)" = build ]; then ln -sf $(SO) $@; fi

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.S $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(SO): $(LIB_OBJ) preload/exports.map
	$(CC) $(CFLAGS) -shared -Wl,--version-script=preload/exports.map \
	    -Wl,-z,nodelete -o $@ $(LIB_OBJ) $(LDLIBS_LIB)

# The archive leaves out preload/exits.c and preload/creds.c, the
# wrappers of _exit, exec and the id changes: a program linked with it
# keeps the C library's own.
AR_OBJ   := $(filter-out $(BUILD)/obj/preload/exits.o \
              $(BUILD)/obj/preload/creds.o,$(LIB_OBJ))
$(AR_LIB): $(AR_OBJ)
	@rm -f $@
	ar rcs $@ $(AR_OBJ)

$(BUILD)/tests/%: tests/unit/%.c $(AR_LIB) $(HEADERS) $(UNIT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) -fvisibility=default -o $@ $< \
	    $(AR_LIB) $(TEST_LDLIBS)

# core_first_record and core_second_signal define write(), and
# core_start_signal pthread_create(): the library's calls must find them.
$(BUILD)/programs/core_first_record: CFLAGS += -rdynamic
$(BUILD)/programs/core_start_signal: CFLAGS += -rdynamic
$(BUILD)/programs/core_second_signal: CFLAGS += -rdynamic
# core_signal_tally calls zlib's crc32, from threads and signal handlers.
$(BUILD)/programs/core_signal_tally: PROG_LIBS = -lz

$(BUILD)/programs/%: tests/programs/%.c include/mxprof.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=default -o $@ $< -ldl -lpthread $(PROG_LIBS)

$(CLI_OBJ): $(wildcard tools/cli/*.h)

$(BUILD)/mxprof: $(CLI_OBJ) $(AR_LIB)
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(AR_LIB) -lyajl -lz $(LDLIBS_LIB)

$(BUILD)/examples/%: examples/%.c include/mxprof.h include/mxprof_dl.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fvisibility=default -o $@ $< -ldl -lpthread $(PROG_LIBS)

# CUDA parts (see HAVE_CUDA): the toolkit's headers as system headers.
$(BUILD)/obj/cupti/%.o $(BUILD)/obj/preload/nvtx% $(BUILD)/obj/preload/init.o \
$(BUILD)/tests/test_gpu%: CPPFLAGS += -isystem $(CUDA_INC)
$(BUILD)/programs/nvtx_% $(BUILD)/programs/cuda_%: CPPFLAGS += -isystem $(CUDA_INC)

$(BUILD)/fakes/libcupti.so.13: tests/fakes/fake_cupti.c tests/fakes/fake.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -isystem $(CUDA_INC) $(CFLAGS) -fvisibility=default \
	    -shared -Wl,-soname,libcupti.so.13 -o $@ $< -lpthread

$(BUILD)/fakes/libcudart.so.13: tests/fakes/fake_cudart.c tests/fakes/fake.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -isystem $(CUDA_INC) $(CFLAGS) -fvisibility=default \
	    -shared -Wl,-soname,libcudart.so.13 -o $@ $< -ldl -lpthread

# nvcc programs: once with the static cudart (nvcc's default), once shared.
$(BUILD)/programs/cuda_%: tests/programs/cuda_%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -o $@ $<

$(BUILD)/programs/cuda_%_shared: tests/programs/cuda_%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -cudart shared -Xlinker -rpath -Xlinker $(CUDA_HOME)/lib64 \
	    -Xlinker -rpath -Xlinker $(CUDA_HOME)/lib -o $@ $<

programs: $(PROG_BIN)

deps:
	@tests/deps.sh

# One summary line: "N passed, N failed, N skipped" (a test that cannot
# run here exits 77 and counts as skipped; tests/run.sh).
test: deps all $(UNIT_BIN) $(PROG_BIN) $(FAKES) $(CU_BIN)
	@BUILD=$(BUILD) SANITIZER="$(SANITIZER)" ONLY="$(ONLY)" tests/run.sh

unit: all $(UNIT_BIN)
	@BUILD=$(BUILD) ONLY=unit tests/run.sh

integration: all $(PROG_BIN) $(FAKES) $(CU_BIN)
	@BUILD=$(BUILD) ONLY=integration tests/run.sh

demo:
	@BUILD=$(BUILD) tests/demo.sh

# The whole suite, plain and under each sanitizer (what CI runs).
check:
	@tests/check.sh

bench: all $(PROG_BIN)
	@OPT=-O2 tests/bench/run.sh $(BUILD)

# The sanitizer builds also check the lock order (collector.h) at every
# acquisition.
LOCK_CHECK := -DMXPROF_LOCK_CHECK

asan:
	$(MAKE) BUILD=build-asan SAN="-fsanitize=address -fno-sanitize-recover=all $(LOCK_CHECK)" \
	    SANITIZER=asan OPT=-O1 test

ubsan:
	$(MAKE) BUILD=build-ubsan SAN="-fsanitize=undefined -fno-sanitize-recover=all $(LOCK_CHECK)" \
	    SANITIZER=ubsan OPT=-O1 test

# TSan's runtime cannot be injected into uninstrumented programs, so the
# TSan run covers the unit suites (which drive the rings and the drain
# thread from many threads).
tsan:
	$(MAKE) BUILD=build-tsan SAN="-fsanitize=thread $(LOCK_CHECK)" SANITIZER=tsan OPT=-O1 \
	    ONLY=unit test

# The library built for aarch64 and checked (tests/cross.sh).
cross:
	+@tests/cross.sh

# cppcheck over collector/, preload/, cupti/, tools/ and include/, for the
# x86-64 and the aarch64 build; tests/cppcheck.sh gives the checks and the
# reason of each suppression.
cppcheck:
	@tests/cppcheck.sh

FORMAT_SRC = $(shell git ls-files '*.c' '*.h' 2>/dev/null || \
             find include collector preload tools tests -name '*.[ch]')

format:
	clang-format -i $(FORMAT_SRC)

format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRC) && echo "format-check: ok"

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(SO) $(DESTDIR)$(PREFIX)/lib/libmxprof.so
	install -m 0644 $(AR_LIB) $(DESTDIR)$(PREFIX)/lib/libmxprof.a
	install -m 0644 include/mxprof.h include/mxprof_dl.h $(DESTDIR)$(PREFIX)/include/
	for t in $(TOOL_BIN); do install -m 0755 $$t $(DESTDIR)$(PREFIX)/bin/; done
	install -d $(DESTDIR)$(PREFIX)/share/mxprof/python/mxprof
	install -m 0644 tools/python/mxprof/*.py \
	    $(DESTDIR)$(PREFIX)/share/mxprof/python/mxprof/

clean:
	rm -rf build build-asan build-ubsan build-tsan build-aarch64 libmxprof.so
