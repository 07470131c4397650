#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The functions include/devcg.h exports (its DEVCG_API declarations), sorted:
# in each declaration, the name just before the parenthesis.
grep -v "^#define DEVCG_API" "${1:-include/devcg.h}" | tr "\n" " " | grep -o 'DEVCG_API[^;(]*(' |
	sed 's/.*\(devcg_[a-z0-9_]*\) *($/\1/' | sort -u
