# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# `make vmtest`: the project on Debian's own cloud kernel (Linux 6.1) under
# qemu with TCG, in four guests, one after the other:
#   busybox     the privileged kernel suite (build/tests/kernel) from a
#               busybox initramfs, on pure cgroup v2
#   systemd-v2  Debian 12 (mmdebstrap, cached by package list) with systemd
#               as PID 1 and the project's .debs, pure cgroup v2: the
#               systemd tests (tools/vmtest/guest/systemd-v2.sh)
#   systemd-v1  the same root with systemd.unified_cgroup_hierarchy=0
#               (tools/vmtest/guest/systemd-v1.sh)
#   k8s-node    Debian 13 (trixie, its own root, cached the same way) on
#               Debian 13's kernel, systemd 257, containerd 1.7 with CRI,
#               NRI and CDI, runc and crun, driven over CRI
#               (tools/vmtest/guest/k8s-node.sh)
# Everything goes to $(BUILD)/vmtest; each guest's serial console is kept
# there (guest.log, guest-systemd-v2.log, guest-systemd-v1.log). Included by
# the top Makefile.
#
#   make vmtest                          all four guests
#   make vmtest VMTEST_GUESTS=busybox    only these guests
#   make vmtest VMTEST_TESTS='trace_* *swap*'   busybox: the suite's tests
#                                        matching the globs
#   make vmtest VMTEST_CGROUP=hybrid     busybox: v1 devices and freezer
#                                        mounted too (default v2)
#   VMTEST_TIMEOUT=400 make vmtest       qemu's time limit per guest
#                                        (default 1500 s busybox, 1200 s systemd,
#                                        1800 s k8s-node)
#   VMTEST_APPEND='DEVCG_TEST_VERBOSE=1' make vmtest
#                                        kernel parameters; NAME=VALUE ones
#                                        reach the busybox suite's environment
#   VMTEST_KERNEL_PKG=linux-image-6.1.0-57-cloud-amd64 make vmtest
#                                        another kernel package (clean first)
#   VMTEST_K8S_KERNEL_PKG=linux-image-6.12.57+deb13-cloud-amd64 make vmtest
#                                        the k8s-node guest's kernel package
#                                        (VMTEST_K8S_SUITE: its suite, trixie)
#   make vmrun GUEST=systemd-v2 SCRIPT=FILE
#                                        boot one guest (busybox, systemd-v2,
#                                        systemd-v1, k8s-node) with the project
#                                        installed, run FILE as root once
#                                        systemd has reached its default
#                                        target, print its output, exit
#                                        with its status

VMTEST_DIR   := $(BUILD)/vmtest
VMTEST_TESTS ?=
VMTEST_CGROUP ?= v2
VMTEST_BINS  := $(BUILD)/devcg $(BUILD)/devcg-reader $(BUILD)/tests/kernel
VMTEST_GUESTS ?= busybox systemd-v2 systemd-v1 k8s-node
VMTEST_K8S_SUITE ?= trixie
export VMTEST_K8S_SUITE
VMTEST_K8S_KERNEL_PKG ?=
GUEST        ?= busybox
SCRIPT       ?=

.PHONY: vmtest vmtest-deps vmtest-kernel vmtest-k8s-kernel vmtest-initramfs vmtest-systemd-image vmtest-k8s-image vmtest-run vmtest-always vmrun

# qemu-system-x86 (and the build's own deps) on the host, if missing
vmtest-deps:
	$(Q)tools/deps.sh vmtest

# the guests one after the other (tools/vmtest/vmtest.sh); the systemd
# guests' image is built after the busybox guest has run
vmtest: vmtest-deps
	$(Q)$(MAKE) --no-print-directory $(VMTEST_BINS) vmtest-kernel \
		$(if $(filter k8s-node,$(VMTEST_GUESTS)),vmtest-k8s-kernel) \
		$(if $(filter busybox,$(VMTEST_GUESTS)),vmtest-initramfs)
	$(Q)set -f; MAKE='$(MAKE)' VMTEST_CGROUP=$(VMTEST_CGROUP) \
		tools/vmtest/vmtest.sh $(VMTEST_DIR) '$(VMTEST_GUESTS)' $(VMTEST_TESTS)

# boot what is there, without building
vmtest-run:
	$(Q)set -f; VMTEST_NO_BUILD=1 VMTEST_CGROUP=$(VMTEST_CGROUP) tools/vmtest/vmtest.sh $(VMTEST_DIR) '$(VMTEST_GUESTS)' $(VMTEST_TESTS)

