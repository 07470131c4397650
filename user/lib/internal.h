/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* libdevcg's internals, every room below the integrations, for the code
 * outside user/lib (the trace, the tests, the bench). A file of the library
 * includes its own room's header instead (user/lib/README.md). */
#ifndef DEVCG_INTERNAL_H
#define DEVCG_INTERNAL_H

#include "live/live.h"

#endif
