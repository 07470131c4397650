// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Loading a program into a reader (progread.c runs it): the kernel's struct
 * offsets its inlined lookups use, read from the kernel's BTF; its maps,
 * live ones fetched through their fds; its helpers named, in translated
 * instructions, from /proc/kallsyms; whose program it is (its owner). The
 * reader's life: devcg_reader_from_insns(), devcg_reader_open(),
 * devcg_reader_free(), devcg_reader_owner().
 */
#include "live/progread_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

static const struct {
	const char *name; /* in /proc/kallsyms */
	int func;         /* BPF_FUNC_*, in raw instructions */
	enum helper kind;
} helpers[] = {
	{ "bpf_map_lookup_elem", BPF_FUNC_map_lookup_elem, H_LOOKUP },
	{ "array_map_lookup_elem", -1, H_LOOKUP },
	{ "htab_map_lookup_elem", -1, H_LOOKUP },
	{ "htab_lru_map_lookup_elem", -1, H_LOOKUP },
	{ "__htab_map_lookup_elem", -1, H_HTAB_ELEM },
	{ "bpf_get_current_pid_tgid", BPF_FUNC_get_current_pid_tgid, H_PID_TGID },
	{ "bpf_get_current_uid_gid", BPF_FUNC_get_current_uid_gid, H_UID_GID },
	{ "bpf_ktime_get_ns", BPF_FUNC_ktime_get_ns, H_KTIME },
	{ "bpf_ktime_get_boot_ns", BPF_FUNC_ktime_get_boot_ns, H_KTIME },
	{ "bpf_get_current_cgroup_id", BPF_FUNC_get_current_cgroup_id, H_CGROUP_ID },
	{ "bpf_get_current_comm", BPF_FUNC_get_current_comm, H_COMM },
	{ "bpf_ringbuf_reserve", BPF_FUNC_ringbuf_reserve, H_RB_RESERVE },
	{ "bpf_ringbuf_submit", BPF_FUNC_ringbuf_submit, H_RB_SUBMIT },
	{ "bpf_ringbuf_discard", BPF_FUNC_ringbuf_discard, H_RB_SUBMIT },
	{ "bpf_ringbuf_output", BPF_FUNC_ringbuf_output, H_RB_OUTPUT },
};

static int btf_member_at(const struct btf *btf, __u32 id, const char *name, size_t base, size_t *at)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *mb;
	int k, n;

	while (t && (btf_is_typedef(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_composite(t))
		return -ENOENT;
	mb = btf_members(t);
	n = btf_vlen(t);
	for (k = 0; k < n; k++, mb++) {
		const char *mn = btf__name_by_offset(btf, mb->name_off);
		size_t off = base + btf_member_bit_offset(t, (__u32)k) / 8;

		if (mn && !strcmp(mn, name)) {
			*at = off;
			return 0;
		}
		if ((!mn || !mn[0]) && !btf_member_at(btf, mb->type, name, off, at))
			return 0;
	}
	return -ENOENT;
}

static int kernel_offset(const char *type, const char *member, size_t *at)
{
	static struct btf *btf;
	__s32 id;

	if (!btf) {
		btf = btf__load_vmlinux_btf();
		if (!btf || libbpf_get_error(btf)) {
			btf = NULL;
			return -ENOENT;
		}
	}
	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id < 0)
		return -ENOENT;
	return btf_member_at(btf, (__u32)id, member, 0, at);
}

static int add_map(struct devcg_reader *r, const struct devcg_reader_map *m, size_t array_hdr,
		   struct devcg_error *err)
{
	struct rmap *x = &r->maps[r->nmaps];

