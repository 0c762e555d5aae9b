# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/stage.sh - put the programs a second uid runs where it can run them.
#
# Root may clone the repository where no other uid can enter (/root is
# 0700 on Debian): a program of the build tree run as uid 65534 then
# cannot be executed, or cannot load the libclassfs beside it.  A test
# that switches uid runs copies instead, staged in a directory of its own
# that every uid can read.  Source this file, then:
#
#   cfs_stage DIR VAR...   copy the program named by each $VAR into DIR and
#                          set VAR to the copy.  The libraries of the build
#                          tree it loads (not the system's) are copied too,
#                          in the same places relative to it, so its
#                          $ORIGIN run path finds them with no environment.
#                          DIR is made mode 0755; every directory above it
#                          must let others search it (the call fails,
#                          saying which, otherwise).  DIR belongs to the
#                          caller, who removes it (best inside its own
#                          temporary directory, removed on exit).

# the build tree's shared libraries that @1 loads, one real path a line
cfs_stage_libs() {
	ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
		while read -r lib; do
			# the directory resolved, the name kept: the soname's link
			lib=$(realpath "${lib%/*}")/${lib##*/}
			case $lib in
			/lib/* | /lib64/* | /usr/*) ;;
			*) echo "$lib" ;;
			esac
		done
}

# the longest directory that holds both @1 (a directory) and @2
cfs_stage_common() {
	local a=${1%/}/ b=${2%/}/
	while [[ $a != / && ${b#"$a"} == "$b" ]]; do
		a=${a%/*/}/
	done
	echo "${a%/}"
}

# cfs_stage DIR VAR... - see above
cfs_stage() {
	local dir var prog lib base rel d libs
	mkdir -p "$1" && chmod 0755 "$1" && dir=$(realpath "$1") || return 1
	shift
	d=$dir
	while :; do
		if ! (($(stat -c '0%a' "$d/") & 1)); then
			echo "cfs_stage: other uids cannot search $d/ (mode $(stat -c %a "$d/"))" >&2
			return 1
		fi
		[[ -n $d ]] || break
		d=${d%/*}
	done
	for var in "$@"; do
		prog=$(realpath "${!var}") || return 1
		libs=$(cfs_stage_libs "$prog")
		base=${prog%/*}
		for lib in $libs; do
			base=$(cfs_stage_common "$base" "${lib%/*}")
		done
		rel=${prog#"$base"/}
		install -D -m 0755 "$prog" "$dir/$rel" || return 1
		for lib in $libs; do
			# under the name the program asks for (the soname), the file's bytes
			install -D -m 0644 "$lib" "$dir/${lib#"$base"/}" || return 1
		done
		printf -v "$var" '%s' "$dir/$rel"
	done
	# every directory made on the way is others' to search too
	find "$dir" -type d -exec chmod 0755 {} + || return 1
}
