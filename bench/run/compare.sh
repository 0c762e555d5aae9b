#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# compare.sh BUILD-DIR [DOC] - the same libudev program (tests/run/udev-probe)
# on the same recordings under umockdev-run (LD_PRELOAD, files for /sys)
# and under classfs-run (namespaces, the FUSE tree as /sys), run by root
# and by uid 65534 (a user namespace, /dev the devtmpfs-style view): what
# each sees and the wall time of each, for the sample machine, the repo's
# recordings (tests/record/data), the real ones in ../shared/testdata/umockdev
# (or $CLASSFS_RECORDINGS) when that folder is there, and generated
# recordings of $SIZES devices (default 10, 1,000 and 10,000).
#
# Prints a Markdown table; with DOC, also replaces the part of DOC between
# "<!-- bench:begin -->" and "<!-- bench:end -->" with it.
# Wall times, of the environment alone (COMMAND `true`) and with the probe:
# median of $REPEAT runs (default 3; 1 for 10,000 devices);
# umockdev-run is cut off after $UMOCKDEV_TIMEOUT seconds (default 300).
# Needs root (it switches to uid 65534 with setpriv), umockdev and
# libudev-dev; leaves nothing behind.
set -euo pipefail

build=${1:?usage: $0 BUILD-DIR [DOC]}
doc=${2:-}
build=$(realpath "$build")
src=$(cd "$(dirname "$0")/../.." && pwd)
run=$build/programs/classfs-run/classfs-run
probe=$build/tests/run/udev-probe
export CLASSFSD=$build/programs/classfsd/classfsd
repeat=${REPEAT:-3}
umockdev_timeout=${UMOCKDEV_TIMEOUT:-300}
recdir=${CLASSFS_RECORDINGS:-$src/../shared/testdata/umockdev}
sizes=${SIZES:-10 1000 10000}
unpriv_uid=65534

for p in "$run" "$probe" "$CLASSFSD"; do
	[[ -x $p ]] || { echo "missing $p: build first (ninja -C $build)" >&2; exit 1; }
done
command -v umockdev-run >/dev/null || { echo "umockdev-run missing (apt-get install umockdev)" >&2; exit 1; }
((EUID == 0)) || { echo "needs root" >&2; exit 1; }

work=$(mktemp -d /tmp/classfs-bench-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
# uid 65534 runs copies, and reads the generated recordings
chmod 0755 "$work"
. "$src/tests/stage.sh"
urun=$run uclassfsd=$CLASSFSD uprobe=$probe
cfs_stage "$work/stage" urun uclassfsd uprobe >/dev/null

# N devices: a platform parent, then input devices each followed by its
# event interface holding a node (13:K)
gen() { # gen N FILE
	awk -v n="$1" 'BEGIN {
		print "P: /devices/platform/bench"
		print "E: SUBSYSTEM=platform"
		print "A: driver_override=(null)\\n"
		print ""
		c = 1
		for (k = 0; c < n; k++) {
			p = "/devices/platform/bench/input/input" k
			print "P: " p
			print "E: SUBSYSTEM=input"
			print "E: PRODUCT=19/0/" k "/0"
			print "E: NAME=\"bench key " k "\""
			print "E: ID_INPUT=1"
			print "E: ID_INPUT_KEY=1"
			print "A: name=bench key " k "\\n"
			print "A: phys=bench/input" k "\\n"
			print ""
			if (++c >= n)
				break
			print "P: " p "/event" k
			print "N: input/event" k
			print "E: SUBSYSTEM=input"
			print "E: DEVNAME=/dev/input/event" k
			print "E: MAJOR=13"
			print "E: MINOR=" k
			print "E: ID_INPUT=1"
			print "E: ID_INPUT_KEY=1"
			print "A: dev=13:" k "\\n"
			print ""
			c++
		}
	}' >"$2"
}

now() { date +%s.%N; }

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# one run: prints "STATUS SECONDS" and leaves the output in $work/out, $work/err
one() { # one TOOL FILE COMMAND...
	local tool=$1 file=$2 t0 t1 rc=0
	shift 2
	t0=$(now)
	case $tool in
	umockdev) timeout "$umockdev_timeout" umockdev-run -d "$file" -- "$@" \
			>"$work/out" 2>"$work/err" || rc=$? ;;
	classfs) "$run" --load "$file" -- "$@" >"$work/out" 2>"$work/err" || rc=$? ;;
	classfs-unpriv)
		setpriv --reuid="$unpriv_uid" --regid="$unpriv_uid" --clear-groups \
			env CLASSFSD="$uclassfsd" "$urun" --load "$file" -- "$@" \
			>"$work/out" 2>"$work/err" || rc=$? ;;
	esac
	t1=$(now)
	echo "$rc $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')"
}

