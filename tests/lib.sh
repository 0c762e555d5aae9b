# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/lib.sh - what the shell tests that drive classfsd share.  Source it
# first thing; then:
#
#   cfs_enter [-n] "$@"; shift
#                           re-run the script as root in a private mount
#                           namespace (-n: and network namespace); exits 77
#                           (skipped) when not root.  Inside, it makes $tmp
#                           and the traps; the shift drops its marker.
#   cfs_track PID...        processes to kill when the script ends
#   start_daemon NAME OPT.. a classfsd (path in $classfsd) with socket
#                           $tmp/NAME/sock and mount $tmp/NAME/mnt; sets
#                           $daemon to its PID (tracked; its log is
#                           $tmp/NAME/log)
#   wait_for SECONDS CMD..  retry CMD until it succeeds (status 1 on timeout)
#
# Results, in one dialect for every shell test (the lines harness.h prints
# for the C tests):
#   ok MESSAGE...           a check that held: "ok   MESSAGE"
#   bad MESSAGE...          one that did not: "FAIL MESSAGE", counted
#   check MESSAGE CMD...    ok MESSAGE or bad MESSAGE, by CMD's exit status
#   cfs_summary             prints "N passed, N failed"; status 1 when a
#                           check failed (a script's last command)
# The counts live in the shell that calls them: not in a ( subshell ) or
# the body of a pipeline's loop.
#
# $tmp is a private temporary directory; on exit every tracked process is
# killed (SIGCONT first, so stopped ones die too), every mount below $tmp
# is removed and $tmp deleted, whatever happened.

# cfs_enter [-n] "$@" - see above
cfs_enter() {
	local net=
	if [[ ${1:-} == -n ]]; then
		net=-n
		shift
	fi
	if [[ ${1:-} == --inside ]]; then
		tmp=$(mktemp -d)
		trap cfs_cleanup EXIT
		trap 'exit 130' INT TERM
		return 0
	fi
	if ((EUID != 0)); then
		echo "SKIP: needs root (FUSE mounts in private namespaces)"
		exit 77
	fi
	exec unshare $net -m --propagation private "$0" --inside "$@"
}

cfs_pids=()
cfs_track() {
	cfs_pids+=("$@")
}

cfs_cleanup() {
	local p m
	for p in "${cfs_pids[@]}"; do
		kill -CONT "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	for p in "${cfs_pids[@]}"; do
		# a process that ignores SIGTERM gets SIGKILL after 2 s
		for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	cfs_pids=()
	[[ -n ${tmp:-} ]] || return 0
	while read -r m; do
		umount -l "$m" 2>/dev/null
	done < <(awk -v t="$tmp/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | sort -r)
	rm -rf "$tmp"
}

# start_daemon NAME [OPTIONS...] - see above
start_daemon() {
	local d=$tmp/$1
	shift
	mkdir -p "$d/mnt"
	chmod 0755 "$tmp" "$d"	# a second uid must reach the socket and the mount
	"$classfsd" --socket "$d/sock" --mount "$d/mnt" "$@" >>"$d/log" 2>&1 &
	daemon=$!
	cfs_track "$daemon"
	for _ in $(seq 200); do
		[[ -S $d/sock ]] && mountpoint -q "$d/mnt" && return 0
		sleep 0.05
	done
	echo "FAIL classfsd did not start:"
	cat "$d/log"
	exit 1
}

# wait_for SECONDS COMMAND... - see above
wait_for() {
	local n=$(($1 * 20))
	shift
	for _ in $(seq "$n"); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

cfs_passed=0 cfs_failed=0

# ok MESSAGE... - see above
ok() {
	echo "ok   $*"
	cfs_passed=$((cfs_passed + 1))
}

# bad MESSAGE... - see above
bad() {
	echo "FAIL $*"
	cfs_failed=$((cfs_failed + 1))
}

# check MESSAGE COMMAND... - see above
check() {
	local what=$1
	shift
	if "$@"; then
		ok "$what"
	else
		bad "$what"
	fi
}

# cfs_summary - see above
cfs_summary() {
	echo "$cfs_passed passed, $cfs_failed failed"
	((cfs_failed == 0))
}
