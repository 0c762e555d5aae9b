#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fuzz/run.sh [SECONDS] [TARGET...] - build the libFuzzer targets (clang,
# ASan+UBSan, in build-fuzz/) and run each for SECONDS (default 30) from
# its committed corpus.  New interesting inputs go to a scratch folder, not
# to the corpus.  A crash, leak or timeout is copied to
# fuzz/regressions/TARGET/, where every build's replay test runs it from
# then on (commit it with the fix).  Writes build-fuzz/fuzz-results.tsv
# (target, seconds, executions, crashes) and exits 1 if anything crashed.
# FUZZ_SKIP="T1 T2" leaves targets out of a run without TARGETs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

seconds=${1:-30}
shift || true
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2; }

if [[ ! -f build-fuzz/build.ninja ]]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dwerror=false >/dev/null || exit 2
fi
mapfile -t all < <(sed -n "s/^fuzz_targets = \[\(.*\)\]/\1/p" fuzz/meson.build | tr -d "' " | tr , '\n')
targets=("$@")
if ((${#targets[@]} == 0)); then
	# FUZZ_SKIP: targets left out of a default run (fuzz/known/ says why)
	for t in "${all[@]}"; do
		[[ " ${FUZZ_SKIP:-} " == *" $t "* ]] || targets+=("$t")
	done
fi
ninja -C build-fuzz "${targets[@]/#/fuzz/fuzz-}" >/dev/null ||
	{ ninja -C build-fuzz "${targets[@]/#/fuzz/fuzz-}"; exit 2; }

# extra_seeds TARGET - seed folders beside the corpus: the repo's
# recordings, and ../shared's when it is there
extra_seeds() {
	case $1 in
	record)
		echo tests/record/data
		[[ -d ../shared/testdata/umockdev ]] && echo ../shared/testdata/umockdev ;;
	esac
}

results=build-fuzz/fuzz-results.tsv
printf 'target\tseconds\texecutions\tcrashes\n' >"$results"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for t in "${targets[@]}"; do
	mkdir -p "$scratch/$t/new" "$scratch/$t/found"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1 \
		"build-fuzz/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$scratch/$t/found/" \
		"$scratch/$t/new" "fuzz/corpus/$t" $(extra_seeds "$t") >"$scratch/$t/log" 2>&1
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$t/log" | tail -1)
	crashes=$(find "$scratch/$t/found" -type f | wc -l)
	if ((crashes)); then
		mkdir -p "fuzz/regressions/$t"
		cp "$scratch/$t/found"/* "fuzz/regressions/$t/"
		echo "fuzz: $t: $crashes crashing input(s), copied to fuzz/regressions/$t/" >&2
		tail -40 "$scratch/$t/log" >&2
		status=1
	fi
	printf '%s\t%s\t%s\t%s\n' "$t" "$seconds" "${execs:-0}" "$crashes" >>"$results"
	printf 'fuzz: %-14s %3ss  %10s executions  %s crashes\n' "$t" "$seconds" "${execs:-0}" "$crashes"
done
exit $status
