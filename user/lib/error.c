// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Error messages that travel up with their errno, gaining context. */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int devcg_err(struct devcg_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
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
	return code;
}

const char *devcg_version(void)
{
	return DEVCG_VERSION;
}
