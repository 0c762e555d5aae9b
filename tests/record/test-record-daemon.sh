#!/bin/bash
# test-record-daemon.sh CLASSFSD CLASSCTL CLASSFS-RUN - whatever classfsd
# accepts, `classctl save` writes a record that `classctl load` accepts and
# that loads to the same tree (saved again: the same bytes), and
# `classfs-run --socket` can read the daemon's tree back.  Attribute names
# given twice (`x` twice, `x` and `x/y`) or named like an entry the tree
# makes (`uevent`, `dev`, `subsystem`, `device`) are refused with a message
# naming them, to root and to uid 65534 (the daemon runs with --group
# nogroup --mount-options allow_other), and change nothing.  Then random
# class devices from both uids, some refused, renames, save, load, save.
# Runs in a private mount namespace; daemons stopped by PID, mounts
# removed, the temporary directory deleted whatever happens.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../stage.sh
source "$(dirname "$0")/../stage.sh"
cfs_enter "$@"
shift
classfsd=$1 classctl=$2 classfs_run=$3

# as WHO COMMAND... - as root or as nobody
as() {
	if [[ $1 == nobody ]]; then
		cfs_as_uid 65534 "${@:2}"
	else
		"${@:2}"
	fi
}

start_daemon a --group nogroup --mount-options allow_other || exit 1
sock=$tmp/a/sock
"$classctl" --socket "$sock" mkclass v || exit 1
chmod 0755 "$tmp/a"
"$classctl" --socket "$sock" save >"$tmp/empty" || exit 1
"$classctl" --socket "$sock" tree >"$tmp/tree0" || exit 1

# refused WHO WHAT-THE-MESSAGE-SAYS CLASSCTL-ADD-ARGS...
refused() {
	local who=$1 says=$2 out
	shift 2
	if out=$(as "$who" "$classctl" --socket "$sock" add "$@" 2>&1); then
		bad "$who: add $* was accepted"
	elif [[ $out != *"$says"* ]]; then
		bad "$who: add $*: message '$out' does not say '$says'"
	else
		ok "$who: add $*: $out"
	fi
}
for who in root nobody; do
	# the issue's
	refused "$who" "the tree makes 'dev' itself" v Y --dev 8:1 --attr dev=evil --attr uevent=EVIL
	refused "$who" "the tree makes 'uevent' itself" v Y --attr uevent=EVIL
	refused "$who" "the tree makes 'dev' itself" v Y --attr dev=8:1
	refused "$who" "the tree makes 'subsystem' itself" v Y --attr subsystem=x
	refused "$who" "the tree makes 'subsystem' itself" v Y --attr subsystem/x=1
	refused "$who" "attribute a given twice" v Y --attr a=1 --attr a=2
	refused "$who" "attribute x and directory x/ share a name" v Y --attr x=1 --attr x/y=2
	refused "$who" "attribute x and directory x/ share a name" v Y --attr x/y=1 --attr x-1=2 --attr x=3
	refused "$who" "attribute d/y given twice" v Y --attr d/y=1 --attr d/z=1 --attr d/y=2
	# a class the add would make: not made either
	refused "$who" "attribute a given twice" "new$who" Y --attr a=1 --attr a=2
done
"$classctl" --socket "$sock" save >"$tmp/after" || bad "save failed"
cmp -s "$tmp/empty" "$tmp/after" || bad "refused adds changed the tree: $(diff "$tmp/empty" "$tmp/after")"
"$classctl" --socket "$sock" tree >"$tmp/tree1" || bad "tree failed"
cmp -s "$tmp/tree0" "$tmp/tree1" || bad "refused adds made a class: $(diff "$tmp/tree0" "$tmp/tree1")"

# random class devices from both uids: attribute names from a pool that
# holds the refused ones (the tree's names, at any depth) and every kind
# of byte a name may hold ('=', blanks, ':', '\\', non-ASCII); parents,
# numbers and types
RANDOM=12
attrs=(x x/y y power/control power/x uevent dev subsystem device size d/e a=b 'sp ace' c:d
	'café' 'b\\x3d' e=f/g=h d/dev g/uevent g/h/device)
# (no "block": classfs-run's /dev has a directory of that name for its
# /dev/block/M:m links, and a node there fails it)
names=(sda sda1 dev uevent pci x virtual a=b 'n m' p:q 'café' 'x\\y' '=')
# values of every kind: blanks, '=', backslashes, newlines, non-ASCII
values=(v 'a=b' 'two words' 'back\\slash' $'line\nline' 'café' '' '=' ':')
declare -A made=()
accepted=0 refusedn=0
# the issue's: a device named a=b with a number (its node's N: line)
if "$classctl" --socket "$sock" add v 'a=b' --dev 8:250 --attr 'k=v=w' >/dev/null; then
	made[v/a=b]=root
	accepted=$((accepted + 1))
else
	bad "add v a=b --dev 8:250 was refused"
