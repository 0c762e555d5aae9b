#!/bin/bash
# run-pytest.sh BUILD_PYTHON_DIR CLASSFSD [--run CLASSFS_RUN] [--join] [--uid UID] [PYTEST ARGS...]
# Runs the Python package's tests with Debian's python3 and pytest: in an
# environment of the Testbed's own (default), or joined (--join: the whole
# pytest runs under classfs-run), as root or as another uid (--uid).
# CLASSFS_RUN (--run) is also handed to the tests that start classfs-run.
# Exit 77 (skipped, with the reason) when python3-dev's module, pytest or
# pyudev are missing, or when every test skipped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
pydir=$1 classfsd=$2
shift 2
run="" join="" uid=""
while (($#)); do
	case $1 in
	--run) run=$2; shift 2 ;;
	--join) join=1; shift ;;
	--uid) uid=$2; shift 2 ;;
	*) break ;;
	esac
done
py=/usr/bin/python3
for mod in pytest pyudev; do
	if ! "$py" -c "import $mod" 2>/dev/null; then
		echo "SKIP: $py has no $mod (apt-get install python3-pytest python3-pyudev)"
		exit 77
	fi
done
if ! ls "$pydir"/classfs/_classfs*.so >/dev/null 2>&1; then
	echo "SKIP: the extension was not built (python3-dev missing at setup)"
	exit 77
fi
# shellcheck source=../stage.sh
. "$here/../stage.sh"
tests=$here
as_uid=()
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [[ -n $uid ]]; then
	# Root may have cloned where no other uid can enter (/root is 0700):
	# the uid runs copies of the tests, the package and the libclassfs its
	# run path ($ORIGIN/../..) names, in a directory every uid can read.
	chmod 755 "$out"
	mkdir -p "$out/stage/tests/python" "$out/stage/data" "$out/stage/build/python"
	cp "$here"/*.py "$here"/lsan.supp "$out/stage/tests/python/"
	cp "$here/../stage.sh" "$out/stage/tests/"	# conftest.py's as_uid() runs it
	cp "$here/../../data/sample.umockdev" "$out/stage/data/"
	cp -r "$pydir/classfs" "$out/stage/build/python/"
	cp -L "$pydir/../libclassfs.so.0" "$out/stage/build/"
	mkdir -p "$out/stage/build/programs/classfsd" "$out/stage/build/programs/classfs-run"
	cp "$classfsd" "$out/stage/build/programs/classfsd/"
	[[ -n $run ]] && cp "$run" "$out/stage/build/programs/classfs-run/"
	chmod -R a+rX "$out/stage"
	tests=$out/stage/tests/python pydir=$out/stage/build/python here=$tests
	classfsd=$out/stage/build/programs/classfsd/classfsd
	[[ -n $run ]] && run=$out/stage/build/programs/classfs-run/classfs-run
fi
[[ -n $join ]] && join=$run
cmd=("$py" -m pytest -q -rs -p no:cacheprovider "$tests" "$@")
[[ -n $join ]] && cmd=("$join" --layout devices -- "${cmd[@]}")
if [[ -n $uid ]]; then
	if ((EUID != 0)); then
		echo "SKIP: changing to uid $uid needs root"
		exit 77
	fi
	cfs_stage_dir=$out/stage
	as_uid=(cfs_as_uid "$uid")
fi
# a sanitized extension in a python3 that is not: its runtime must load
# first, and what leaks is ours only (python3's own allocations at exit
# are not: lsan.supp)
san=()
ext=$(ls "$pydir"/classfs/_classfs*.so)
asan=$(ldd "$ext" | awk '/libasan/ { print $3 }')
if [[ -n $asan ]]; then
	preload=$asan
	ubsan=$(ldd "$ext" | awk '/libubsan/ { print $3 }')
	[[ -n $ubsan ]] && preload="$preload:$ubsan"
	# where every uid the tests switch to reads it (the tree may be 0700)
	chmod 755 "$out"
	install -m 0644 "$here/lsan.supp" "$out/lsan.supp"
	san=(LD_PRELOAD="$preload"
	     ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
	     LSAN_OPTIONS="suppressions=$out/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}")
fi
cd /tmp || exit 1
"${as_uid[@]}" env "${san[@]}" PYTHONPATH="$pydir" CLASSFSD="$classfsd" PYTHONDONTWRITEBYTECODE=1 \
	${run:+CLASSFS_RUN="$run"} \
	"${cmd[@]}" 2>&1 | tee "$out/log"
rc=${PIPESTATUS[0]}
if ((rc == 0)) && ! grep -q ' passed' "$out/log"; then
	echo "SKIP: every test skipped (reasons above)"
	exit 77
fi
exit "$rc"
