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
#
# What an input costs decides how much 30 s explore.  ASan's quarantine is
# 64 MiB here, not its 256 MiB: the record target allocates and frees
# buffers for every attribute it saves, and the larger quarantine kept
# handing it fresh pages to fault in (fuzz/corpus/record/disk replayed
# 300 times: 0.59 s and 260 MB, with 64 MiB 0.45 s and 94 MB).  The record
# target's inputs stay below 4 KiB (a few devices): a mutant of its 40 KiB
# seed costs 70 ms where a 526-byte record costs 2 ms, and the large
# recordings are replayed whole by every build's fuzz-replay-record.  And
# it runs libFuzzer's plain schedule (-entropic=0): the entropic one
# updates its table of rare features for each of the 20,000-30,000
# features a record input touches, which took 35-43% of a run (perf:
# InputCorpus::UpdateFeatureFrequency), twice the target's own time.
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
	ioctl-file)
		echo tests/devio/data ;;
	esac
}

# target_options TARGET - libFuzzer options of TARGET's own
target_options() {
	case $1 in
	record) echo -max_len=4096 -entropic=0 ;;
	esac
}

results=build-fuzz/fuzz-results.tsv
printf 'target\tseconds\texecutions\tcrashes\n' >"$results"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
for t in "${targets[@]}"; do
	mkdir -p "$scratch/$t/new" "$scratch/$t/found"
	# shellcheck disable=SC2046 # target_options: words
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=64 UBSAN_OPTIONS=halt_on_error=1 \
		"build-fuzz/fuzz/fuzz-$t" -max_total_time="$seconds" -timeout=10 $(target_options "$t") \
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
