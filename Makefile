# numalot: build, test, install. See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
SAN ?=
CC ?= cc

PKGS := hwloc json-c papi

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wundef -Wpointer-arith
CFLAGS ?= -O2 -g
ifeq ($(SAN),1)
CFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif
NL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) \
	-DNUMALOT_DATADIR='"$(PREFIX)/share/numalot"' -Icore -Icore/sim -Icore/real -Icore/agent -Ispank \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
NL_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lnuma -lm
TEST_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)

LIB_SRC := $(wildcard core/*.c core/sim/*.c core/real/*.c) \
	$(filter-out core/agent/numalotd.c,$(wildcard core/agent/*.c)) spank/site.c
CLI_SRC := $(wildcard core/cli/*.c)
TEST_SRC := $(wildcard tests/unit/test_*.c)
BENCH_SRC := $(wildcard tests/bench/*.c)

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TESTS := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCHES := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
LIB := $(BUILD)/libnumalot.a
NUMALOT := $(BUILD)/numalot
SLURM_PLUGIN_DIR ?= $(firstword $(wildcard /usr/lib/*/slurm-wlm /usr/lib64/slurm /usr/lib/slurm) /usr/lib/slurm)
SPANK_SRC := spank/numalot.c spank/agentctl.c spank/site.c core/agent/protocol.c \
	core/agent/rwrite.c core/util.c
SPANK := $(BUILD)/numalot.so
NUMALOTD := $(BUILD)/numalotd
WORKLOAD := $(BUILD)/numalot-workload

.PHONY: all check test-bin run-tests clean install uninstall deps format \
	bench demo fuzz format-check guest-check
# PREFIX is compiled into numalot (the scenario set) and the plugin (the
# agent's path): a stamp makes them rebuild when it changes.
PREFIX_STAMP := $(BUILD)/prefix
$(shell mkdir -p $(BUILD); echo '$(PREFIX)' | cmp -s - $(PREFIX_STAMP) 2>/dev/null || echo '$(PREFIX)' > $(PREFIX_STAMP))

all: $(NUMALOT) $(NUMALOTD) $(WORKLOAD) $(SPANK)

$(BUILD)/core/cli/cmd_bench.o: $(PREFIX_STAMP)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(NUMALOT): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(NL_LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) \
		$(NL_LIBS) $(TEST_LIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(NL_LIBS)

$(NUMALOTD): $(BUILD)/core/agent/numalotd.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(NL_LIBS)

# The SPANK plugin: no -lslurm, the spank_* symbols come from the loader.
$(SPANK): $(SPANK_SRC) $(wildcard spank/*.h) core/agent/protocol.h \
	core/agent/rwrite.h $(PREFIX_STAMP)
	$(CC) $(NL_CFLAGS) -Ispank $(CFLAGS) -fPIC -shared \
		-DNUMALOT_AGENT_PATH='"$(PREFIX)/sbin/numalotd"' -o $@ \
		$(SPANK_SRC) $(shell pkg-config --libs json-c)

$(WORKLOAD): tests/workload/workload.c
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) $(CFLAGS) $(LDFLAGS) -pthread -o $@ $<

test-bin: $(NUMALOT) $(NUMALOTD) $(WORKLOAD) $(SPANK) $(TESTS)

run-tests: test-bin
	NUMALOT=$(NUMALOT) WORKLOAD=$(WORKLOAD) BUILD=$(BUILD) SAN=$(SAN) \
		tests/run-tests.sh $(TESTS)

# The whole suite: a normal build, the guests, then the same tests under
# ASan+UBSan.
check:
	$(MAKE) run-tests
	$(MAKE) guest-check
	$(MAKE) BUILD=build/asan SAN=1 run-tests

# numalot on a real kernel with 2 and 4 NUMA nodes: QEMU guests running
# this machine's userland; a skip where they cannot be had (tests/guest/).
guest-check: all
	BUILD=$(BUILD) tests/guest/check.sh

bench: $(NUMALOT) $(BENCHES)
	tests/bench/run-bench.sh $(BUILD)

# The main job: a local Slurm with the plugin, two co-scheduled jobs under
# srun --numalot, their reports, and the model of a NUMA node.
demo: all
	tools/demo.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin \
		$(DESTDIR)$(SLURM_PLUGIN_DIR) \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/numalot/scenarios/set \
		$(DESTDIR)$(PREFIX)/share/numalot/examples
	install -m 0755 $(NUMALOT) $(DESTDIR)$(PREFIX)/bin/numalot
	install -m 0755 $(NUMALOTD) $(DESTDIR)$(PREFIX)/sbin/numalotd
	install -m 0755 $(SPANK) $(DESTDIR)$(SLURM_PLUGIN_DIR)/numalot.so
	install -m 0644 docs/man/numalot.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 docs/man/numalotd.8 docs/man/numalot-spank.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0644 etc/scenarios/*.json $(DESTDIR)$(PREFIX)/share/numalot/scenarios/
	install -m 0644 etc/scenarios/set/*.json \
		$(DESTDIR)$(PREFIX)/share/numalot/scenarios/set/
	install -m 0644 etc/plugstack.conf.example etc/numalotd.service \
		$(DESTDIR)$(PREFIX)/share/numalot/examples/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/numalot $(DESTDIR)$(PREFIX)/sbin/numalotd \
		$(DESTDIR)$(SLURM_PLUGIN_DIR)/numalot.so \
		$(DESTDIR)$(PREFIX)/share/man/man1/numalot.1 \
		$(DESTDIR)$(PREFIX)/share/man/man8/numalotd.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/numalot-spank.8
	rm -rf $(DESTDIR)$(PREFIX)/share/numalot

# Install the Debian packages numalot needs (root), or say how; then the
# test guests' kernel and initramfs (a skip is not an error).
deps:
	@tools/deps.sh
	@tests/guest/build.sh $(BUILD)/guest || [ $$? -eq 3 ]

fuzz:
	tests/fuzz/run-fuzz.sh $(BUILD) $(or $(FUZZ_SECONDS),10)

FORMAT_SRC = $(wildcard core/*.[ch] core/*/*.[ch] spank/*.[ch] tests/unit/*.[ch] \
	tests/bench/*.c tests/workload/*.c tests/fuzz/*.c)
format:
	clang-format -i $(FORMAT_SRC)

# Lists the files clang-format would change (exit 1 if any).
format-check:
	@bad=0; for f in $(FORMAT_SRC); do \
		clang-format "$$f" | cmp -s - "$$f" || { echo "$$f"; bad=1; }; \
	done; exit $$bad

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(BUILD)/core/agent/numalotd.d
