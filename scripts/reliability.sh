#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# scripts/reliability.sh [OUT] - write the reliability tables (default
# build/reliability.md, beside the build: a check leaves the clone as it
# was; `./check.sh --update-reliability` copies the last one to the tracked
# docs/reliability.md, to commit by choice) from what the tests recorded
# in their last run:
#   build-fuzz/fuzz-results.tsv            fuzz/run.sh
#   BUILD/reliability/stress.tsv           tests/stress (plain, ASan, TSan builds)
#   build/reliability/faults.tsv           tests/faults/test-faults.sh
#   build/reliability/security.tsv         tests/security
# A table whose source is missing says so; the exit status is 1 when any
# recorded row is a violation, crash or failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=${1:-build/reliability.md}
mkdir -p "$(dirname "$out")" || exit 2
bad=0

{
	echo "# Reliability"
	echo
	echo "Written by \`scripts/reliability.sh\` from the rows the tests themselves"
	echo "recorded in the run of $(date -u '+%Y-%m-%d %H:%M UTC') (\`./check.sh\`). Every"
	echo "violation, crash and failure count must be zero."
	echo
	echo "## Fuzzing (libFuzzer, ASan+UBSan)"
	echo
	if [[ -f build-fuzz/fuzz-results.tsv ]]; then
		echo "| target | what it takes | seconds | executions | crashes |"
		echo "| --- | --- | ---: | ---: | ---: |"
		while IFS=$'\t' read -r t s e c; do
			[[ $t == target ]] && continue
			case $t in
			uevent-file) what="writes to a device's uevent file" ;;
			paths) what="names and paths (validation, path API walk, value paths)" ;;
			wire) what="udev and kernel netlink messages (decode, encode, decode)" ;;
			record) what="umockdev record files (load, save, load, save)" ;;
			protocol) what="control-protocol messages (the daemon's decoder)" ;;
			*) what="" ;;
			esac
			echo "| $t | $what | $s | $e | $c |"
			[[ $c == 0 ]] || bad=1
		done <build-fuzz/fuzz-results.tsv
	else
		echo "(no fuzz run recorded: run \`fuzz/run.sh\`)"
	fi
	echo
	echo "Inputs that ever crashed are kept in \`fuzz/regressions/\` and replayed by"
	echo "every build's \`fuzz-replay-*\` tests, with the committed corpus."
	echo
	echo "## Stress (bounded load, every rule checked)"
	echo
	echo "stress-local: writer threads add, rename, notify and remove nested devices"
	echo "while reader processes walk the FUSE mount and two listeners follow the"
	echo "events. stress-remote: client processes publish through classfsd (remote"
	echo "show()/store(), bound devices, some clients leave without cleaning up)"
	echo "while readers walk the daemon's mount and subscribers follow and replay."
	echo
	echo "| program | build | time | operations | readers | events | memory (early/late) | violations |"
	echo "| --- | --- | ---: | --- | ---: | --- | --- | ---: |"
	for f in build/reliability/stress.tsv build-asan/reliability/stress.tsv \
		build-tsan/reliability/stress.tsv; do
		[[ -f $f ]] || continue
		b=${f%%/*}
		case $b in build) b="plain" ;; build-asan) b="ASan+UBSan" ;; build-tsan) b="TSan" ;; esac
		while IFS=$'\t' read -r prog cols; do
			IFS=$'\t' read -ra v <<<"$cols"
			last=${v[${#v[@]} - 1]}
			if [[ $prog == stress-local ]]; then
				printf '| %s | %s | %s s | adds %s, removes %s, renames %s, notifies %s, show() %s, store() %s | reader ops %s | events %s | RSS %s KiB | **%s** |\n' \
					"$prog" "$b" "${v[0]}" "${v[1]}" "${v[2]}" "${v[3]}" "${v[4]}" "${v[5]}" "${v[8]}" \
					"${v[6]}" "${v[7]}" "${v[9]}" "$last"
			else
				printf '| %s | %s | %s s | client ops %s, remote calls %s | reader ops %s | events %s (gaps %s, replayed %s) | daemon RSS %s KiB | **%s** |\n' \
					"$prog" "$b" "${v[0]}" "${v[1]}" "${v[2]}" "${v[3]}" "${v[4]}" "${v[5]}" \
					"${v[6]}" "${v[7]}" "$last"
			fi
			[[ $last == 0 ]] || bad=1
		done <"$f"
	done
	echo
	echo "## Faults (what survived)"
	echo
	if [[ -f build/reliability/faults.tsv ]]; then
		echo "| fault | expected | outcome | holds |"
		echo "| --- | --- | --- | --- |"
		while IFS=$'\t' read -r c e g v; do
			echo "| $c | $e | $g | $v |"
			[[ $v == ok ]] || bad=1
		done <build/reliability/faults.tsv
	else
		echo "(no fault run recorded: \`meson test -C build --suite faults\`)"
	fi
	echo
	echo "## Security (an unprivileged uid against the socket and the mount)"
	echo
	if [[ -f build/reliability/security.tsv ]]; then
		echo "| section | who | via | operation | expected | outcome | holds |"
		echo "| --- | --- | --- | --- | --- | --- | --- |"
		while IFS=$'\t' read -r s w via op e g v; do
			echo "| $s | $w | $via | ${op//|/\\|} | ${e//|/\\|} | ${g//|/\\|} | $v |"
			[[ $v == ok ]] || bad=1
		done <build/reliability/security.tsv
	else
		echo "(no security run recorded: \`meson test -C build --suite security\`)"
	fi
} >"$out.tmp" && mv "$out.tmp" "$out"
echo "reliability: wrote $out$( ((bad)) && echo ' (with violations)')"
exit $bad
