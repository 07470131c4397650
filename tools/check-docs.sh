#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Every relative link and every repository path the documentation names
# resolves: in README.md, docs/*.md, tools/vmtest/README.md and the man page,
#  - a Markdown link or image [text](target): the file or directory, relative
#    to the page, and its #anchor a heading of the target page (as GitHub
#    makes anchors: lower case, punctuation dropped, spaces as hyphens);
#  - a backquoted path whose first component is a top-level directory of the
#    repository (`user/cli/devcg.8`, `tools/bench/`, the first word of a
#    command such as `tools/deps.sh vmtest`), from the repository's root;
#    in a page below the root, one whose first component is a directory
#    beside the page (`guest/lib.sh` in tools/vmtest/README.md), from there;
#    {a,b} alternatives and * globs are expanded, each must match;
#  - in the man page, such a path anywhere in the text.
# Fenced code blocks are commands and output, not references: not checked.
# Each missing one is a line "FILE:LINE: what: missing" (a path the
# layout moved shows up as exactly that path); each page is one test, and the
# last line is "N passed, N failed, N skipped", as tools/run-tests.sh reads.
# Usage: tools/check-docs.sh [FILE]...   (from the repository's root)
set -u
cd "$(dirname "$0")/.." || exit 1

# The top-level directories a repository path may start with: those of the
# tree, and the ones the documentation names whether or not they exist now.
tops=" include bpf user tools tests docs .ci "
for d in */; do
	d=${d%/}
	[ "$d" = build ] || case "$tops" in *" $d "*) ;; *) tops="$tops$d " ;; esac
done

# refs FILE: one "LINE<TAB>KIND<TAB>TARGET" per reference (KIND link, path
# from the root, or lpath from the page's directory)
refs() {
	local d ltops=" "
	if [ "$(dirname "$1")" != . ]; then
		for d in "$(dirname "$1")"/*/; do
			[ -d "$d" ] && d=${d%/} && ltops="$ltops${d##*/} "
		done
	fi
	case "$1" in
	*.md)
		awk -v tops="$tops" -v ltops="$ltops" '
		BEGIN {
			n = split(tops, t, " "); for (i = 1; i <= n; i++) top[t[i]] = 1
			n = split(ltops, t, " "); for (i = 1; i <= n; i++) ltop[t[i]] = 1
		}
		function path(tok,   first) {
			sub(/^[ \t]+/, "", tok); sub(/[ \t].*/, "", tok)
			sub(/:[0-9]+$/, "", tok); sub(/[.,;]$/, "", tok)
			if (tok !~ /^[A-Za-z0-9_.]+\/[A-Za-z0-9_.{},*\/+-]*$/) return
			first = tok; sub(/\/.*/, "", first)
			if (first in top) printf "%d\tpath\t%s\n", NR, tok
			else if (first in ltop) printf "%d\tlpath\t%s\n", NR, tok
		}
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence { next }
		{
			line = $0
			# code spans: paths; then drop them so links inside are not read
			while (match(line, /`[^`]+`/)) {
				path(substr(line, RSTART + 1, RLENGTH - 2))
				line = substr(line, 1, RSTART - 1) " " substr(line, RSTART + RLENGTH)
			}
			while (match(line, /\]\([^) \t]+( "[^"]*")?\)/)) {
				tgt = substr(line, RSTART + 2, RLENGTH - 3)
				sub(/ ".*/, "", tgt)
				line = substr(line, RSTART + RLENGTH)
				if (tgt !~ /^[a-z]+:/) printf "%d\tlink\t%s\n", NR, tgt
			}
			if (match(line, /^\[[^]]+\]:[ \t]+[^ \t]+/)) {
				tgt = line; sub(/^\[[^]]+\]:[ \t]+/, "", tgt); sub(/[ \t].*/, "", tgt)
				if (tgt !~ /^[a-z]+:/) printf "%d\tlink\t%s\n", NR, tgt
			}
		}' "$1"
		;;
	*)
		# roff: drop the escapes of hyphens and fonts, then find paths
		awk -v tops="$tops" '
		BEGIN { n = split(tops, t, " "); for (i = 1; i <= n; i++) top[t[i]] = 1 }
		{
			line = $0
			gsub(/\\-/, "-", line); gsub(/\\f[BIRP]/, "", line); gsub(/\\&/, "", line)
			while (match(line, /(^|[^A-Za-z0-9_.\/-])[A-Za-z0-9_.]+\/[A-Za-z0-9_.{},*\/+-]*/)) {
				tok = substr(line, RSTART, RLENGTH)
				line = substr(line, RSTART + RLENGTH)
				sub(/^[^A-Za-z0-9_.]/, "", tok); sub(/[.,;]$/, "", tok)
				first = tok; sub(/\/.*/, "", first)
				if (first in top) printf "%d\tpath\t%s\n", NR, tok
			}
		}' "$1"
		;;
	esac
}

# anchors FILE: the anchors of its headings, one a line
anchors() {
	awk '
	/^[ \t]*(```|~~~)/ { fence = !fence; next }
	fence || !/^#+[ \t]/ { next }
	{
		h = tolower($0)
		sub(/^#+[ \t]+/, "", h); sub(/[ \t#]+$/, "", h)
		gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
		a = (h in seen) ? h "-" seen[h] : h
		seen[h]++
		print a
	}' "$1"
}

# exists PATTERN: a path, with {a,b} alternatives and * globs, each matching
exists() {
	local p=$1 alts a re='^([^{]*)[{]([^}]*)[}](.*)$'
	if [[ $p =~ $re ]]; then
		local pre=${BASH_REMATCH[1]} post=${BASH_REMATCH[3]}
		IFS=, read -r -a alts <<<"${BASH_REMATCH[2]}"
		for a in "${alts[@]}"; do
			exists "$pre$a$post" || return 1
		done
		return 0
	fi
	case "$p" in
	*'*'*) compgen -G "$p" >/dev/null ;;
	*) [ -e "$p" ] ;;
	esac
}

