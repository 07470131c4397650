// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devcg trace from syscall tracepoints, for kernels without kprobes or
 * fentry: writes to cgroup v1 device files, bpf(2) on device programs,
 * opens that fail with EPERM. On the hot paths (every write, every open)
 * a few loads and a compare decide that there is nothing to do.
 */
#include "vmlinux.h"
#include "trace_common.h"
#include "trace_syscalls.h"

SEC("tracepoint/syscalls/sys_enter_write")
int devcg_tp_write_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 target = 0;
	__u32 file = cgroup_file_kind(fd_file((int)ctx->args[0]), &target);

	if (file)
		write_enter(file, target, (const void *)ctx->args[1], ctx->args[2], true);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_write")
int devcg_tp_write_exit(struct trace_event_raw_sys_exit *ctx)
{
	write_exit(ctx->ret, DEVCG_SRC_TRACEPOINT);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_bpf")
int devcg_tp_bpf_enter(struct trace_event_raw_sys_enter *ctx)
{
	bpf_enter((__u32)ctx->args[0], (const void *)ctx->args[1]);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_bpf")
int devcg_tp_bpf_exit(struct trace_event_raw_sys_exit *ctx)
{
	bpf_exit(ctx->ret, DEVCG_SRC_TRACEPOINT);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat")
int devcg_tp_openat_exit(struct trace_event_raw_sys_exit *ctx)
{
	if (ctx->ret == -EPERM)
		open_denied(ctx->ret, OPENAT, DEVCG_SRC_TRACEPOINT);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int devcg_tp_openat2_exit(struct trace_event_raw_sys_exit *ctx)
{
	if (ctx->ret == -EPERM)
		open_denied(ctx->ret, OPENAT2, DEVCG_SRC_TRACEPOINT);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_open")
int devcg_tp_open_exit(struct trace_event_raw_sys_exit *ctx)
{
	if (ctx->ret == -EPERM)
		open_denied(ctx->ret, OPEN, DEVCG_SRC_TRACEPOINT);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
