# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# devcg: libdevcg, the devcg CLI, their BPF programs and tests.
# All output goes to $(BUILD); `make V=1` shows full commands.

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
VERSION  := $(shell sed -n 's/^\#define DEVCG_VERSION "\(.*\)"/\1/p' include/devcg.h)
SOVERSION := $(firstword $(subst ., ,$(VERSION)))

# The BPF target architecture: the build machine's, or ARCH= (x86, arm64, ...).
HOST_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' \
		-e 's/riscv64/riscv/' -e 's/s390x/s390/' -e 's/loongarch64/loongarch/')
ARCH     ?= $(HOST_ARCH)
# vmlinux.h comes from the running kernel: say so when it is another arch's
BPF_ARCH_FLAGS := -D__TARGET_ARCH_$(ARCH) $(if $(filter $(ARCH),$(HOST_ARCH)),,-DDEVCG_CROSS_ARCH)
MULTIARCH_INC := $(firstword $(wildcard /usr/include/$(shell uname -m)-linux-gnu) /usr/include)

# Install directories (GNU names); DESTDIR stages the whole tree. Under
# PREFIX=/usr the library goes to the multiarch directory, as Debian's own
# (/usr/lib/x86_64-linux-gnu, ...).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
MULTIARCH  := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch 2>/dev/null)
LIBDIR     ?= $(PREFIX)/lib$(if $(and $(filter /usr,$(PREFIX)),$(MULTIARCH)),/$(MULTIARCH))
INCLUDEDIR ?= $(PREFIX)/include
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN     := -Wall -Wextra -Werror -Wno-missing-field-initializers -Wno-format-truncation
CFLAGS   ?= -O2 -g
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -fPIC -fvisibility=hidden \
	-Iinclude -Iuser/lib -Iuser/trace -Ibpf -I$(BUILD)