if [ $# -gt 0 ]; then
	files=("$@")
else
	shopt -s nullglob
	files=(README.md docs/*.md tools/vmtest/README.md user/cli/devcg.8)
	shopt -u nullglob
fi
pass=0 fail=0
for f in "${files[@]}"; do
	if [ ! -f "$f" ]; then
		echo "$f: missing"
		fail=$((fail + 1))
		continue
	fi
	dir=$(dirname "$f")
	bad=0 nlinks=0 npaths=0
	while IFS=$'\t' read -r line kind tgt; do
		if [ "$kind" = path ]; then
			npaths=$((npaths + 1))
			exists "$tgt" || { echo "$f:$line: path \`$tgt\`: missing"; bad=$((bad + 1)); }
			continue
		fi
		if [ "$kind" = lpath ]; then
			npaths=$((npaths + 1))
			exists "$dir/$tgt" || { echo "$f:$line: path \`$tgt\` ($dir/$tgt): missing"; bad=$((bad + 1)); }
			continue
		fi
		nlinks=$((nlinks + 1))
		file=${tgt%%#*} anchor=
		[ "$file" = "$tgt" ] || anchor=${tgt#*#}
		if [ -z "$file" ]; then
			file=$f
		else
			file=$dir/$file
			if [ ! -e "$file" ]; then
				echo "$f:$line: link ($tgt): $file missing"
				bad=$((bad + 1))
				continue
			fi
		fi
		if [ -n "$anchor" ]; then
			case "$file" in
			*.md)
				anchors "$file" | grep -qxF -- "$anchor" ||
					{ echo "$f:$line: link ($tgt): no heading #$anchor in $file"; bad=$((bad + 1)); }
				;;
			*)
				echo "$f:$line: link ($tgt): #$anchor in $file, which is not Markdown"
				bad=$((bad + 1))
				;;
			esac
		fi
	done < <(refs "$f")
	if [ $bad = 0 ]; then
		echo "ok $f ($nlinks links, $npaths paths)"
		pass=$((pass + 1))
	else
		echo "FAIL $f ($nlinks links, $npaths paths, $bad missing)"
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed, 0 skipped"
[ $fail = 0 ]
