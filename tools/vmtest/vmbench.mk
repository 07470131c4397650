# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# `make vmbench`: the trace's cost on an open loop (with and without
# `devcg trace`, alternated rounds) in the vmtest guest (Debian's 6.1 under
# qemu TCG, where fentry loads): boots the guest with only that test
# (tests/kernel/test_bench_trace.c) and keeps its line as
# $(BUILD)/vmtest/bench.json, which make bench's report reads.
# Included by the top Makefile. VMBENCH_ROUNDS (default 7).

VMBENCH_ROUNDS ?= 7

.PHONY: vmbench
vmbench: vmtest-deps
	$(Q)$(MAKE) --no-print-directory $(VMTEST_BINS) vmtest-kernel vmtest-initramfs
	$(Q)set -f; VMTEST_TIMEOUT=$${VMTEST_TIMEOUT:-600} \
		VMTEST_APPEND="DEVCG_BENCH_TRACE=1 DEVCG_BENCH_ROUNDS=$(VMBENCH_ROUNDS) $(VMTEST_APPEND)" \
		tools/vmtest/run.sh $(VMTEST_DIR) 'make_bench_trace_*'
	$(Q)sed -n 's/^VMTEST-TEST *bench-trace: //p' $(VMTEST_DIR)/guest.log | tail -n1 > $(VMTEST_DIR)/bench.json.tmp
	$(Q)test -s $(VMTEST_DIR)/bench.json.tmp || { echo "vmbench: the guest printed no result" >&2; exit 1; }
	$(Q)mv $(VMTEST_DIR)/bench.json.tmp $(VMTEST_DIR)/bench.json
	$(Q)echo "vmbench: $$(cat $(VMTEST_DIR)/bench.json)"
