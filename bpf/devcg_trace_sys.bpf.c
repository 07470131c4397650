// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devcg trace at bpf(2) and at the open syscalls from fentry/fexit on the
 * syscalls themselves, where fentry loads. Any syscall tracepoint, once
 * enabled, sends every syscall of every task through the tracing slow
 * path (SYSCALL_WORK_SYSCALL_TRACEPOINT, kernel/entry/common.c); these
 * hooks cost only the syscalls they are on. The same work as the
 * tracepoints (trace_syscalls.h), with the arguments from the syscall's
 * saved registers.
 */
#include "vmlinux.h"
#include "trace_common.h"
#include "trace_syscalls.h"

#if defined(__TARGET_ARCH_x86)
#define SYS(name) "__x64_sys_" #name
#elif defined(__TARGET_ARCH_arm64)
#define SYS(name) "__arm64_sys_" #name
#else
#error "devcg_trace_sys: the syscall functions' names of this architecture"
#endif

SEC("fentry/" SYS(bpf))
int BPF_PROG(devcg_fe_sys_bpf, struct pt_regs *regs)
{
	bpf_enter((__u32)PT_REGS_PARM1_CORE(regs), (const void *)PT_REGS_PARM2_CORE(regs));
	return 0;
}

SEC("fexit/" SYS(bpf))
int BPF_PROG(devcg_fx_sys_bpf, struct pt_regs *regs, long ret)
{
	bpf_exit(ret, DEVCG_SRC_FENTRY);
	return 0;
}

SEC("fexit/" SYS(openat))
int BPF_PROG(devcg_fx_sys_openat, struct pt_regs *regs, long ret)
{
	if (ret == -EPERM)
		open_denied(ret, OPENAT, DEVCG_SRC_FENTRY);
	return 0;
}

SEC("fexit/" SYS(openat2))
int BPF_PROG(devcg_fx_sys_openat2, struct pt_regs *regs, long ret)
{
	if (ret == -EPERM)
		open_denied(ret, OPENAT2, DEVCG_SRC_FENTRY);
	return 0;
}

#if defined(__TARGET_ARCH_x86) /* arm64 has no open(2) */
SEC("fexit/" SYS(open))
int BPF_PROG(devcg_fx_sys_open, struct pt_regs *regs, long ret)
{
	if (ret == -EPERM)
		open_denied(ret, OPEN, DEVCG_SRC_FENTRY);
	return 0;
}
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";
