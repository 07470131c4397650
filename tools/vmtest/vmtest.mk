# `make vmtest`: the privileged kernel suite (build/tests/kernel) in a guest
# running Debian's own cloud kernel (Linux 6.1) under qemu with TCG, on pure
# cgroup v2. Everything goes to $(BUILD)/vmtest; the guest's serial console
# is kept in $(BUILD)/vmtest/guest.log. Included by the top Makefile.
#
#   make vmtest                          the whole suite
#   make vmtest VMTEST_TESTS='trace_* *swap*'   only tests matching the globs
#   make vmtest VMTEST_CGROUP=hybrid     v1 devices and freezer mounted too
#                                        (default v2: pure cgroup v2)
#   VMTEST_TIMEOUT=400 make vmtest       qemu's time limit (default 270 s)
#   VMTEST_APPEND='DEVCG_TEST_VERBOSE=1' make vmtest
#                                        kernel parameters; NAME=VALUE ones
#                                        reach the suite's environment
#   VMTEST_KERNEL_PKG=linux-image-6.1.0-57-cloud-amd64 make vmtest
#                                        another kernel package (clean first)

VMTEST_DIR   := $(BUILD)/vmtest
VMTEST_TESTS ?=
VMTEST_CGROUP ?= v2
VMTEST_BINS  := $(BUILD)/devcg $(BUILD)/devcg-reader $(BUILD)/tests/kernel

.PHONY: vmtest vmtest-deps vmtest-kernel vmtest-initramfs vmtest-run vmtest-always

# qemu-system-x86 (and the build's own deps) on the host, if missing
vmtest-deps:
	$(Q)tools/deps.sh vmtest

vmtest: vmtest-deps
	$(Q)$(MAKE) --no-print-directory $(VMTEST_BINS) vmtest-kernel vmtest-initramfs
	$(Q)set -f; VMTEST_CGROUP=$(VMTEST_CGROUP) tools/vmtest/run.sh $(VMTEST_DIR) $(VMTEST_TESTS)

# boot what is there, without building
vmtest-run:
	$(Q)set -f; VMTEST_CGROUP=$(VMTEST_CGROUP) tools/vmtest/run.sh $(VMTEST_DIR) $(VMTEST_TESTS)

vmtest-always:
vmtest-kernel: $(VMTEST_DIR)/vmlinuz
vmtest-initramfs: $(VMTEST_DIR)/initramfs.gz

$(VMTEST_DIR):
	$(Q)mkdir -p $@

# downloaded and unpacked once (apt-get download, dpkg -x); not installed
$(VMTEST_DIR)/vmlinuz: tools/vmtest/fetch-kernel.sh | $(VMTEST_DIR)
	$(call msg,FETCH,$@)
	$(Q)tools/vmtest/fetch-kernel.sh $(VMTEST_DIR)

# made anew each time (a few seconds): what it takes from the host (the
# runtimes, the libraries) may have changed without any file here changing
$(VMTEST_DIR)/initramfs.gz: $(VMTEST_BINS) $(VMTEST_DIR)/vmlinuz tools/vmtest/init tools/vmtest/ldd tools/vmtest/mkinitramfs.sh vmtest-always | $(VMTEST_DIR)
	$(call msg,CPIO,$@)
	$(Q)tools/vmtest/mkinitramfs.sh $(BUILD) $@
