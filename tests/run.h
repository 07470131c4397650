/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Running a program from a test: the devcg binary under test, and a
 * command's standard output captured. */
#ifndef DEVCG_TESTS_RUN_H
#define DEVCG_TESTS_RUN_H

#include <stddef.h>

/* The devcg binary under test: $DEVCG, else build/devcg. */
const char *test_devcg_bin(void);
/* Run ARGV (ARGV[0] a path), its standard output (up to SIZE - 1 bytes,
 * NUL-terminated) in OUT; its exit status, 128 + the signal that ended it,
 * or -1 when it could not be run. */
int test_run_capture(char *const argv[], char *out, size_t size);

#endif
