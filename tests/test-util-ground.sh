#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-util-ground.sh UTIL_ARCHIVE - src/util is the ground layer: its
# static library (linked into libclassfs.so, and the few functions each
# needs into classfsd, classctl and the Python extension) has no state,
# no writable variable (data or bss, a lock included), and calls nothing
# of the library (no classfs_* function, no cfs_* function it does not
# define itself).  So the copies in the library and in a program linking
# it have nothing to disagree about.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
ar=${1:?usage: test-util-ground.sh UTIL_ARCHIVE}
syms=$(nm -A "$ar") || { bad "nm $ar"; cfs_summary; exit; }
defined=$(awk '$2 ~ /^[A-Za-z]$/ && $2 != "U" { print $3 }' <<<"$syms" | sort -u)
# writable data: objects in .data, .bss and their thread-local and small
# kinds; .data.rel.ro (a const table of pointers, read-only once
# relocated) is not state.  The sanitizers' and compilers' own (names
# starting with "__" or ".") aside.
state=$(objdump -t "$ar" | awk '$0 ~ / O / {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^\.(data|bss|tdata|tbss|sdata|sbss)/ && $i !~ /^\.data\.rel\.ro/ &&
		    $NF !~ /^(__|\.)/)
			print $NF " (" $i ")"
}')
calls=$(awk '$2 == "U" && $3 ~ /^(classfs_|cfs_)/ { print $1, $3 }' <<<"$syms" |
	while read -r where name; do
		grep -qx "$name" <<<"$defined" || echo "$where $name"
	done)
if [[ -n $state ]]; then
	bad "src/util holds state (writable variables):"
	echo "$state" | sed 's/^/  /'
else
	ok "src/util has no writable variable ($(wc -l <<<"$defined") symbols)"
fi
if [[ -n $calls ]]; then
	bad "src/util calls into the library:"
	echo "$calls" | sed 's/^/  /'
else
	ok "src/util calls nothing of the library"
fi
cfs_summary
