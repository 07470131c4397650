#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest: devcg trace as a service (devcg-trace.service from the
# devcg package, docs/trace.md "trace as a service").
#
# The unit is shipped disabled. Started (its metrics directory removed
# first: the unit makes it), it runs `devcg trace --journal --metrics
# /var/lib/prometheus/node-exporter/devcg-trace.prom` over the whole
# machine. Then, on two transient services running the errno reader over
# /dev/null and the fake GPU (c 240:0: ENXIO when allowed, EPERM when
# refused):
#   - a gap: `devcg replace --no-systemd` gives devcg-svc-gap (no device
#     policy of systemd's) a filter, `devcg reset` detaches it (no filter
#     left: a v2 window opens) and `devcg replace` attaches one again;
#   - a revocation: devcg-svc-rev (DevicePolicy=closed, DeviceAllow=
#     /dev/null rw) is granted the fake GPU with `devcg replace
#     --no-systemd`, then a daemon-reload re-attaches systemd's program,
#     which refuses it (as revoke.sh's control).
# The service is stopped (SIGTERM: the trace reports what is open and
# writes the metrics file a last time). Then `journalctl -o json -u
# devcg-trace` holds each event with its DEVCG_* fields, the metrics file
# parses strictly as the Prometheus text format, and its counters equal
# the journal's counts. The controls: the gap's unit has no revocation and
# the revocation's unit no gap, in the journal and in the file.
# Sourced by systemd-v2.sh, or alone:
#   make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/guest/trace-service.sh
if [ -z "${DEVCG_VMTEST_LIB:-}" ]; then
	. /usr/lib/devcg-vmtest/lib.sh
	svc_alone=1
	make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
fi
SVC_PROM_DIR=/var/lib/prometheus/node-exporter
SVC_PROM=$SVC_PROM_DIR/devcg-trace.prom
SVC_JOURNAL=/run/devcg-svc-journal.json
SVC_SAMPLES=/run/devcg-svc-samples

# Read FILE strictly as the Prometheus text format (every line ends with a
# newline and is a HELP, a TYPE, another comment or a sample; names and
# label names well formed; label values escape only \\, \" and \n; HELP
# and TYPE once per metric, before its samples; a metric's samples
# together; no sample twice; counters end in _total and count in integers).
# Prints each sample as "SERIES VALUE" (SERIES as in the file) into
# $SVC_SAMPLES; on a fault says "line N: why" on standard error and returns 1.
prom_check() { # FILE
	[ -s "$1" ] || { echo "empty or missing"; return 1; }
	[ -z "$(tail -c1 "$1")" ] || { echo "no newline at the end"; return 1; }
	awk '
	function bad(why) { print "line " NR ": " why > "/dev/stderr"; exit 1 }
	BEGIN {
		name = "[a-zA-Z_:][a-zA-Z0-9_:]*"
		lname = "[a-zA-Z_][a-zA-Z0-9_]*"
		lval = "\"([^\"\\\\]|\\\\[\\\\\"n])*\""
		label = lname "=" lval
		sample = "^" name "(\\{" label "(," label ")*\\})? [0-9]+$"
	}
	$0 == "" { bad("empty line") }
	/^# HELP / {
		if ($3 !~ ("^" name "$")) bad("bad name in HELP")
		if (help[$3]++) bad("second HELP of " $3)
		if ($3 in samples) bad("HELP of " $3 " after its samples")
		next
	}
	/^# TYPE / {
		if (NF != 4 || $3 !~ ("^" name "$") || $4 !~ /^(counter|gauge|histogram|summary|untyped)$/)
			bad("bad TYPE line")
		if ($3 in type) bad("second TYPE of " $3)
		if ($4 == "counter" && $3 !~ /_total$/) bad("counter " $3 " does not end in _total")
		if ($3 in samples) bad("TYPE of " $3 " after its samples")
		type[$3] = $4
		next
	}
	/^#/ { next }
	{
		if ($0 !~ sample) bad("not a sample line: " $0)
		m = $0
		sub(/[{ ].*/, "", m)
		if (!(m in type)) bad("sample of " m " before its TYPE")
		if (m in done) bad("samples of " m " are not together")
		if (last != "" && last != m) done[last] = 1
		last = m
		samples[m] = 1
		series = $0
		sub(/ [0-9]+$/, "", series)
		if (series in seen) bad("sample " series " twice")
		seen[series] = 1
		print
	}' "$1" > "$SVC_SAMPLES"
}