	memset(x, 0, sizeof(*x));
	x->m = *m;
	x->fd = -1;
	if (m->type == BPF_MAP_TYPE_ARRAY) {
		x->hdr = array_hdr;
		x->elem = (m->value_size + 7) & ~7u;
		if (!x->elem || (uint64_t)m->max_entries * x->elem > MAX_ARRAY_BYTES)
			return devcg_err(err, -ENOTSUP, "array map %u is larger than the reader reads", m->id);
		x->len = x->hdr + (size_t)m->max_entries * x->elem;
		x->fetched = calloc(m->max_entries ? m->max_entries : 1, 1);
	} else {
		x->len = 8;
	}
	x->mem = calloc(1, x->len);
	if (!x->mem || (m->type == BPF_MAP_TYPE_ARRAY && !x->fetched))
		return devcg_err(err, -ENOMEM, "out of memory");
	r->nmaps++;
	return 0;
}

/* Name the helpers of translated instructions from /proc/kallsyms. */
static int name_helpers(struct devcg_reader *r, struct devcg_error *err)
{
	unsigned long long base = 0, addr;
	char line[512], name[256];
	FILE *f;
	size_t pc, k;
	bool any = false;

	for (pc = 0; pc < r->cnt; pc++)
		any |= r->insn[pc].code == (BPF_JMP | BPF_CALL) && !r->insn[pc].src_reg;
	if (!any)
		return 0;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return devcg_err(err, -ENOTSUP, "cannot name the program's helpers: /proc/kallsyms: %s",
				 strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %*s %255s", &addr, name) == 2 && !strcmp(name, "__bpf_call_base")) {
			base = addr;
			break;
		}
	if (!base) {
		fclose(f);
		return devcg_err(err, -ENOTSUP, "cannot name the program's helpers: /proc/kallsyms hides "
				 "their addresses");
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*s %255s", &addr, name) != 2 || strchr(line, '['))
			continue;
		for (pc = 0; pc < r->cnt; pc++) {
			const struct bpf_insn *i = &r->insn[pc];

			if (i->code != (BPF_JMP | BPF_CALL) || i->src_reg ||
			    base + (unsigned long long)(long long)i->imm != addr || r->helper_name[pc][0])
				continue;
			snprintf(r->helper_name[pc], sizeof(r->helper_name[pc]), "%s", name);
			for (k = 0; k < sizeof(helpers) / sizeof(helpers[0]); k++)
				if (!strcmp(helpers[k].name, name))
					r->helper[pc] = (uint8_t)helpers[k].kind;
		}
	}
	fclose(f);
	return 0;
}

static void set_owner(struct devcg_reader *r)
{
	const struct bpf_insn *i = r->insn;

	if (r->devcg_policy)
		r->owner = "devcg";
	else if (strstr(r->name, "sd_devices"))
		r->owner = "systemd";
	else if (strstr(r->name, "crun"))
		r->owner = "crun";
	else if (strstr(r->name, "runc"))
		r->owner = "runc";
	/* runc's prologue (libcontainer/cgroups/devices/devicefilter.go):
	 * type, access, major, minor into r2, r3, r4, r5; crun's program
	 * (src/libcrun/ebpf.c) starts the same, but is loaded as GPL where
	 * runc's is Apache-licensed */
	else if (r->cnt > 6 && i[0].code == (BPF_LDX | BPF_MEM | BPF_W) && i[0].dst_reg == 2 &&
		 i[1].code == (BPF_ALU | BPF_AND | BPF_K) && i[1].imm == 0xffff &&
		 i[2].code == (BPF_LDX | BPF_MEM | BPF_W) && i[2].dst_reg == 3 &&
		 i[3].code == (BPF_ALU | BPF_RSH | BPF_K) && i[3].imm == 16)
		r->owner = r->gpl ? "crun" : "runc";
	else
		r->owner = "unknown";
}

int devcg_reader_from_insns(const struct bpf_insn *insns, size_t cnt, enum devcg_reader_form form,
			    const struct devcg_reader_map *maps, size_t nmaps,
			    const struct devcg_reader_opts *opts, struct devcg_reader **out,
			    struct devcg_error *err)
{
	struct devcg_reader *r;
	size_t array_hdr = 0, k, pc;
	int ret = 0;

