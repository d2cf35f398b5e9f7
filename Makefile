# numalot: build, test, install. See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
SAN ?=
CC ?= cc
# Slurm installed elsewhere than /usr (/opt/slurm): its headers from
# $(SLURM_PREFIX)/include, its slurm.pc from $(SLURM_PREFIX)/lib*/pkgconfig.
SLURM_PREFIX ?=
# Slurm's plugin folder. Empty: asked of Slurm at install time
# (tools/plugindir.sh; `make plugindir` prints it).
PLUGINDIR ?=
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# The documents, installed once; the HTML report points there.
DOCDIR := $(PREFIX)/share/doc/numalot
# The site's configuration, read by the plugin and numalotd
# (CONFDIR/numalot.conf, compiled in; docs/slurm.md, "Site policy").
CONFDIR ?= /etc/numalot
# Slurm's configuration folder: when set (the packages: /etc/slurm),
# plugstack.conf.d/numalot.conf is installed there, and numalot.conf in
# CONFDIR.
SLURM_CONFDIR ?=
# A packager whose compiler is newer may build with WERROR=.
WERROR ?= -Werror
# Builds use every CPU unless make is given -j (on 2 CPUs the build for
# the tests took 33 s one file at a time and 18 s two at a time).
MAKEFLAGS += -j$(shell nproc)

PKGS := hwloc json-c papi

WARN := -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wundef -Wpointer-arith
# SAN=1: ASan+UBSan on top of the user's CFLAGS and LDFLAGS.
ifeq ($(SAN),1)
CFLAGS ?= -O1 -g
SAN_CFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
SAN_LDFLAGS := -fsanitize=address,undefined
endif
CFLAGS ?= -O2 -g
# Hardening: stack protector, FORTIFY_SOURCE where optimising (and not
# already asked for by the caller's flags; not under the sanitizers),
# full RELRO, position-independent executables.
HARDEN := -fstack-protector-strong
ifeq ($(SAN),)
ifneq ($(filter -O%,$(filter-out -O0,$(CFLAGS))),)
ifeq ($(findstring _FORTIFY_SOURCE,$(CPPFLAGS) $(CFLAGS)),)
HARDEN += -D_FORTIFY_SOURCE=2
endif
endif
endif
LD_HARDEN := -Wl,-z,relro,-z,now
SLURM_CPPFLAGS := $(if $(SLURM_PREFIX),-I$(SLURM_PREFIX)/include)
NL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(HARDEN) $(SLURM_CPPFLAGS) \
	-DNUMALOT_DATADIR='"$(PREFIX)/share/numalot"' \
	-DNUMALOT_DOCDIR='"$(DOCDIR)"' \
	-DNUMALOT_CONF='"$(CONFDIR)/numalot.conf"' \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CPPFLAGS)
NL_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lnuma -lm
TEST_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)
# Executables are PIE; the plugin is built with -fPIC on its own.
EXE_CFLAGS := -fPIE
EXE_LDFLAGS := -pie $(LD_HARDEN) $(LDFLAGS)

# Each folder's headers and those of the layers below it, never one above:
# a file that includes a header from above does not compile, so these sets
# are the layering (docs/architecture.md, "As built", draws it). Tests
# take everything.
INC_core/base := -Icore/base
INC_core/machine := $(INC_core/base) -Icore/machine
INC_core/protocol := $(INC_core/base) -Icore/protocol
INC_core/digest := -Icore/digest
INC_core/policy := $(INC_core/machine) -Icore/protocol -Icore/policy
INC_core/engine := $(INC_core/policy) -Icore/engine
INC_core/real/procfs := $(INC_core/machine) -Icore/real/procfs
INC_core/real/counters := $(INC_core/real/procfs) -Icore/real/counters
INC_core/real := $(INC_core/real/counters) -Icore/real
INC_core/sim := $(INC_core/machine) -Icore/sim
INC_core/simrun := $(INC_core/engine) -Icore/sim -Icore/simrun
INC_core/agent := $(INC_core/engine) -Icore/real/procfs -Icore/real/counters \
	-Icore/real -Icore/agent