# the value of the sample SERIES (exactly as the file writes it), or 0
prom_value() { # SERIES
	awk -v s="$1" 'substr($0, 1, length(s) + 1) == s " " { v = $NF } END { print v + 0 }' "$SVC_SAMPLES"
}

# the sum of the samples of METRIC
prom_sum() { # METRIC
	awk -v m="$1" 'index($0, m "{") == 1 || index($0, m " ") == 1 { s += $NF } END { print s + 0 }' "$SVC_SAMPLES"
}

# field FIELD of one journal entry (a line of journalctl -o json)
jfield() { # LINE FIELD
	sed -n "s/.*\"$2\":\"\\([^\"]*\\)\".*/\\1/p" <<<"$1"
}

# the journal's events of kind EVENT (gap, revoke), on cgroup CG if given
jcount() { # EVENT [CG]
	grep -F "\"DEVCG_EVENT\":\"$1\"" "$SVC_JOURNAL" | { if [ -n "${2:-}" ]; then
		grep -F "\"DEVCG_CGROUP\":\"$2\""; else cat; fi; } | grep -c .
}

trace_service_test() {
	local gap=devcg-svc-gap rev=devcg-svc-rev cg_gap cg_rev rel_gap rel_rev out i s0 s1 line cursor since
	local policy=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm' '/dev/urandom rwm'
		'/dev/null rw' "$FAKEGPU rw")
	local t0=$SECONDS

	out=$(systemctl is-enabled devcg-trace.service 2>&1)
	if [ "$out" = disabled ]; then
		pass trace_service_is_shipped_disabled
	else
		fail trace_service_is_shipped_disabled "systemctl is-enabled: $out"
	fi
	rm -rf /var/lib/prometheus
	# the journal from here on (the unit never ran before in this boot:
	# without a cursor, all of it)
	cursor=$(journalctl -n 1 --show-cursor -q -o cat 2>/dev/null | sed -n 's/^-- cursor: //p')
	since=()
	[ -z "$cursor" ] || since=(--after-cursor="$cursor")
	if ! systemctl start devcg-trace.service; then
		fail trace_service_started "systemctl start: $(systemctl status devcg-trace 2>&1 | tr '\n' ' ')"
		return
	fi
	# tracing once it said which hooks it chose (on standard error: the journal)
	for i in $(seq 1200); do
		journalctl -u devcg-trace "${since[@]}" -q -o cat 2>/dev/null | grep -q 'hooks chosen' && break
		systemctl is-active -q devcg-trace.service || break
		sleep 0.1
	done
	if ! systemctl is-active -q devcg-trace.service ||
		! journalctl -u devcg-trace "${since[@]}" -q -o cat | grep -q 'hooks chosen'; then
		fail trace_service_started "not tracing: $(journalctl -u devcg-trace "${since[@]}" -q -o cat |
			tail -n 20 | tr '\n' ' ')"
		systemctl stop devcg-trace.service
		return
	fi
	if [ -f "$SVC_PROM" ]; then
		pass trace_service_started_and_made_its_metrics_directory
	else
		fail trace_service_started_and_made_its_metrics_directory "no $SVC_PROM"
	fi
	info "devcg-trace.service: $(journalctl -u devcg-trace "${since[@]}" -q -o cat | tr '\n' ' ')"

	# ---- a gap: devcg's own filter detached, then attached again --------
	start_workload $gap -- /dev/null "$FAKEGPU" || fail trace_service_gap_made "the service $gap did not start"
	cg_gap=$(cgroup_of $gap)
	rel_gap=$(systemctl show -P ControlGroup $gap)
	if out=$(devcg replace --no-systemd "$cg_gap" "${policy[@]}" 2>&1) && out=$(devcg reset "$cg_gap" 2>&1) &&
		wait_gens $gap 3 && out=$(devcg replace --no-systemd "$cg_gap" "${policy[@]}" 2>&1); then
		pass trace_service_gap_made
	else
		fail trace_service_gap_made "devcg on $cg_gap: $out"
	fi

	# ---- a revocation: systemd's program re-attached by a daemon-reload --
	WORKLOAD_PAUSE=10000 start_workload $rev DevicePolicy=closed 'DeviceAllow=/dev/null rw' -- /dev/null "$FAKEGPU" ||
		fail trace_service_revoke_made "the service $rev did not start"
	cg_rev=$(cgroup_of $rev)
	rel_rev=$(systemctl show -P ControlGroup $rev)
	if out=$(devcg replace --no-systemd "$cg_rev" "${policy[@]}" 2>&1); then
		wait_gens $rev 3
		systemctl daemon-reload
		settle $rev
		wait_gens $rev 3
		s0=$(snapshot $rev)
		wait_gens $rev 5
		s1=$(snapshot $rev)
		if [ "$(delta "$s0" "$s1" "$FAKEGPU" EPERM)" != 0 ]; then
			pass trace_service_revoke_made
		else
			fail trace_service_revoke_made "the reload refused nothing: $(window "$s0" "$s1" "$FAKEGPU")"
		fi
	else
		fail trace_service_revoke_made "devcg replace --no-systemd $cg_rev: $out"
	fi

	# ---- stopped as systemd stops it: the last events and the last write -
	systemctl stop devcg-trace.service
	out=$(systemctl show -P Result devcg-trace.service)/$(systemctl show -P ExecMainStatus devcg-trace.service)
	if [ "$out" = success/0 ]; then
		pass trace_service_stops_cleanly
	else
		fail trace_service_stops_cleanly "Result/ExecMainStatus $out"
	fi
	stop_workload $gap
	stop_workload $rev
	journalctl --sync 2>/dev/null
	journalctl -o json -u devcg-trace "${since[@]}" -q | grep -F '"DEVCG_EVENT"' > "$SVC_JOURNAL"
	sed 's/^/# journal: /' "$SVC_JOURNAL" | cut -c1-1500
	sed 's/^/# metrics: /' "$SVC_PROM"
	# each entry is the unit's (journald found the sender's cgroup: none
	# came from a process already gone) and says who sent it
	if [ "$(grep -c . "$SVC_JOURNAL")" -ge 2 ] &&
		! grep -vF '"_SYSTEMD_UNIT":"devcg-trace.service"' "$SVC_JOURNAL" | grep -q . &&
		! grep -vF '"SYSLOG_IDENTIFIER":"devcg-trace"' "$SVC_JOURNAL" | grep -q .; then
		pass trace_service_entries_are_the_units
	else
		fail trace_service_entries_are_the_units "$(grep -c . "$SVC_JOURNAL") entries; one without _SYSTEMD_UNIT=devcg-trace.service or SYSLOG_IDENTIFIER=devcg-trace"
	fi

	# ---- the journal's fields -------------------------------------------
	line=$(grep -F '"DEVCG_EVENT":"gap"' "$SVC_JOURNAL" | grep -F "\"DEVCG_CGROUP\":\"$rel_gap\"" | head -n1)
	if [ -n "$line" ] && [ "$(jfield "$line" DEVCG_UNIT)" = $gap.service ] &&
		[ "$(jfield "$line" DEVCG_GAP_KIND)" = v2_no_filter ] && [ "$(jfield "$line" DEVCG_WRITER_COMM)" = devcg ] &&
		[ "$(jfield "$line" SYSLOG_IDENTIFIER)" = devcg-trace ] && [ -n "$(jfield "$line" DEVCG_WRITER_PID)" ] &&
		[ "$(jfield "$line" DEVCG_WINDOW_NS)" -gt 0 ] 2>/dev/null && [ -n "$(jfield "$line" MESSAGE)" ] &&
		grep -qF '"DEVCG_DEVICES":"' <<<"$line" && grep -qF '"DEVCG_DENIED":"' <<<"$line"; then
		pass trace_service_journal_has_the_gap_with_its_fields
	else
		fail trace_service_journal_has_the_gap_with_its_fields "no gap entry of $rel_gap with its fields: $line"
	fi
	line=$(grep -F '"DEVCG_EVENT":"revoke"' "$SVC_JOURNAL" | grep -F "\"DEVCG_CGROUP\":\"$rel_rev\"" | head -n1)
	if [ -n "$line" ] && [ "$(jfield "$line" DEVCG_UNIT)" = $rev.service ] &&
		[ "$(jfield "$line" DEVCG_WRITER_COMM)" = systemd ] && [ "$(jfield "$line" PRIORITY)" = 4 ] &&
		grep -qF 'c 240:0' <<<"$(jfield "$line" DEVCG_DEVICES)" && [ "$(jfield "$line" DEVCG_DENIED)" -gt 0 ] 2>/dev/null &&
		[ -n "$(jfield "$line" DEVCG_WINDOW_NS)" ] && [ -n "$(jfield "$line" DEVCG_PROGS_AFTER)" ]; then
		pass trace_service_journal_has_the_revocation_with_its_fields
	else
		fail trace_service_journal_has_the_revocation_with_its_fields "no revoke entry of $rel_rev refusing c 240:0: $line"
	fi
	# the controls: each unit has only the event made on it
	if [ "$(jcount revoke "$rel_gap")" = 0 ] && [ "$(jcount gap "$rel_rev")" = 0 ]; then
		pass trace_service_journal_control_no_event_where_none_was_made
	else
		fail trace_service_journal_control_no_event_where_none_was_made \
			"revocations of $rel_gap: $(jcount revoke "$rel_gap"), gaps of $rel_rev: $(jcount gap "$rel_rev")"
	fi

	# ---- the metrics file ------------------------------------------------
	if out=$(prom_check "$SVC_PROM" 2>&1); then
		pass trace_service_metrics_file_parses
	else
		fail trace_service_metrics_file_parses "$out"
		return
	fi
	if [ "$(prom_sum devcg_trace_gaps_total)" = "$(jcount gap)" ] &&
		[ "$(prom_sum devcg_trace_revocations_total)" = "$(jcount revoke)" ] &&
		[ "$(prom_value "devcg_trace_gaps_total{cgroup=\"$rel_gap\",kind=\"v2_no_filter\"}")" = "$(jcount gap "$rel_gap")" ] &&
		[ "$(prom_value "devcg_trace_revocations_total{cgroup=\"$rel_rev\"}")" = "$(jcount revoke "$rel_rev")" ] &&
		[ "$(jcount gap "$rel_gap")" -ge 1 ] && [ "$(jcount revoke "$rel_rev")" -ge 1 ]; then
		pass trace_service_metrics_equal_the_journal
	else
		fail trace_service_metrics_equal_the_journal "gaps $(prom_sum devcg_trace_gaps_total) vs $(jcount gap) in the journal, revocations $(prom_sum devcg_trace_revocations_total) vs $(jcount revoke)"
	fi
	if [ "$(prom_value "devcg_trace_revocations_total{cgroup=\"$rel_gap\"}")" = 0 ] &&
		[ "$(awk -v c="cgroup=\"$rel_rev\"" 'index($0, "devcg_trace_gaps_total{" c ",") == 1' "$SVC_SAMPLES")" = "" ]; then
		pass trace_service_metrics_control_no_count_where_nothing_was_made
	else
		fail trace_service_metrics_control_no_count_where_nothing_was_made "a revocation of $rel_gap or a gap of $rel_rev counted"
	fi
	# the refused opens of the fake GPU in the revoked unit are counted
	i=$(awk -v c="devcg_trace_refused_opens_total{cgroup=\"$rel_rev\"," 'index($0, c) == 1 && /device="c 240:0"/ { s += $NF } END { print s + 0 }' "$SVC_SAMPLES")
	if [ "$i" -gt 0 ]; then
		pass trace_service_metrics_count_the_refused_opens_of_the_revoked_unit
	else
		fail trace_service_metrics_count_the_refused_opens_of_the_revoked_unit "none counted for $rel_rev"
	fi
	info "trace service: $((SECONDS - t0))s"
}

trace_service_test
rm -f "$SVC_JOURNAL" "$SVC_SAMPLES"
# alone, its status is the summary's
[ -z "${svc_alone:-}" ] || { summary; exit; }
true