	*out = NULL;
	if (opts && opts->sz < sizeof(opts->sz))
		return devcg_err(err, -EINVAL, "bad options");
	if (!cnt)
		return devcg_err(err, -ENOTSUP, "the program has no instruction");
	r = calloc(1, sizeof(*r));
	if (!r)
		return devcg_err(err, -ENOMEM, "out of memory");
	r->form = form;
	r->cnt = cnt;
	r->max_steps = DEFAULT_STEPS;
	if (DEVCG_OPT(opts, devcg_reader_opts, max_steps, 0))
		r->max_steps = opts->max_steps;
	r->flip_type = DEVCG_OPT(opts, devcg_reader_opts, flip_type, 0);
	r->flip_major = DEVCG_OPT(opts, devcg_reader_opts, flip_major, 0);
	r->flip_minor = DEVCG_OPT(opts, devcg_reader_opts, flip_minor, 0);
	r->insn = malloc(cnt * sizeof(*insns));
	r->helper = calloc(cnt, 1);
	r->helper_name = calloc(cnt, sizeof(*r->helper_name));
	r->maps = calloc(nmaps ? nmaps : 1, sizeof(*r->maps));
	if (!r->insn || !r->helper || !r->helper_name || !r->maps) {
		devcg_reader_free(r);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	memcpy(r->insn, insns, cnt * sizeof(*insns));
	if (form == DEVCG_READER_XLATED) {
		for (k = 0; k < nmaps && !ret; k++)
			if (maps[k].type == BPF_MAP_TYPE_ARRAY && kernel_offset("bpf_array", "value", &array_hdr))
				ret = devcg_err(err, -ENOTSUP, "the kernel's struct bpf_array is not known (no BTF)");
		if (kernel_offset("htab_elem", "key", &r->htab_key_at))
			r->htab_key_at = 0;
		if (!ret)
			ret = name_helpers(r, err);
	} else {
		for (pc = 0; pc < cnt; pc++) {
			if (insns[pc].code != (BPF_JMP | BPF_CALL) || insns[pc].src_reg)
				continue;
			for (k = 0; k < sizeof(helpers) / sizeof(helpers[0]); k++)
				if (helpers[k].func == insns[pc].imm)
					r->helper[pc] = (uint8_t)helpers[k].kind;
			snprintf(r->helper_name[pc], sizeof(r->helper_name[pc]), "helper %d", insns[pc].imm);
		}
	}
	for (k = 0; k < nmaps && !ret; k++)
		ret = add_map(r, &maps[k], array_hdr, err);
	for (pc = 0; pc < cnt; pc++)
		r->variable |= r->helper[pc] > H_HTAB_ELEM;
	if (ret) {
		devcg_reader_free(r);
		return ret;
	}
	set_owner(r);
	*out = r;
	return 0;
}

void devcg_reader_free(struct devcg_reader *r)
{
	size_t k;

	if (!r)
		return;
	reader_free_allocs(r);
	for (k = 0; k < r->nmaps; k++) {
		free(r->maps[k].mem);
		free(r->maps[k].fetched);
		if (r->maps[k].fd >= 0)
			close(r->maps[k].fd);
	}
	devcg_policy_free(r->devcg_policy);
	free(r->maps);
	free(r->insn);
	free(r->helper);
	free(r->helper_name);
	free(r->seen);
	free(r);
}

const char *devcg_reader_owner(const struct devcg_reader *r)
{
	return r->owner;
}

static int live_lookup(void *ctx, const void *key, void *value)
{
	return bpf_map_lookup_elem((int)(intptr_t)ctx, key, value) ? -errno : 0;
}

static int live_next_key(void *ctx, const void *key, void *next)
{
	return bpf_map_get_next_key((int)(intptr_t)ctx, key, next) ? -errno : 0;
}

int devcg_reader_open(int prog_fd, uint32_t prog_id, const struct devcg_reader_opts *opts,
		      struct devcg_reader **out, struct devcg_error *err)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), nmaps, k;
	struct devcg_reader_map *maps = NULL;
	struct bpf_insn *insns = NULL;
	__u32 *ids = NULL;
	int fd = prog_fd, ret, *fds = NULL;
	struct devcg_policy *own = NULL;
	bool audit;

	*out = NULL;
	if (fd < 0) {
		fd = bpf_prog_get_fd_by_id(prog_id);
		if (fd < 0)
			return devcg_err(err, -errno, "cannot open program %u: %s", prog_id,
					 devcg_why(-errno, DEVCG_CAPS_FILTER));
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = devcg_err(err, -errno, "cannot read program %u: %s", prog_id, strerror(errno));
		goto out;
	}
	if (info.type != BPF_PROG_TYPE_CGROUP_DEVICE) {
		ret = devcg_err(err, -EINVAL, "program %u is not a device program", info.id);
		goto out;
	}
	if (!info.xlated_prog_len) {
		ret = devcg_err(err, -EPERM, "program %u: the kernel does not show its instructions "
				"(only to root, and not when bpf_jit_harden hides them)", info.id);
		goto out;
	}
	nmaps = info.nr_map_ids;
	insns = calloc(info.xlated_prog_len / sizeof(*insns) + 1, sizeof(*insns));
	ids = calloc(nmaps + 1, sizeof(*ids));
	maps = calloc(nmaps + 1, sizeof(*maps));
	fds = malloc((nmaps + 1) * sizeof(*fds));
	if (!insns || !ids || !maps || !fds) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (k = 0; k < nmaps; k++)
		fds[k] = -1;
	{
		struct bpf_prog_info more = { 0 };
		__u32 xlen = info.xlated_prog_len;

		len = sizeof(more);
		more.xlated_prog_len = xlen;
		more.xlated_prog_insns = (__u64)(uintptr_t)insns;
		more.nr_map_ids = nmaps;
		more.map_ids = (__u64)(uintptr_t)ids;
		if (bpf_obj_get_info_by_fd(fd, &more, &len)) {
			ret = devcg_err(err, -errno, "cannot read program %u: %s", info.id, strerror(errno));
			goto out;
		}
		if (more.xlated_prog_len != xlen || more.nr_map_ids != nmaps) {
			ret = devcg_err(err, -EAGAIN, "program %u changed while read", info.id);
			goto out;
		}
	}
	for (k = 0; k < nmaps; k++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);

		fds[k] = bpf_map_get_fd_by_id(ids[k]);
		if (fds[k] < 0 || bpf_obj_get_info_by_fd(fds[k], &mi, &mlen)) {
			ret = devcg_err(err, -errno, "cannot open map %u of program %u: %s", ids[k], info.id,
					strerror(errno));
			goto out;
		}
		maps[k] = (struct devcg_reader_map){ .id = ids[k], .type = mi.type, .key_size = mi.key_size,
						      .value_size = mi.value_size, .max_entries = mi.max_entries,
						      .lookup = live_lookup, .ctx = (void *)(intptr_t)fds[k] };
		if (mi.type == BPF_MAP_TYPE_HASH || mi.type == BPF_MAP_TYPE_LRU_HASH)
			maps[k].next_key = live_next_key;
	}
	ret = devcg_filter_read(fd, &own, &audit, NULL);
	if (ret != 1) {
		devcg_policy_free(own);
		own = NULL;
	}
	ret = devcg_reader_from_insns(insns, info.xlated_prog_len / sizeof(*insns), DEVCG_READER_XLATED, maps,
				      nmaps, opts, out, err);
	if (!ret) {
		snprintf((*out)->name, sizeof((*out)->name), "%s", info.name);
		(*out)->gpl = info.gpl_compatible;
		(*out)->devcg_policy = own;
		own = NULL;
		for (k = 0; k < nmaps; k++) {
			(*out)->maps[k].fd = fds[k];
			fds[k] = -1;
		}
		set_owner(*out);
	}
out:
	for (k = 0; fds && k < nmaps; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	devcg_policy_free(own);
	free(fds);
	free(maps);
	free(ids);
	free(insns);
	if (fd != prog_fd)
		close(fd);
	return ret;
}