# one guest, one script: its output on standard output, its exit status
vmrun: vmtest-deps
	$(Q)test -n '$(SCRIPT)' || { echo 'usage: make vmrun GUEST=busybox|systemd-v2|systemd-v1|k8s-node SCRIPT=FILE' >&2; exit 2; }
	$(Q)$(MAKE) --no-print-directory $(VMTEST_BINS) \
		$(if $(filter k8s-node,$(GUEST)),vmtest-k8s-kernel vmtest-k8s-image,vmtest-kernel) \
		$(if $(filter busybox,$(GUEST)),vmtest-initramfs,$(if $(filter systemd-%,$(GUEST)),vmtest-systemd-image)) >&2
	$(Q)VMTEST_GUEST=$(GUEST) VMTEST_SCRIPT='$(SCRIPT)' VMTEST_LOG=$(VMTEST_DIR)/vmrun.log \
		tools/vmtest/run.sh $(VMTEST_DIR)

vmtest-always:
vmtest-kernel: $(VMTEST_DIR)/vmlinuz
vmtest-initramfs: $(VMTEST_DIR)/initramfs.gz
vmtest-systemd-image: $(VMTEST_DIR)/systemd.cpio
vmtest-k8s-kernel: $(VMTEST_DIR)/$(VMTEST_K8S_SUITE)/vmlinuz
vmtest-k8s-image: $(VMTEST_DIR)/k8s.cpio

$(VMTEST_DIR):
	$(Q)mkdir -p $@

# downloaded and unpacked once (apt-get download, dpkg -x); not installed
$(VMTEST_DIR)/vmlinuz: tools/vmtest/fetch-kernel.sh | $(VMTEST_DIR)
	$(call msg,FETCH,$@)
	$(Q)tools/vmtest/fetch-kernel.sh $(VMTEST_DIR)

# the k8s-node guest's kernel: the suite's linux-image-cloud-amd64 (Debian
# 13: Linux 6.12), through a private apt configuration (aptsuite.sh)
$(VMTEST_DIR)/$(VMTEST_K8S_SUITE)/vmlinuz: tools/vmtest/fetch-kernel.sh tools/vmtest/aptsuite.sh | $(VMTEST_DIR)
	$(call msg,FETCH,$@)
	$(Q)VMTEST_KERNEL_PKG='$(VMTEST_K8S_KERNEL_PKG)' tools/vmtest/fetch-kernel.sh $(VMTEST_DIR)/$(VMTEST_K8S_SUITE) $(VMTEST_K8S_SUITE)

# made anew each time (a few seconds): what it takes from the host (the
# runtimes, the libraries) may have changed without any file here changing
$(VMTEST_DIR)/initramfs.gz: $(VMTEST_BINS) $(VMTEST_DIR)/vmlinuz tools/vmtest/init tools/vmtest/ldd tools/vmtest/mkinitramfs.sh vmtest-always | $(VMTEST_DIR)
	$(call msg,CPIO,$@)
	$(Q)tools/vmtest/mkinitramfs.sh $(BUILD) $@

# the systemd guests' reader: counts how opens end, by errno; static, so
# that it runs in the containers' busybox root too
$(VMTEST_DIR)/devcg-errno-reader: tools/vmtest/errno-reader.c | $(VMTEST_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -static -o $@ $<

# the systemd guests' image: the cached Debian root (mkroot.sh, mmdebstrap)
# with the project's .debs from `make deb` installed and the runner; made
# anew each time (the packages are rebuilt each time)
$(VMTEST_DIR)/systemd.cpio: $(VMTEST_BINS) $(VMTEST_DIR)/devcg-errno-reader $(VMTEST_DIR)/vmlinuz \
		tools/vmtest/mkroot.sh tools/vmtest/mkguest.sh tools/vmtest/init-systemd \
		$(wildcard tools/vmtest/guest/*.sh tools/vmtest/systemd/*) vmtest-always | $(VMTEST_DIR)
	$(Q)$(MAKE) --no-print-directory deb
	$(call msg,CPIO,$@)
	$(Q)tools/vmtest/mkguest.sh $(BUILD) $@

# the k8s-node guest's image: the cached Debian 13 root (mkroot.sh) with
# the project's .debs, containerd's configuration, the CDI specs, the
# images and the CRI client (mkguest.sh, k8s/mknode.sh); made anew each time
$(VMTEST_DIR)/k8s.cpio: $(VMTEST_BINS) $(VMTEST_DIR)/devcg-errno-reader $(VMTEST_DIR)/$(VMTEST_K8S_SUITE)/vmlinuz \
		tools/vmtest/mkroot.sh tools/vmtest/mkguest.sh tools/vmtest/aptsuite.sh tools/vmtest/init-systemd \
		$(wildcard tools/vmtest/guest/*.sh tools/vmtest/systemd/* tools/vmtest/k8s/*) vmtest-always | $(VMTEST_DIR)
	$(Q)$(MAKE) --no-print-directory deb
	$(call msg,CPIO,$@)
	$(Q)tools/vmtest/mkguest.sh $(BUILD) $@ k8s-node