# median wall time of REPS runs of COMMAND; "> T" when cut off.  The last
# run's status goes to $work/rc (this runs in a command substitution)
timed() { # timed TOOL FILE REPS COMMAND...
	local tool=$1 file=$2 reps=$3 times=() r i rc
	shift 3
	for ((i = 0; i < reps; i++)); do
		r=$(one "$tool" "$file" "$@")
		rc=${r% *}
		echo "$rc" >"$work/rc"
		times+=("${r#* }")
		if ((rc == 124)); then	# cut off: once is enough
			echo "> $umockdev_timeout"
			return
		fi
	done
	printf '%s\n' "${times[@]}" | median
}

field() { sed -n "s/^$1 //p" "$work/out" | head -1; }

rows=()
measure() { # measure LABEL FILE REPEAT
	local label=$1 file=$2 reps=$3 tool start secs seen name rc prb
	for tool in umockdev classfs classfs-unpriv; do
		case $tool in
		umockdev) name=umockdev-run prb=$probe ;;
		classfs) name="classfs-run (root)" prb=$probe ;;
		classfs-unpriv) name="classfs-run (uid $unpriv_uid)" prb=$uprobe ;;
		esac
		# the environment alone (start, COMMAND `true`, teardown), then the probe
		start=$(timed "$tool" "$file" "$reps" true)
		if [[ $start == ">"* ]]; then
			rows+=("| $label | $name | (cut off after ${umockdev_timeout} s while loading: nothing seen) | $start | $start |")
			echo "${rows[-1]}" >&2
			continue
		fi
		secs=$(timed "$tool" "$file" "$reps" "$prb" summary)
		rc=$(cat "$work/rc")
		if [[ $secs == ">"* ]]; then
			seen="(cut off after ${umockdev_timeout} s: nothing seen)"
		elif [[ -s $work/out ]]; then
			seen="$(field devices) devices, $(field devnodes) nodes ($(field nodes-ok) right), $(field initialized) initialized, $(field properties) properties, $(field attributes) attributes"
			((rc == 0)) || seen+="; exit $rc: $(head -c 160 "$work/err" | tr '\n' ' ')"
		else
			seen="exit $rc: $(head -c 160 "$work/err" | tr '\n' ' ')"
		fi
		rows+=("| $label | $name | $seen | $start | $secs |")
		echo "${rows[-1]}" >&2
	done
}

measure "sample machine" "$src/data/sample.umockdev" "$repeat"
for rec in "$src"/tests/record/data/usb-*.umockdev "$src"/tests/record/data/spi-*.umockdev \
	"$recdir"/*.umockdev; do
	[[ -e $rec ]] && measure "$(basename "$rec")" "$rec" "$repeat"
done
for n in $sizes; do
	gen "$n" "$work/gen-$n.umockdev"
	reps=$repeat
	((n >= 10000)) && reps=1
	measure "generated, $n devices" "$work/gen-$n.umockdev" "$reps"
done

table=$(
	echo "| recording | runner | what udev-probe saw | start+stop s | with udev-probe s |"
	echo "| --- | --- | --- | ---: | ---: |"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores, $(uname -r), umockdev $(dpkg-query -W -f '${Version}' umockdev 2>/dev/null || echo '?');"
	echo "Wall seconds, median of $repeat runs (one for 10,000 devices), not pinned (each runner is several processes);"
	echo "start+stop: the environment alone (COMMAND \`true\`); umockdev-run cut off after ${umockdev_timeout} s;"
	echo "classfs-run (uid $unpriv_uid): started by that uid, in a user namespace of its own."
)
echo "$table"
if [[ -n $doc ]]; then
	T=$table awk '
		/<!-- bench:begin -->/ { print; print ENVIRON["T"]; skip = 1; next }
		/<!-- bench:end -->/ { skip = 0 }
		!skip' "$doc" >"$work/doc" && cat "$work/doc" >"$doc"
fi