LDLIBS   := -lbpf -lelf -lz -ljansson -lsystemd -lyaml
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRCS := $(wildcard user/lib/*.c user/lib/*/*.c)
CLI_SRCS := $(wildcard user/cli/*.c)
# the trace is built into the CLI only (README: "devcg trace")
TRACE_SRCS := $(wildcard user/trace/*.c)
BPF_SRCS := $(wildcard bpf/*.bpf.c)
SKELS    := $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.skel.h)
LIB_OBJS := $(LIB_SRCS:user/lib/%.c=$(BUILD)/lib/%.o)
CLI_OBJS := $(CLI_SRCS:user/cli/%.c=$(BUILD)/cli/%.o)
TRACE_OBJS := $(TRACE_SRCS:user/trace/%.c=$(BUILD)/trace/%.o)
HEADERS  := include/devcg.h $(wildcard user/lib/*.h user/lib/*/*.h user/trace/*.h user/cli/*.h bpf/*.h)

UNIT_SRCS   := tests/harness.c $(wildcard tests/unit/*.c)
KERNEL_SRCS := tests/harness.c tests/scratch.c tests/probe.c tests/reader.c $(wildcard tests/kernel/*.c)

.PHONY: all bpf deps demo test unit-test kernel-test check-docs fuzz clean install uninstall deb image
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BUILD)/devcg $(BUILD)/libdevcg.a $(BUILD)/libdevcg.so $(BUILD)/devcg-reader

# The BPF objects alone: `make ARCH=arm64 BUILD=build/arm64 bpf` builds them
# for another architecture.
bpf: $(BPF_SRCS:bpf/%.bpf.c=$(BUILD)/%.bpf.o)

deps:
	$(Q)tools/deps.sh

$(BUILD) $(BUILD)/lib $(BUILD)/trace $(BUILD)/cli $(BUILD)/tests $(BUILD)/asan:
	$(Q)mkdir -p $@

# BPF: clang -> object -> skeleton header embedded in the trace (the
# device filter has no object: user/lib/filter/program.c writes its instructions).
# The running kernel's types, for the trace programs (CO-RE).
$(BUILD)/vmlinux.h: | $(BUILD)
	$(call msg,GEN,$@)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(BUILD)/vmlinux.h | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -target bpf -O2 -g -Wall -Werror $(BPF_ARCH_FLAGS) -Ibpf -Iinclude -I$(BUILD) -I$(MULTIARCH_INC) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

$(BUILD)/lib/%.o: user/lib/%.c $(HEADERS) | $(BUILD)/lib
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/trace/%.o: user/trace/%.c $(HEADERS) $(SKELS) | $(BUILD)/trace
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/cli/%.o: user/cli/%.c $(HEADERS) | $(BUILD)/cli
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -DDEVCG_CLI -c $< -o $@

# The static library is one relocatable object whose hidden symbols are made
# local: only the DEVCG_API functions are global, as in the shared library.
$(BUILD)/libdevcg.o: $(LIB_OBJS)
	$(call msg,LD-R,$@)
	$(Q)$(LD) -r -o $@ $(LIB_OBJS) && objcopy --localize-hidden $@

$(BUILD)/libdevcg.a: $(BUILD)/libdevcg.o
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# libdevcg.so.X.Y.Z, its soname libdevcg.so.X and the link-time name libdevcg.so.
$(BUILD)/libdevcg.so.$(VERSION): $(LIB_OBJS) user/lib/libdevcg.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,--version-script=user/lib/libdevcg.map -Wl,-soname,libdevcg.so.$(SOVERSION) \
		-Wl,-z,defs -o $@ $(LIB_OBJS) $(LDLIBS)

$(BUILD)/libdevcg.so: $(BUILD)/libdevcg.so.$(VERSION)
	$(Q)ln -sf libdevcg.so.$(VERSION) $(BUILD)/libdevcg.so.$(SOVERSION)
	$(Q)ln -sf libdevcg.so.$(SOVERSION) $@

$(BUILD)/devcg: $(CLI_OBJS) $(TRACE_OBJS) $(LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(CLI_OBJS) $(TRACE_OBJS) $(LIB_OBJS) $(LDLIBS)

$(BUILD)/devcg-reader: tools/reader.c | $(BUILD)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -o $@ $<

# Tests link the library's objects directly (hidden symbols included).
$(BUILD)/tests/unit: $(UNIT_SRCS) tests/harness.h tests/prom.h $(TRACE_OBJS) $(LIB_OBJS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $(UNIT_SRCS) $(TRACE_OBJS) $(LIB_OBJS) $(LDLIBS)

$(BUILD)/tests/kernel: $(KERNEL_SRCS) tests/harness.h tests/scratch.h tests/probe.h tests/reader.h tests/kernel/ktest.h tests/runtime.h tests/prom.h $(TRACE_OBJS) $(LIB_OBJS) | $(BUILD)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $(KERNEL_SRCS) $(TRACE_OBJS) $(LIB_OBJS) $(LDLIBS)

# The same unit tests under AddressSanitizer and UBSan.
$(BUILD)/asan/unit: $(UNIT_SRCS) $(LIB_SRCS) $(TRACE_SRCS) tests/harness.h tests/prom.h $(HEADERS) $(SKELS) | $(BUILD)/asan
	$(call msg,CC-ASAN,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(SANITIZE) -Itests -o $@ $(UNIT_SRCS) $(LIB_SRCS) $(TRACE_SRCS) $(LDLIBS)

# libFuzzer target for the parsers (clang only).
$(BUILD)/fuzz-parse: tests/fuzz/fuzz_parse.c $(LIB_SRCS) $(HEADERS) $(SKELS) | $(BUILD)
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(filter-out -Wno-format-truncation,$(ALL_CFLAGS)) -fsanitize=fuzzer,address,undefined \
		-o $@ tests/fuzz/fuzz_parse.c $(LIB_SRCS) $(LDLIBS)

fuzz: $(BUILD)/fuzz-parse
	$(Q)mkdir -p $(BUILD)/fuzz-corpus
	$(Q)$(BUILD)/fuzz-parse -max_total_time=$${FUZZ_SECONDS:-60} -max_len=8192 \
		$(BUILD)/fuzz-corpus tests/fuzz/corpus

unit-test: $(BUILD)/tests/unit $(BUILD)/asan/unit $(BUILD)/devcg
kernel-test: $(BUILD)/tests/kernel $(BUILD)/devcg $(BUILD)/devcg-reader

test: deps
	$(Q)$(MAKE) --no-print-directory unit-test kernel-test
	$(Q)tools/run-tests.sh $(BUILD)

# Every link and repository path in the documentation resolves (also part of
# `make test`).
check-docs:
	$(Q)tools/check-docs.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh $(BUILD)

clean:
	$(Q)rm -rf $(BUILD)

# The node agent devcg-nri (docs/kubernetes.md): installed, with its unit,
# and packaged when the tree builds it (NRI_AGENT, set where its rule
# $(BUILD)/devcg-nri is); WITH_NRI=1 or WITH_NRI= says so by hand.
WITH_NRI ?= $(NRI_AGENT)
NRI_INSTALLED := $(if $(WITH_NRI),$(BINDIR)/devcg-nri $(SYSTEMDUNITDIR)/devcg-nri.service)

# What `make install` puts where; `make uninstall` removes exactly these.
INSTALLED := $(NRI_INSTALLED) $(INCLUDEDIR)/devcg.h $(LIBDIR)/libdevcg.so.$(VERSION) $(LIBDIR)/libdevcg.so.$(SOVERSION) \
	$(LIBDIR)/libdevcg.so $(LIBDIR)/libdevcg.a $(LIBDIR)/pkgconfig/devcg.pc $(BINDIR)/devcg \
	$(MANDIR)/man8/devcg.8 $(BASHCOMPDIR)/devcg $(DATADIR)/containers/oci/hooks.d/devcg.json \
	$(SYSTEMDUNITDIR)/devcg-trace.service

install: all $(if $(WITH_NRI),$(BUILD)/devcg-nri)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DATADIR)/containers/oci/hooks.d \
		$(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)install -m 644 include/devcg.h $(DESTDIR)$(INCLUDEDIR)/devcg.h
	$(Q)install -m 755 $(BUILD)/libdevcg.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libdevcg.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdevcg.so.$(SOVERSION)
	$(Q)ln -sf libdevcg.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libdevcg.so
	$(Q)install -m 644 $(BUILD)/libdevcg.a $(DESTDIR)$(LIBDIR)/libdevcg.a
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' user/lib/devcg.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/devcg.pc
	$(Q)chmod 644 $(DESTDIR)$(LIBDIR)/pkgconfig/devcg.pc
	$(Q)install -m 755 $(BUILD)/devcg $(DESTDIR)$(BINDIR)/devcg
	$(Q)install -m 644 user/cli/devcg.8 $(DESTDIR)$(MANDIR)/man8/devcg.8
	$(Q)install -m 644 user/cli/devcg.bash $(DESTDIR)$(BASHCOMPDIR)/devcg
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|' tools/oci-hooks.d/devcg.json.in \
		> $(DESTDIR)$(DATADIR)/containers/oci/hooks.d/devcg.json
	$(Q)chmod 644 $(DESTDIR)$(DATADIR)/containers/oci/hooks.d/devcg.json
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|' tools/systemd/devcg-trace.service.in \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/devcg-trace.service
	$(Q)chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/devcg-trace.service
ifneq ($(WITH_NRI),)
	$(Q)install -m 755 $(BUILD)/devcg-nri $(DESTDIR)$(BINDIR)/devcg-nri
	$(Q)sed -e 's|@BINDIR@|$(BINDIR)|' tools/systemd/devcg-nri.service.in \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/devcg-nri.service
	$(Q)chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/devcg-nri.service
endif

# The directories only devcg's files need, deepest first: `make uninstall`
# removes each one left empty. The GNU directories themselves (BINDIR,
# LIBDIR, INCLUDEDIR, DATADIR, MANDIR, PREFIX) are never removed.
INSTALLED_DIRS := $(DATADIR)/containers/oci/hooks.d $(DATADIR)/containers/oci $(DATADIR)/containers \
	$(BASHCOMPDIR) $(if $(filter %/completions,$(BASHCOMPDIR)),$(BASHCOMPDIR:%/completions=%)) \
	$(MANDIR)/man8 $(LIBDIR)/pkgconfig $(SYSTEMDUNITDIR) \
	$(if $(filter %/systemd/system,$(SYSTEMDUNITDIR)),$(SYSTEMDUNITDIR:%/system=%))

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	$(Q)for d in $(addprefix $(DESTDIR),$(INSTALLED_DIRS)); do \
		[ ! -d "$$d" ] || rmdir --ignore-fail-on-non-empty "$$d"; done

# Debian packages from the same install step (tools/deb.sh; dpkg-deb only).
deb: all $(if $(WITH_NRI),$(BUILD)/devcg-nri)
	$(Q)tools/deb.sh $(BUILD) $(VERSION)

# The agent's OCI image, from those packages, as an OCI layout tarball for
# `ctr -n k8s.io images import` (tools/image.sh; nothing fetched).
image: deb
	$(Q)tools/image.sh $(BUILD) $(VERSION)

# Larger jobs keep their rules beside their code (tools/bench, tools/vmtest, ...).
include $(wildcard tools/*/*.mk)
