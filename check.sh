#!/usr/bin/env bash
# check.sh - install what is missing, build, and run every test:
#   (a) regular build (build/, warnings as errors)
#   (b) AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/)
#   (c) ThreadSanitizer build with clang (build-tsan/), every test but the
#       few TSan cannot run (tsan_cannot below says why for each)
#   (d) bench/run.sh --quick, if present (informative: never fails the check)
#   (e) every libFuzzer target for 30 s (fuzz/run.sh; clang, build-fuzz/)
#   then build/reliability.md is written from what the tests recorded
#   (fuzz runs, stress runs of CLASSFS_STRESS_SECONDS, default 60, faults,
#   security; scripts/reliability.sh): a check changes no tracked file.
# ./check.sh --quick runs (a) only; ./check.sh --fuzz SECONDS runs only the
# fuzzers, SECONDS each; ./check.sh --update-reliability copies the last
# full run's build/reliability.md to docs/reliability.md (to commit by
# choice: git commit docs/reliability.md). Closes with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")"
source scripts/deps.sh

quick=0 fuzz_only=0 fuzz_seconds=30 update_reliability=0
case "${1:-}" in
--quick) quick=1 ;;
--update-reliability) update_reliability=1 ;;
--fuzz)
	fuzz_only=1 fuzz_seconds=${2:-}
	[[ $fuzz_seconds =~ ^[0-9]+$ ]] || { echo "usage: $0 --fuzz SECONDS" >&2; exit 2; }
	;;
"") ;;
*) echo "usage: $0 [--quick | --fuzz SECONDS | --update-reliability]" >&2; exit 2 ;;
esac

if ((update_reliability)); then
	:
elif ((quick)); then
	classfs_install_missing "${CLASSFS_BUILD_DEPS[@]}"
else
	classfs_install_missing "${CLASSFS_BUILD_DEPS[@]}" "${CLASSFS_CHECK_DEPS[@]}"
fi

