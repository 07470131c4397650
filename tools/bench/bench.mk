# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make bench: numbers, not tests (see tools/bench/bench.c).
BENCH_OUT := $(BUILD)/bench

$(BUILD)/bench/bench: tools/bench/bench.c tools/bench/hotplug.c tools/bench/hotplug.h tools/bench/bench.h tests/crafted.h tests/scratch.c tests/scratch.h tests/reader.c tests/reader.h $(LIB_OBJS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(BUILD)/bench
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ tools/bench/bench.c tools/bench/hotplug.c tests/scratch.c tests/reader.c $(LIB_OBJS) $(LDLIBS) -lm

.PHONY: bench
bench: deps
	$(Q)tools/deps.sh bench
	$(Q)$(MAKE) --no-print-directory all $(BUILD)/bench/bench $(BUILD)/tests/kernel
	$(Q)$(BUILD)/bench/bench --out $(BENCH_OUT) --devcg $(BUILD)/devcg --tests $(BUILD)/tests/kernel $(BENCH_ARGS)
	$(Q)tools/bench/report.py $(BENCH_OUT)/results.json $(BENCH_OUT) $(BUILD)/vmtest/bench.json