fi
for i in $(seq 80); do
	who=root
	((RANDOM % 3 == 0)) && who=nobody
	cls=v
	((RANDOM % 2)) && cls=block
	name=n$i
	((RANDOM % 4 == 0)) && name=${names[RANDOM % ${#names[@]}]}
	args=("$cls" "$name")
	((RANDOM % 2)) && args+=(--dev "8:$i")
	((RANDOM % 3 == 0)) && args+=(--type disk)
	parents=("${!made[@]}")
	if ((${#parents[@]} && RANDOM % 3 == 0)); then
		p=${parents[RANDOM % ${#parents[@]}]}
		[[ ${p%%/*} == "$cls" && ${made[$p]} == "$who" ]] && args+=(--parent "${p#*/}")
	fi
	for ((k = RANDOM % 4; k > 0; k--)); do
		args+=(--attr "${attrs[RANDOM % ${#attrs[@]}]}=${values[RANDOM % ${#values[@]}]}$RANDOM")
	done
	if as "$who" "$classctl" --socket "$sock" add "${args[@]}" >/dev/null 2>&1; then
		made[$cls/$name]=$who
		accepted=$((accepted + 1))
	else
		refusedn=$((refusedn + 1))
	fi
done
echo "random adds: $accepted accepted, $refusedn refused"
((accepted > 20 && refusedn > 10)) || bad "too few of either to mean anything"
# attributes made (set --create) and written (set) by each device's owner
# and by the other uid (refused), names and values from the pools
created=0 createrefused=0
for i in $(seq 120); do
	keys=("${!made[@]}")
	k=${keys[RANDOM % ${#keys[@]}]}
	who=${made[$k]}
	((RANDOM % 5 == 0)) && who=$([[ $who == root ]] && echo nobody || echo root)
	a=${attrs[RANDOM % ${#attrs[@]}]}
	((RANDOM % 2)) && a=n$i/$a
	v=${values[RANDOM % ${#values[@]}]}
	op=(set --create)
	((RANDOM % 3 == 0)) && op=(set)
	if as "$who" "$classctl" --socket "$sock" "${op[@]}" "${k%%/*}" "${k#*/}" "$a" "$v" \
		>/dev/null 2>&1; then
		created=$((created + 1))
	else
		createrefused=$((createrefused + 1))
	fi
done
echo "random sets: $created accepted, $createrefused refused"
((created > 20 && createrefused > 10)) || bad "too few sets of either to mean anything"
# renames by their owners, to names of the pool
for i in $(seq 10); do
	keys=("${!made[@]}")
	k=${keys[RANDOM % ${#keys[@]}]}
	new=${names[RANDOM % ${#names[@]}]}
	if as "${made[$k]}" "$classctl" --socket "$sock" rename "${k%%/*}" "${k#*/}" "$new" \
		>/dev/null 2>&1; then
		made[${k%%/*}/$new]=${made[$k]}
		unset "made[$k]"
	fi
done

"$classctl" --socket "$sock" save >"$tmp/s1" || bad "save failed"
start_daemon b || exit 1
if ! out=$("$classctl" --socket "$tmp/b/sock" load "$tmp/s1" 2>&1); then
	bad "load of the save failed: $out"
fi
"$classctl" --socket "$tmp/b/sock" save >"$tmp/s2" || bad "second save failed"
cmp -s "$tmp/s1" "$tmp/s2" || bad "save -> load -> save differs: $(diff "$tmp/s1" "$tmp/s2" | head -20)"
# every kind of name made it into the record, escaped where it must be
for want in 'A: .*a\\x3db=' 'A: .*sp ace=' 'A: .*c:d=' $'A: .*caf\xc3\xa9=' '^P: .*/a=b$' '^N: a\\x3db$'; do
	grep -qE "$want" "$tmp/s1" || bad "the save holds no line matching '$want'"
done
# and no name the tree makes, at any depth, as a file of a client's
if grep -E '^A: ([^=]*/)?(uevent|device|subsystem)=|^A: [^=]+/dev=|^[LH]: ([^=]*/)?(uevent|dev)=' "$tmp/s1"; then
	bad "a reserved name was made"
fi
# the loaded tree reads as the first: the same values through the socket
for k in "${!made[@]}"; do
	a=$("$classctl" --socket "$sock" info "${k%%/*}" "${k#*/}" 2>&1)
	b=$("$classctl" --socket "$tmp/b/sock" info "${k%%/*}" "${k#*/}" 2>&1)
	[[ $a == "$b" ]] || bad "info $k differs after the load: $(diff <(echo "$a") <(echo "$b") | head -5)"
done
[[ $(grep -c '^P:' "$tmp/s1") == "$accepted" ]] || bad "the save holds $(grep -c '^P:' "$tmp/s1") devices, $accepted were accepted"

# classfs-run joins the daemon: it reads its tree back (not a TSan build
# of it: the runtime's own thread makes its setns(CLONE_NEWNS) EINVAL)
if grep -qF __tsan_init "$classfs_run"; then
	echo "skip classfs-run --socket: a ThreadSanitizer build cannot enter namespaces"
elif out=$("$classfs_run" --socket "$sock" -- true 2>&1); then
	ok "classfs-run --socket reads the tree back"
else
	bad "classfs-run --socket: $out"
fi
cfs_summary