# The command line: what its outputs share (cli/out: messages, files,
# pages), the report's renderers (cli/report, on a report's digest), the
# bench's (cli/bench, on a simulated run), then the commands on all.
INC_core/cli/out := $(INC_core/base) -Icore/protocol -Icore/cli/out
INC_core/cli/report := $(INC_core/base) -Icore/digest -Icore/cli/out \
	-Icore/cli/report
INC_core/cli/bench := $(INC_core/simrun) -Icore/cli/out -Icore/cli/bench
INC_core/cli := $(INC_core/cli/bench) -Icore/real/procfs -Icore/real/counters \
	-Icore/real -Icore/digest -Icore/cli/report -Icore/cli
INC_spank := $(INC_core/protocol) -Icore/digest -Ispank
INC_tests := $(INC_core/cli) -Icore/agent -Ispank -Itests/unit
inc = $(INC_$(patsubst %/,%,$(dir $(1))))

# The folders below the programs.
LIB_DIRS := base machine protocol policy engine digest real/procfs \
	real/counters real sim simrun
# libnumalot.a: every layer below the programs (the engine, both
# machines, the protocol). (An archive is made anew when the Makefile
# changes: its list may have.)
LIB_SRC := $(foreach d,$(LIB_DIRS),$(wildcard core/$(d)/*.c))
# The agent's objects: numalotd only (and the tests).
AGENT_SRC := $(filter-out core/agent/numalotd.c,$(wildcard core/agent/*.c))
CLI_SRC := $(wildcard core/cli/*.c core/cli/*/*.c)
# tests/unit/FOLDER/test_*.c, FOLDER as in core/ (built into
# $(BUILD)/tests/ all the same).
TEST_SRC := $(wildcard tests/unit/*/test_*.c tests/unit/*/*/test_*.c)
BENCH_SRC := $(wildcard tests/bench/*.c)

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
AGENT_OBJ := $(AGENT_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TESTS := $(addprefix $(BUILD)/tests/,$(basename $(notdir $(TEST_SRC))))
BENCHES := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
LIB := $(BUILD)/libnumalot.a
AGENT_LIB := $(BUILD)/libnumalotd.a
# Tests link every part; the plugin's parts that need no Slurm (the
# plugstack parser, the site's files) for their tests, first.
TEST_LINK := $(BUILD)/spank/site.o $(BUILD)/spank/collect.o $(BUILD)/spank/nodename.o \
	$(BUILD)/spank/report_path.o $(AGENT_LIB) $(LIB)
NUMALOT := $(BUILD)/numalot
# The plugin: its own position-independent objects, the protocol (with the
# policies' names), and a report's digest, for the site log.
PROTO_SRC := $(wildcard core/protocol/*.c)
SPANK_SRC := $(wildcard spank/*.c) $(PROTO_SRC) core/base/util.c \
	$(wildcard core/digest/*.c)
SPANK_OBJ := $(SPANK_SRC:%.c=$(BUILD)/pic/%.o)
SPANK := $(BUILD)/numalot.so
NUMALOTD := $(BUILD)/numalotd
WORKLOAD := $(BUILD)/numalot-workload
UNITS := $(BUILD)/numalotd.service
# libFuzzer targets (clang); make check runs them briefly.
CLANG ?= clang
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -std=c11 \
	-D_GNU_SOURCE $(shell pkg-config --cflags json-c 2>/dev/null)
FUZZ := $(BUILD)/fuzz/fuzz_protocol $(BUILD)/fuzz/fuzz_site
FUZZ_BIN := $(if $(shell command -v $(CLANG) 2>/dev/null),$(FUZZ))

.PHONY: all check test-bin run-tests clean install uninstall deps check-deps format \
	bench bench-random demo fuzz format-check guest-check plugindir
# PREFIX is compiled into numalot (the scenario set) and the plugin (the
# agent's path), CONFDIR into the plugin and numalotd: a stamp makes them
# rebuild when either changes.
PREFIX_STAMP := $(BUILD)/prefix
$(shell mkdir -p $(BUILD); echo '$(PREFIX) $(CONFDIR)' | cmp -s - $(PREFIX_STAMP) 2>/dev/null || echo '$(PREFIX) $(CONFDIR)' > $(PREFIX_STAMP))

all: $(NUMALOT) $(NUMALOTD) $(WORKLOAD) $(SPANK) $(UNITS)

$(BUILD)/core/cli/cmd_bench.o $(BUILD)/core/cli/cmd_sim.o \
	$(BUILD)/core/cli/report/report_html.o $(BUILD)/core/agent/agent_args.o \
	$(BUILD)/core/agent/agent.o: $(PREFIX_STAMP)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) $(call inc,$<) $(CFLAGS) $(SAN_CFLAGS) \
		$(EXE_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(LIB_OBJ) Makefile
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)

$(AGENT_LIB): $(AGENT_OBJ) Makefile
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)

$(NUMALOT): $(CLI_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(EXE_LDFLAGS) $(SAN_LDFLAGS) -o $@ $^ $(NL_LIBS)

# Tests and benches are built from one file each, with -MMD too; a test's
# file is in the folder of what it tests (its rule: below).
$(TESTS): $(BUILD)/tests/%: $(TEST_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) $(INC_tests) $(CFLAGS) $(SAN_CFLAGS) $(EXE_CFLAGS) \
		$(EXE_LDFLAGS) $(SAN_LDFLAGS) -MMD -MP -MF $@.d -MT $@ -o $@ \
		$(filter $(TEST_SRC),$^) $(TEST_CLI_$(@F)) $(TEST_LINK) $(NL_LIBS) \
		$(TEST_LIBS)
$(foreach t,$(TEST_SRC),$(eval $(BUILD)/tests/$(basename $(notdir $(t))): $(t)))
# A unit test of a command-line file links that file too.
TEST_CLI_test_eval_stats := $(BUILD)/core/cli/eval_stats.o
$(BUILD)/tests/test_eval_stats: $(TEST_CLI_test_eval_stats)
TEST_CLI_test_eval_numad := $(BUILD)/core/cli/eval_sys.o \
	$(BUILD)/core/cli/out/outfile.o \
	$(BUILD)/core/cli/out/cli_out.o
$(BUILD)/tests/test_eval_numad: $(TEST_CLI_test_eval_numad)

$(BENCHES): $(BUILD)/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) $(INC_core/engine) $(CFLAGS) $(SAN_CFLAGS) $(EXE_CFLAGS) \
		$(EXE_LDFLAGS) $(SAN_LDFLAGS) -MMD -MP -MF $@.d -MT $@ -o $@ $< \
		$(LIB) $(NL_LIBS)

$(NUMALOTD): $(BUILD)/core/agent/numalotd.o $(AGENT_LIB) $(LIB)
	$(CC) $(CFLAGS) $(EXE_LDFLAGS) $(SAN_LDFLAGS) -o $@ $^ $(NL_LIBS)

# The SPANK plugin: no -lslurm, the spank_* symbols come from the loader;
# it exports only what Slurm looks up (spank/numalot.map).
$(BUILD)/pic/%.o: %.c $(PREFIX_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NL_CFLAGS) $(call inc,$<) $(CFLAGS) -fPIC \
		-DNUMALOT_AGENT_PATH='"$(PREFIX)/sbin/numalotd"' -MMD -MP \
		-c -o $@ $<

$(SPANK): $(SPANK_OBJ) spank/numalot.map
	$(CC) $(CFLAGS) -shared $(LD_HARDEN) \
		-Wl,--version-script=spank/numalot.map $(LDFLAGS) -o $@ \
		$(SPANK_OBJ) $(shell pkg-config --libs json-c)

# The systemd units, ExecStart= from PREFIX.
$(UNITS): $(BUILD)/%: etc/%.in $(PREFIX_STAMP)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' $< >$@

# numalot-workload: the test program and its NAS-like kernels
# (tests/workload/README.md).
WORKLOAD_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard tests/workload/*.c))
$(WORKLOAD): $(WORKLOAD_OBJ)
	$(CC) $(CFLAGS) $(SAN_CFLAGS) $(EXE_LDFLAGS) $(SAN_LDFLAGS) -pthread \
		-o $@ $^ -lm

$(BUILD)/fuzz/fuzz_protocol: tests/fuzz/fuzz_protocol.c $(PROTO_SRC) \
	core/base/util.c $(wildcard core/protocol/*.h) core/base/util.h
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) $(INC_core/protocol) -o $@ $< $(PROTO_SRC) \
		core/base/util.c $(shell pkg-config --libs json-c)

$(BUILD)/fuzz/fuzz_site: tests/fuzz/fuzz_site.c spank/site.c spank/site.h \
	spank/report_path.c spank/report_path.h core/protocol/siteconf.c \
	core/protocol/rootdir.c core/protocol/policy_names.c \
	core/protocol/policy_list.h core/base/util.c
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_CFLAGS) $(INC_spank) -o $@ $< spank/site.c \
		spank/report_path.c core/protocol/siteconf.c \
		core/protocol/rootdir.c core/protocol/policy_names.c \
		core/base/util.c -lm

# The plain pass runs the fuzz targets briefly (where clang is).
test-bin: $(NUMALOT) $(NUMALOTD) $(WORKLOAD) $(SPANK) $(TESTS) \
	$(if $(filter 1,$(SAN)),,$(FUZZ_BIN))

run-tests: test-bin
	NUMALOT=$(NUMALOT) WORKLOAD=$(WORKLOAD) BUILD=$(BUILD) SAN=$(SAN) \
		tests/run-tests.sh $(TESTS)

# The whole suite: what the tests need (check-deps), a normal build, the
# 4-node guest (both guests beside two CPU hogs took 12 of 26 minutes;
# make guest-check runs the 2-node one too), then the same tests under
# ASan+UBSan.
check:
	$(MAKE) check-deps
	$(MAKE) run-tests
	GUEST_NODES=$${GUEST_NODES:-4} $(MAKE) guest-check
	$(MAKE) BUILD=build/asan SAN=1 run-tests

# numalot on a real kernel with 2 and 4 NUMA nodes: QEMU guests running
# this machine's userland; a skip where they cannot be had (tests/guest/).
guest-check: all $(BUILD)/tests/test_hot
	@tools/deps.sh test || echo "guest-check: without them the guests are skipped"
	BUILD=$(BUILD) tests/guest/check.sh

bench: $(NUMALOT) $(BENCHES)
	tests/bench/run-bench.sh $(BUILD)

# Issue 24's generalisation check: 200 fresh random scenarios x 3 seeds
# under each counter backend, and the same with the machine constants
# perturbed by up to 50%; fails on any run more than 2% slower than linux
# (docs/evaluation.md: it does today). SEED=S repeats one.
bench-random: $(NUMALOT)
	seed=$${SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
	echo "bench-random: --seed=$$seed"; st=0; \
	$(NUMALOT) bench --random=200 --seed=$$seed --seeds=3 \
		--policies=imar2,lbma,best-static,ideal-locality \
		--counters=pebs,perf,software --fail-worse=2 || st=1; \
	$(NUMALOT) bench --random=200 --seed=$$seed --seeds=3 --perturb=0.5 \
		--policies=imar2,lbma --counters=pebs,perf,software \
		--fail-worse=2 || st=1; \
	exit $$st

# The main job: a local Slurm with the plugin, two co-scheduled jobs under
# srun --numalot, their reports, and the model of a NUMA node.
demo: all
	tools/demo.sh

# Slurm's plugin folder: PLUGINDIR, else asked of Slurm (docs/slurm.md,
# "Installing").
PLUGINDIR_SH = $(or $(PLUGINDIR),$$(tools/plugindir.sh '$(SLURM_PREFIX)' '$(PREFIX)'))
plugindir:
	@echo $(PLUGINDIR_SH)

install: all
	@pd=$(PLUGINDIR_SH); echo "numalot: the plugin goes to $$pd"; \
	set -e; \
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin \
		$(DESTDIR)$$pd $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/numalot/scenarios/set \
		$(DESTDIR)$(PREFIX)/share/numalot/examples $(DESTDIR)$(DOCDIR); \
	install -m 0755 $(SPANK) $(DESTDIR)$$pd/numalot.so
	install -m 0755 $(NUMALOT) $(DESTDIR)$(PREFIX)/bin/numalot
	install -m 0755 $(NUMALOTD) $(DESTDIR)$(PREFIX)/sbin/numalotd
	install -m 0644 $(UNITS) etc/numalotd.socket $(DESTDIR)$(SYSTEMDUNITDIR)/
	install -m 0644 docs/man/numalot.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 docs/man/numalotd.8 docs/man/numalot-spank.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/
	install -m 0644 etc/scenarios/*.json $(DESTDIR)$(PREFIX)/share/numalot/scenarios/
	install -m 0644 etc/scenarios/set/*.json \
		$(DESTDIR)$(PREFIX)/share/numalot/scenarios/set/
	install -m 0644 etc/plugstack.conf.example etc/plugstack.conf.d/numalot.conf \
		$(DESTDIR)$(PREFIX)/share/numalot/examples/
	install -m 0644 etc/numalot/numalot.conf \
		$(DESTDIR)$(PREFIX)/share/numalot/examples/numalot-site.conf
	install -m 0755 etc/numalot-textfile.sh etc/numalot-admincomment.sh \
		$(DESTDIR)$(PREFIX)/share/numalot/examples/
	install -m 0644 README.md docs/*.md docs/*.png docs/*.svg $(DESTDIR)$(DOCDIR)/
ifneq ($(SLURM_CONFDIR),)
	install -d $(DESTDIR)$(SLURM_CONFDIR)/plugstack.conf.d
	install -m 0644 etc/plugstack.conf.d/numalot.conf \
		$(DESTDIR)$(SLURM_CONFDIR)/plugstack.conf.d/
	install -d $(DESTDIR)$(CONFDIR)
	install -m 0644 etc/numalot/numalot.conf $(DESTDIR)$(CONFDIR)/
endif

uninstall:
	pd=$(PLUGINDIR_SH); rm -f $(DESTDIR)$$pd/numalot.so
	rm -f $(DESTDIR)$(PREFIX)/bin/numalot $(DESTDIR)$(PREFIX)/sbin/numalotd \
		$(DESTDIR)$(SYSTEMDUNITDIR)/numalotd.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/numalotd.socket \
		$(DESTDIR)$(PREFIX)/share/man/man1/numalot.1 \
		$(DESTDIR)$(PREFIX)/share/man/man8/numalotd.8 \
		$(DESTDIR)$(PREFIX)/share/man/man8/numalot-spank.8
	rm -rf $(DESTDIR)$(PREFIX)/share/numalot $(DESTDIR)$(DOCDIR)
ifneq ($(SLURM_CONFDIR),)
	rm -f $(DESTDIR)$(SLURM_CONFDIR)/plugstack.conf.d/numalot.conf \
		$(DESTDIR)$(CONFDIR)/numalot.conf
endif

# The Debian packages building and the demo need (root), or say how.
deps:
	@tools/deps.sh build

# ...and those the tests add, then the test guests' kernel and initramfs
# (a skip is not an error). Not root: the line to run, and the tests that
# need what is missing skip, saying so.
check-deps:
	@tools/deps.sh test || echo "check-deps: the tests that need them will skip"
	@tests/guest/build.sh $(BUILD)/guest || [ $$? -eq 3 ]

fuzz: $(FUZZ_BIN)
	tests/fuzz/run-fuzz.sh $(BUILD) $(or $(FUZZ_SECONDS),10)

FORMAT_SRC = $(wildcard core/*/*.[ch] core/*/*/*.[ch] spank/*.[ch] \
	tests/unit/*.[ch] tests/unit/*/*.[ch] tests/unit/*/*/*.[ch] \
	tests/bench/*.c tests/workload/*.[ch] tests/fuzz/*.c)
format:
	clang-format -i $(FORMAT_SRC)

# Lists the files clang-format would change (exit 1 if any).
format-check:
	@bad=0; for f in $(FORMAT_SRC); do \
		clang-format "$$f" | cmp -s - "$$f" || { echo "$$f"; bad=1; }; \
	done; exit $$bad

clean:
	rm -rf $(BUILD)

-include $(LIB_OBJ:.o=.d) $(AGENT_OBJ:.o=.d) \
	$(CLI_OBJ:.o=.d) $(BUILD)/core/agent/numalotd.d $(SPANK_OBJ:.o=.d) \
	$(BUILD)/spank/site.d $(TESTS:=.d) $(BENCHES:=.d) $(WORKLOAD_OBJ:.o=.d)
