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
#
#   cfs_as_uid [--exec] UID[:GID] CMD [ARG]...
#                          run CMD as UID (gid GID, default UID; no
#                          supplementary groups; setpriv).  The only way a
#                          test runs something as another uid: the test
#                          uid-switch (tests/check-uid-switch.sh) fails on
#                          a setpriv, setuid() or setres[ug]id() anywhere
#                          else in tests/.  CMD, unless it is a system
#                          program (/usr, /bin, /sbin) or already staged,
#                          runs from a copy cfs_stage made (once per
#                          program, reused by later calls and subshells)
#                          in $cfs_stage_dir, else in $tmp/as-uid
#                          (tests/lib.sh's $tmp).  CLASSFS_SAMPLE names a
#                          copy of data/sample.umockdev there (when a
#                          staging directory is set and it is not set
#                          already), for classfs-run --sample and the
#                          Testbed.  Other files of the build or source
#                          tree that CMD is given (arguments, variables)
#                          the caller stages with cfs_stage.  --exec: exec
#                          setpriv, so that after `cfs_as_uid --exec ... &`
#                          $! is the program itself.

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

# the source tree (stage.sh is its tests/stage.sh)
cfs_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# the directory cfs_as_uid stages programs in (made on first use)
cfs_as_uid_dir() {
	local d=${cfs_stage_dir:-}
	if [[ -z $d ]]; then
		if [[ -z ${tmp:-} ]]; then
			echo "cfs_as_uid: set cfs_stage_dir (or tests/lib.sh's \$tmp) first" >&2
			return 1
		fi
		chmod go+x "$tmp" || return 1	# others may search it, not list it
		d=$tmp/as-uid
	fi
	mkdir -p "$d" && chmod 0755 "$d" && realpath "$d"
}

# the path a second uid runs for the program @1: itself when it is a
# system program or already staged, else its staged copy (made once)
cfs_as_uid_prog() {
	local prog=$1 real base key d t v
	if [[ $prog != */* ]]; then
		real=$(type -P "$prog") || { echo "$prog"; return 0; }	# not a file: as it is
	else
		real=$(realpath "$prog") || return 1
	fi
	case $real in
	/usr/* | /bin/* | /sbin/*)
		echo "$prog"
		return 0 ;;
	esac
	base=$(cfs_as_uid_dir) || return 1
	if [[ $real == "$base"/* ]]; then
		echo "$prog"
		return 0
	fi
	key=$(printf '%s' "$real" | md5sum)
	d=$base/${key:0:16}
	if [[ ! -f $d/.prog ]]; then
		# staged aside, then renamed into place: a concurrent caller (a
		# subshell) finds it whole or not at all
		t=$(mktemp -d "$base/.staging.XXXXXX") || return 1
		v=$real
		if ! cfs_stage "$t" v >/dev/null; then
			rm -rf "$t"
			return 1
		fi
		echo "${v#"$t"/}" >"$t/.prog"
		mv -T "$t" "$d" 2>/dev/null || rm -rf "$t"
	fi
	echo "$d/$(cat "$d/.prog")"
}

# cfs_as_uid [--exec] UID[:GID] CMD [ARG]... - see above
cfs_as_uid() {
	local ex=() uid gid prog
	if [[ ${1:-} == --exec ]]; then
		ex=(exec)
		shift
	fi
	uid=${1%%:*} gid=${1#*:}
	shift
	if ! [[ $uid =~ ^[0-9]+$ && $gid =~ ^[0-9]+$ && $# -gt 0 ]]; then
		echo "usage: cfs_as_uid [--exec] UID[:GID] CMD [ARG]..." >&2
		return 2
	fi
	prog=$(cfs_as_uid_prog "$1") || {
		echo "cfs_as_uid: cannot stage $1 for uid $uid" >&2
		return 126
	}
	local sample=${CLASSFS_SAMPLE:-} base
	if [[ -z $sample && -f $cfs_src/data/sample.umockdev ]] &&
		{ [[ -n ${cfs_stage_dir:-} ]] || [[ -n ${tmp:-} ]]; }; then
		base=$(cfs_as_uid_dir) || return 126
		sample=$base/sample.umockdev
		if [[ ! -f $sample ]]; then
			install -m 0644 "$cfs_src/data/sample.umockdev" "$sample.$$" &&
				mv -f "$sample.$$" "$sample" || return 126
		fi
	fi
	"${ex[@]}" env ${sample:+CLASSFS_SAMPLE="$sample"} \
		setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$prog" "${@:2}"
}