# The suite runs where no other uid can enter, as from a clone in root's
# home (0700 on Debian, and in the build chroots of distributions): a test
# that runs something of the build or source tree as another uid without
# staging it (tests/stage.sh) fails there, so it fails here too, not only
# on someone else's machine.  When this tree is open to uid 65534, check.sh
# mirrors it (the files git knows of, tracked or not ignored; files gone
# here go there; its build directories stay, so builds stay incremental)
# into $CLASSFS_CHECK_DIR/KEY/NAME (default ~/.cache/classfs-check, made
# 0700) and runs there; ../shared, the data beside the tree, is linked
# beside the mirror, and what the run writes into the tree (fuzz/
# regressions; docs/reliability.md with --update-reliability) comes back.
# CLASSFS_CHECK_IN_PLACE=1: run here.
if [[ -z ${CLASSFS_CHECK_IN_PLACE:-} ]] && ((EUID == 0)); then
	# shellcheck source=tests/stage.sh
	source tests/stage.sh
	if cfs_as_uid 65534 test -x "$PWD/" 2>/dev/null; then
		top=${CLASSFS_CHECK_DIR:-${HOME:-/root}/.cache/classfs-check}
		key=$(printf '%s' "$PWD" | md5sum)
		mirror=$top/${key:0:12}/${PWD##*/}
		mkdir -p "$mirror" && chmod 0700 "$top" || exit 1
		if [[ -d ../shared ]]; then
			ln -sfn "$(cd .. && pwd)/shared" "$top/${key:0:12}/shared"
		fi
		list=$(mktemp) stamp=$(mktemp)
		if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			git ls-files -z -co --exclude-standard >"$list"
		else
			find . \( -name 'build*' -prune \) -o \( -type f -printf '%P\0' \) >"$list"
		fi
		# Only the files that differ from the mirror's are copied, and
		# with the time of the copy (tar -m): a file edited here while an
		# earlier run built there is newer than what that run built,
		# whatever its time here, so the builds there see the change.
		# (A file git knows of but gone from the tree is not copied.)
		changed=$(mktemp)
		while IFS= read -r -d '' f; do
			[[ -e $f || -L $f ]] || continue
			cmp -s -- "$f" "$mirror/$f" || printf '%s\0' "$f"
		done <"$list" >"$changed"
		tar -C . --null -T "$changed" -cf - 2>/dev/null | tar -C "$mirror" -xmpf -
		rm -f "$changed"
		(cd "$mirror" && find . \( -path './build*' -prune \) -o \( -type f -printf '%P\0' \)) |
			sort -z | comm -z -23 - <(sort -z "$list") |
			(cd "$mirror" && xargs -0 -r rm -f --)
		echo "== running in $mirror (a mirror of $PWD that other uids cannot enter)"
		touch "$stamp"
		rc=0
		CLASSFS_CHECK_IN_PLACE=1 "$mirror/check.sh" "$@" || rc=$?
		# what the run wrote into the tree comes back
		(cd "$mirror" && find . \( -path './build*' -o -name __pycache__ \) -prune -o \
			\( -type f -newer "$stamp" -printf '%P\0' \)) |
			tar -C "$mirror" --null -T - -cf - | tar -C . -xpf -
		rm -f "$list" "$stamp"
		echo "== ran in $mirror (its build directories are there)"
		exit "$rc"
	fi
fi

if ((update_reliability)); then
	# (from a tree other uids can enter, this runs in the mirror, where the
	# last run's build/ is; docs/reliability.md comes back with the rest)
	if [[ ! -f build/reliability.md ]]; then
		echo "$0: no build/reliability.md: run ./check.sh first" >&2
		exit 1
	fi
	cp build/reliability.md docs/reliability.md
	echo "docs/reliability.md: the tables of $(sed -n 's/.*in the run of \(.*UTC\).*/\1/p' build/reliability.md | head -1) (git commit docs/reliability.md to keep them)"
	exit 0
fi

passed=0 failed=0 skipped=0
failures=()	# what failed, repeated at the end (CI shows the tail)
tails=$(mktemp)
trap 'rm -f "$tails"' EXIT
export CLASSFS_STRESS_SECONDS=${CLASSFS_STRESS_SECONDS:-60}

# build DIR OPTION... - configure (or reconfigure) DIR and build it
build() {
	local dir=$1; shift
	echo "== build $dir"
	if [[ -f $dir/meson-private/coredata.dat ]]; then
		meson configure "$dir" "$@" || return
	else
		meson setup "$dir" "$@" || return
	fi
	ninja -C "$dir"
}

# run_tests DIR [TESTNAME...] - meson test in DIR, counting results from
# its testlog.json into the totals; a failed run never counts as 0 failed.
run_tests() {
	local dir=$1; shift
	local log=$dir/meson-logs/testlog.json rc=0 ok=0 bad=0 skip=0
	rm -f "$log"
	rm -rf "$dir/reliability"	# the rows of this run only
	meson test -C "$dir" --print-errorlogs --no-rebuild "$@" || rc=$?
	if [[ -f $log ]]; then
		ok=$(grep -cE '"result": "(OK|EXPECTEDFAIL)"' "$log" || true)
		bad=$(grep -cE '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
		skip=$(grep -c '"result": "SKIP"' "$log" || true)
	fi
	((rc == 0 || bad > 0)) || bad=1
	if ((bad)); then
		local before=${#failures[@]}
		[[ -f $log ]] && mapfile -t -O "${#failures[@]}" failures < <(grep -E \
			'"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" |
			sed -E 's|.*"name": "([^"]*)".*"result": "([A-Z]*)".*|'"$dir"': \1 (\2)|')
		((${#failures[@]} > before)) || failures+=("$dir: meson test exited $rc")
		# the last lines of each failed test's output, shown again at the end
		[[ -f $log ]] && python3 - "$log" >>"$tails" <<-'PY'
		import json, sys
		for line in open(sys.argv[1]):
		    t = json.loads(line)
		    if t.get("result") in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
		        out = (t.get("stdout") or "") + (t.get("stderr") or "")
		        print("== output of " + t["name"] + " (last 30 lines):")
		        print("\n".join(out.splitlines()[-30:]))
		PY
	fi
	# names that match no test: meson runs nothing and exits 0
	if ((ok + bad + skip == 0)); then
		echo "== $dir: no test ran${*:+ (filter: $*)}"
		failures+=("$dir: no test matched${*:+ $*}")
		bad=1
	fi
	echo "== $dir: $ok passed, $bad failed, $skip skipped"
	passed=$((passed + ok)) failed=$((failed + bad)) skipped=$((skipped + skip))
}

# step DIR [TEST ARG...] -- SETUP OPTION... - build DIR, then test it
# (a build failure counts as one failure)
step() {
	local dir=$1 args=(); shift
	while [[ $1 != -- ]]; do args+=("$1"); shift; done
	shift
	if build "$dir" "$@"; then
		run_tests "$dir" "${args[@]}"
	else
		echo "== $dir: build failed"
		failures+=("$dir: build")
		failed=$((failed + 1))
	fi
}

# run_fuzzers SECONDS - each libFuzzer target for SECONDS; one result per target
run_fuzzers() {
	local line t execs crashes
	echo "== fuzz/run.sh $1"
	bash fuzz/run.sh "$1"
	if [[ ! -f build-fuzz/fuzz-results.tsv ]]; then
		echo "== fuzz: no results"
		failures+=("fuzz: no results")
		failed=$((failed + 1))
		return
	fi
	while IFS=$'\t' read -r t _ execs crashes; do
		[[ $t == target ]] && continue
		if [[ $crashes == 0 && ${execs:-0} -gt 0 ]]; then
			passed=$((passed + 1))
		else
			echo "== fuzz $t: $crashes crashes, ${execs:-0} executions"
			failures+=("fuzz $t: $crashes crashes, ${execs:-0} executions")
			failed=$((failed + 1))
		fi
	done <build-fuzz/fuzz-results.tsv
}

# What the ThreadSanitizer build cannot run, and why.  A name here that
# is no test is an error (a renamed test must not come back unchecked).
declare -A tsan_cannot=(
	# classfs-run (and libclassfs's run API) enter mount and user
	# namespaces: setns(CLONE_NEWNS) and unshare(CLONE_NEWUSER) refuse a
	# process of more than one thread (EINVAL), and the TSan runtime runs
	# a thread of its own in every process, forked children too
	[test-run]="classfs_run_*() enter namespaces: EINVAL beside TSan's own thread"
	[test-run-unpriv]="classfs_run_*() enter namespaces: EINVAL beside TSan's own thread"
	[test-classfs-run]="classfs-run enters namespaces: EINVAL beside TSan's own thread"
	[test-classfs-run-unpriv]="classfs-run enters namespaces: EINVAL beside TSan's own thread"
	[test-fs-writable]="runs inside classfs-run: EINVAL beside TSan's own thread"
	[test-fs-writable-unpriv]="runs inside classfs-run: EINVAL beside TSan's own thread"
	[test-record-machine]="loads the recording with classfs-run: EINVAL beside TSan's own thread"
	[python-testbed-join]="runs pytest inside classfs-run: EINVAL beside TSan's own thread"
	[python-testbed-join-unpriv]="runs pytest inside classfs-run: EINVAL beside TSan's own thread"
	# python3 is no TSan build: the runtime is linked into executables
	# only, so the extension's libclassfs cannot load in it
	[python-testbed]="python3 cannot load a TSan libclassfs (undefined symbol __tsan_atomic8_store)"
	[python-testbed-unpriv]="python3 cannot load a TSan libclassfs (undefined symbol __tsan_atomic8_store)"
)

# tsan_tests - every test of build-tsan but those of tsan_cannot
tsan_tests() {
	local all=() run=() t
	mapfile -t all < <(meson test -C build-tsan --list --no-rebuild 2>/dev/null |
		sed 's/^.* \/ //')
	for t in "${!tsan_cannot[@]}"; do
		if [[ " ${all[*]} " != *" $t "* ]]; then
			echo "== build-tsan: tsan_cannot names $t, which is no test"
			failures+=("build-tsan: tsan_cannot names $t, which is no test")
			failed=$((failed + 1))
		fi
	done
	for t in "${all[@]}"; do
		if [[ -n ${tsan_cannot[$t]:-} ]]; then
			echo "== build-tsan: $t not run: ${tsan_cannot[$t]}"
			skipped=$((skipped + 1))
		else
			run+=("$t")
		fi
	done
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		run_tests build-tsan --timeout-multiplier=5 "${run[@]}"
}

if ((fuzz_only)); then
	run_fuzzers "$fuzz_seconds"
	echo "$passed passed, $failed failed"
	((failed == 0))
	exit
fi

# (a) regular build
step build -- -Dwerror=true -Db_sanitize=none

if ((!quick)); then
	# (b) ASan + UBSan, every test
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		step build-asan --timeout-multiplier=3 -- \
		-Db_sanitize=address,undefined -Db_lundef=false -Dwerror=false

	# (c) TSan (clang), every test but those it cannot run
	if CC=clang build build-tsan -Db_sanitize=thread -Db_lundef=false -Dwerror=false; then
		tsan_tests
	else
		echo "== build-tsan: build failed"
		failures+=("build-tsan: build")
		failed=$((failed + 1))
	fi

	# (e) the fuzzers, briefly (./check.sh --fuzz SECONDS for long runs)
	rm -f build-fuzz/fuzz-results.tsv
	run_fuzzers "$fuzz_seconds"

	# (d) quick benchmarks: tables to read, not tests
	for b in bench/run.sh bench/record/run.sh bench/remote/run.sh; do
		[[ -f $b ]] || continue
		echo "== $b --quick"
		timeout 1200 bash "$b" --quick ||
			echo "== $b exited with status $? (informative, not counted)"
	done

	# the tables go beside the build; docs/reliability.md changes only by
	# ./check.sh --update-reliability
	bash scripts/reliability.sh build/reliability.md || true	# its violations are the tests' failures
	echo "== reliability tables: $PWD/build/reliability.md (./check.sh --update-reliability: into docs/)"
fi

cat "$tails"
for f in "${failures[@]}"; do
	echo "== failed: $f"
done
summary="$passed passed, $failed failed"
((skipped == 0)) || summary+=", $skipped skipped"
echo "$summary"
((failed == 0))
