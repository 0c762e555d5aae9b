#!/bin/bash
# run-pytest.sh BUILD_PYTHON_DIR CLASSFSD [--join CLASSFS_RUN] [--uid UID] [PYTEST ARGS...]
# Runs the Python package's tests with Debian's python3 and pytest: in an
# environment of the Testbed's own (default), or joined (--join: the whole
# pytest runs under classfs-run), as root or as another uid (--uid).
# Exit 77 (skipped, with the reason) when python3-dev's module, pytest or
# pyudev are missing, or when every test skipped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
pydir=$1 classfsd=$2
shift 2
join="" uid=""
while (($#)); do
	case $1 in
	--join) join=$2; shift 2 ;;
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
cmd=("$py" -m pytest -q -rs -p no:cacheprovider "$here" "$@")
[[ -n $join ]] && cmd=("$join" --layout devices -- "${cmd[@]}")
if [[ -n $uid ]]; then
	if ((EUID != 0)); then
		echo "SKIP: changing to uid $uid needs root"
		exit 77
	fi
	cmd=(setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "${cmd[@]}")
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
	san=(LD_PRELOAD="$preload"
	     ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=2"
	     LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}")
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cd /tmp || exit 1
env "${san[@]}" PYTHONPATH="$pydir" CLASSFSD="$classfsd" PYTHONDONTWRITEBYTECODE=1 \
	"${cmd[@]}" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
if ((rc == 0)) && ! grep -q ' passed' "$out"; then
	echo "SKIP: every test skipped (reasons above)"
	exit 77
fi
exit "$rc"
