// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Error messages that travel up with their errno, gaining context; the
 * escaping of untrusted text in them; the capabilities a refused bpf(2)
 * call lacked; the size check of options structs.
 */
#include "base/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

/* Length of the valid UTF-8 sequence at S (N bytes left), or 0. Overlong
 * forms, surrogates and code points past U+10FFFF are not valid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

/* Valid UTF-8 that terminals still act on: C1 controls (U+0080-U+009F,
 * U+009B is CSI), line separators and bidi overrides (U+2028-U+202E,
 * U+2066-U+2069), which can make text read as something else. */
static bool utf8_control(const unsigned char *s, size_t len)
{
	if (len == 2)
		return s[0] == 0xc2 && s[1] < 0xa0;
	if (len == 3 && s[0] == 0xe2 && s[1] == 0x80)
		return s[2] >= 0xa8 && s[2] <= 0xae;
	if (len == 3 && s[0] == 0xe2 && s[1] == 0x81)
		return s[2] >= 0xa6 && s[2] <= 0xa9;
	return false;
}

size_t devcg_escape(char *buf, size_t len, const char *text, size_t n, unsigned int flags)
{
	const unsigned char *s = (const unsigned char *)text;
	bool message = flags & DEVCG_ESCAPE_MESSAGE;
	size_t i = 0, o = 0;

	if (n == (size_t)-1)
		n = strlen(text);
	while (i < n) {
		size_t k = s[i] < 0x80 ? 1 : utf8_len(s + i, n - i), need;
		char piece[16];

		if (k > 1 && !utf8_control(s + i, k)) {
			memcpy(piece, s + i, k);
			need = k;
		} else if (!k || k > 1 || s[i] < 0x20 || s[i] == 0x7f) {
			/* an invalid byte, or each byte of a control character */
			k = k ? k : 1;
			need = 0;
			if (message && (s[i] == '\n' || s[i] == '\t'))
				piece[need++] = (char)s[i];
			else
				for (size_t b = 0; b < k; b++)
					need += (size_t)snprintf(piece + need, sizeof(piece) - need, "\\x%02x",
								 s[i + b]);
		} else if (s[i] == '\\' && !message) {
			memcpy(piece, "\\\\", 2);
			need = 2;
		} else {
			piece[0] = (char)s[i];
			need = 1;
		}
		/* whole pieces only: never half an escape or a sequence */
		if (len && o + need < len)
			memcpy(buf + o, piece, need);
		else if (len && o < len)
			len = o + 1;
		o += need;
		i += k;
	}
	if (len)
		buf[o < len ? o : len - 1] = '\0';
	return o;
}

const char *devcg_quote(char *buf, size_t len, const char *s, size_t n)
{
	devcg_escape(buf, len, s, n, 0);
	return buf;
}

/* Whatever went into a message (rule text, JSON strings, paths, cgroup
 * names of others), it leaves with no control bytes but its newlines. */
static void sanitize(struct devcg_error *err)
{
	char clean[sizeof(err->msg)];

	devcg_escape(clean, sizeof(clean), err->msg, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
	memcpy(err->msg, clean, sizeof(clean));
}

int devcg_err(struct devcg_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	sanitize(err);
	return code;
}

int devcg_err_wrap(struct devcg_error *err, int code, const char *fmt, ...)
{
	char prefix[sizeof(err->msg)], inner[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	snprintf(inner, sizeof(inner), "%s", err->msg);
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, inner[0] ? inner : strerror(-code));
	err->code = code;
	sanitize(err);
	return code;
}

const char *devcg_version(void)
{
	return DEVCG_VERSION;
}

static const struct {
	uint64_t bit;
	const char *name;
} cap_names[] = {
	{ DEVCG_CAP(CAP_BPF), "CAP_BPF" },
	{ DEVCG_CAP(CAP_SYS_ADMIN), "CAP_SYS_ADMIN" },
	{ DEVCG_CAP(CAP_NET_ADMIN), "CAP_NET_ADMIN" },
	{ DEVCG_CAP(CAP_PERFMON), "CAP_PERFMON" },
};

/* The effective capabilities of the calling thread (what the kernel's
 * capable() tests in kernel/bpf/syscall.c), or all of them when unknown. */
static uint64_t effective_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(SYS_capget, &hdr, data))
		return ~0ull;
	return data[0].effective | (uint64_t)data[1].effective << 32;
}

const char *devcg_caps_missing(uint64_t needs)
{
	static __thread char buf[160];
	uint64_t eff = effective_caps(), missing = needs & ~eff;
	size_t i, n = 0, off;

	/* CAP_SYS_ADMIN stands in for each of the others in the checks devcg
	 * meets (bpf_capable(), the query's CAP_NET_ADMIN), and opening a
	 * program by id needs it alone (kernel/bpf/syscall.c) */
	if ((eff & DEVCG_CAP(CAP_SYS_ADMIN)) || !missing)
		return NULL;
	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++)
		n += (missing & cap_names[i].bit) != 0;
	off = (size_t)snprintf(buf, sizeof(buf), "missing");
	for (i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++) {
		if (!(missing & cap_names[i].bit))
			continue;
		n--;
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s",
					off == strlen("missing") ? " " : n ? ", " : " and ", cap_names[i].name);
	}
	snprintf(buf + off, sizeof(buf) - off, " " DEVCG_NEEDS_ROOT);
	return buf;
}

const char *devcg_why(int code, uint64_t needs)
{
	const char *missing = code == -EPERM || code == -EACCES ? devcg_caps_missing(needs) : NULL;

	return missing ? missing : strerror(code < 0 ? -code : code);
}

int devcg_opts_check(const void *opts, size_t known, const char *name, struct devcg_error *err)
{
	const unsigned char *p = opts;
	size_t sz, i;

	if (!opts)
		return 0;
	sz = *(const size_t *)opts;
	if (sz < sizeof(size_t))
		return devcg_err(err, -EINVAL, "struct %s: its size (%zu) is smaller than its sz field; "
				 "declare it with DEVCG_OPTS()", name, sz);
	/* a newer caller's field this library does not know must be unused:
	 * silently ignoring it could drop a safety option (as libbpf does) */
	for (i = known; i < sz; i++)
		if (p[i])
			return devcg_err(err, -EINVAL, "struct %s: set past the %zu bytes this "
					 "libdevcg %s knows (size %zu): a newer option it cannot honour",
					 name, known, DEVCG_VERSION, sz);
	return 0;
}

/* A field added past the one DEVCG_*_OPTS_VALID names grows the struct. */
#define ROUND8(n) (((n) + 7) & ~(size_t)7)
_Static_assert(sizeof(struct devcg_parse_opts) == ROUND8(DEVCG_OPTS_END(devcg_parse_opts, runtime)),
	       "update DEVCG_PARSE_OPTS_VALID");
_Static_assert(sizeof(struct devcg_replace_opts) == ROUND8(DEVCG_OPTS_END(devcg_replace_opts, cache_hit)),
	       "update DEVCG_REPLACE_OPTS_VALID");
_Static_assert(sizeof(struct devcg_reset_opts) == ROUND8(DEVCG_OPTS_END(devcg_reset_opts, cgroup)),
	       "update DEVCG_RESET_OPTS_VALID");
