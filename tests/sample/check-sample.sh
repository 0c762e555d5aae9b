#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-sample.sh RECORD - check that the sample machine's record keeps the
# rules docs/sample.md promises: well-formed paragraphs, device numbers that
# agree everywhere they are written, partitions inside their disk and not
# overlapping, DEVLINKS equal to the S: lines, unique ifindex, links that
# resolve inside the record.
#
# Plain awk (mawk or gawk), no tree, no mount: it checks the data only.
set -euo pipefail

record=${1:-}
if [[ -z $record || ! -r $record ]]; then
	echo "usage: $0 RECORD" >&2
	exit 2
fi

# One pass to collect, then checks in END. Keys are "path SEP name".
awk '
function fail(msg) { printf "FAIL: %s\n", msg; bad++ }
function dirname(p) { sub(/\/[^\/]*$/, "", p); return p }
function basename(p) { sub(/^.*\//, "", p); return p }
# resolve a relative link text against the directory holding the link
function resolve(dir, text,   n, parts, i, out) {
	out = dir
	n = split(text, parts, "/")
	for (i = 1; i <= n; i++) {
		if (parts[i] == "..") out = dirname(out)
		else if (parts[i] != "" && parts[i] != ".") out = out "/" parts[i]
	}
	return out
}
# C-unescape the few escapes sysfs values use
function unesc(v) { gsub(/\\n/, "\n", v); gsub(/\\\\/, "\\", v); return v }
# the value of a decimal A: attribute ("" when absent)
function num(p, k,   v) { v = A[p SUBSEP k]; sub(/\n$/, "", v); return v }

BEGIN { SUBSEP = "\034"; ndev = 0 }

/^$/ { cur = ""; next }
/^P: / {
	if (cur != "") fail("line " NR ": P: inside the paragraph of " cur)
	cur = substr($0, 4)
	if (cur !~ /^\/devices\//) fail("line " NR ": path does not start with /devices/: " cur)
	if (cur in isdev) fail("line " NR ": device recorded twice: " cur)
	isdev[cur] = 1; order[++ndev] = cur
	next
}
{
	if (cur == "") { fail("line " NR ": not inside a device paragraph: " $0); next }
	tag = substr($0, 1, 3); rest = substr($0, 4)
	if (tag == "N: " || tag == "S: ") {
		if (tag == "N: ") { v = rest; sub(/=.*/, "", v); N[cur] = v }
		else {
			# (mawk creates S[cur] before the right side runs: test first)
			had = (cur in S)
			S[cur] = had ? S[cur] " /dev/" rest : "/dev/" rest
		}
		next
	}
	if (tag != "E: " && tag != "A: " && tag != "H: " && tag != "L: ") {
		fail("line " NR ": unknown line type: " $0); next
	}
	eq = index(rest, "=")
	if (eq < 2) { fail("line " NR ": no KEY=VALUE: " $0); next }
	k = substr(rest, 1, eq - 1); v = substr(rest, eq + 1)
	if ((cur SUBSEP tag k) in seen) fail("line " NR ": " tag k " twice in " cur)
	seen[cur SUBSEP tag k] = 1
	if (tag == "E: ") E[cur SUBSEP k] = v
	else if (tag == "A: ") A[cur SUBSEP k] = unesc(v)
	else if (tag == "L: ") { L[cur SUBSEP k] = v; links[++nlinks] = cur SUBSEP k }
	else if (tag == "H: " && v !~ /^([0-9A-F][0-9A-F])*$/) fail("line " NR ": H: value is not hex pairs")
}

END {
	for (i = 1; i <= ndev; i++) {
		p = order[i]
		sub_ = E[p SUBSEP "SUBSYSTEM"]
		if (sub_ == "") fail(p ": no E: SUBSYSTEM")

		# device numbers: dev, MAJOR/MINOR, DEVNAME and N: agree
		dev = A[p SUBSEP "dev"]
		if (dev != "") {
			if (dev !~ /^[0-9]+:[0-9]+\n$/) fail(p ": dev is not \"M:m\\n\": " dev)
			sub(/\n$/, "", dev)
			if (dev != E[p SUBSEP "MAJOR"] ":" E[p SUBSEP "MINOR"])
				fail(p ": dev " dev " but MAJOR:MINOR " E[p SUBSEP "MAJOR"] ":" E[p SUBSEP "MINOR"])
			if (!(p in N)) fail(p ": dev without N:")
			else if (E[p SUBSEP "DEVNAME"] != "/dev/" N[p])
				fail(p ": DEVNAME " E[p SUBSEP "DEVNAME"] " but N: " N[p])
			type = (sub_ == "block") ? "b" : "c"
			if ((type dev) in devt) fail(p ": " type " " dev " also used by " devt[type dev])
			devt[type dev] = p
		} else if (E[p SUBSEP "MAJOR"] != "") fail(p ": MAJOR without dev")

		# DEVLINKS is exactly the S: lines
		if (E[p SUBSEP "DEVLINKS"] != S[p])
			fail(p ": DEVLINKS \"" E[p SUBSEP "DEVLINKS"] "\" but S: lines \"" S[p] "\"")

		# net: unique ifindex, repeated in the properties
		if (sub_ == "net") {
			ifx = num(p, "ifindex")
			if (ifx == "" || ifx != E[p SUBSEP "IFINDEX"]) fail(p ": ifindex " ifx " but IFINDEX " E[p SUBSEP "IFINDEX"])
			if (ifx in ifidx) fail(p ": ifindex " ifx " also used by " ifidx[ifx])
			ifidx[ifx] = p
			if (E[p SUBSEP "INTERFACE"] != basename(p)) fail(p ": INTERFACE " E[p SUBSEP "INTERFACE"])
		}

		# a class device nested in another of its class is named after it
		# (partitions after their disk) and, but for partitions, links to it
		par = dirname(p)
		if (par in isdev && E[par SUBSEP "SUBSYSTEM"] == sub_ && sub_ == "block" &&
		    index(basename(p), basename(par)) != 1)
			fail(p ": partition not named after its disk")

		# partitions: numbered, inside their disk, recorded as udev saw them
		if (E[p SUBSEP "DEVTYPE"] == "partition") {
			if (!(par in isdev) || E[par SUBSEP "DEVTYPE"] != "disk") { fail(p ": partition outside a disk"); continue }
			start = num(p, "start"); size = num(p, "size"); disk = num(par, "size")
			if (start == "" || size == "" || disk == "") { fail(p ": start/size missing"); continue }
			start += 0; size += 0; disk += 0
			if (num(p, "partition") != E[p SUBSEP "PARTN"]) fail(p ": partition != PARTN")
			if (start < 34 || start + size > disk - 33)
				fail(p ": sectors " start "+" size " outside the usable area of a " disk "-sector GPT disk")
			if (E[p SUBSEP "ID_PART_ENTRY_OFFSET"] != start || E[p SUBSEP "ID_PART_ENTRY_SIZE"] != size)
				fail(p ": ID_PART_ENTRY_OFFSET/SIZE differ from start/size")
			if (E[p SUBSEP "ID_PART_ENTRY_DISK"] != E[par SUBSEP "MAJOR"] ":" E[par SUBSEP "MINOR"])
				fail(p ": ID_PART_ENTRY_DISK is not its disk")
			if (("device" SUBSEP p) in seen || (p SUBSEP "L: device") in seen) fail(p ": a partition has no device link")
			np[par]++; ps[par SUBSEP np[par]] = start; pe[par SUBSEP np[par]] = start + size
			nparts++
		}
	}
	# partitions of one disk do not overlap
	for (d in np)
		for (i = 1; i <= np[d]; i++)
			for (j = i + 1; j <= np[d]; j++)
				if (ps[d SUBSEP i] < pe[d SUBSEP j] && ps[d SUBSEP j] < pe[d SUBSEP i])
					fail(d ": partitions " i " and " j " overlap")

	# links resolve inside the record: device -> a recorded device,
	# driver -> /bus/SUBSYSTEM/drivers/NAME with NAME = E: DRIVER
	for (i = 1; i <= nlinks; i++) {
		split(links[i], kv, SUBSEP); p = kv[1]; k = kv[2]
		t = resolve("/sys" p, L[links[i]])
		if (k == "device") {
			if (!(substr(t, 5) in isdev)) fail(p ": device link " L[links[i]] " -> " t " is not a recorded device")
		} else if (k == "driver") {
			want = "/sys/bus/" E[p SUBSEP "SUBSYSTEM"] "/drivers/" E[p SUBSEP "DRIVER"]
			if (t != want) fail(p ": driver link " L[links[i]] " -> " t ", want " want)
		}
	}
	# every class device with a dev number in /devices/virtual has no device link
	for (i = 1; i <= ndev; i++)
		if (order[i] ~ /^\/devices\/virtual\// && ((order[i] SUBSEP "device") in L))
			fail(order[i] ": a virtual device with a device link")

	if (ndev == 0) fail("no devices")
	if (bad) { printf "%d problem(s) in %d devices\n", bad, ndev; exit 1 }
	printf "PASS: %d devices, %d partitions, %d links checked\n", ndev, nparts, nlinks
}' "$record"
