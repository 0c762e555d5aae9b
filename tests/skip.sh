#!/bin/sh
# skip.sh REASON... - a test that cannot run here: says why, exits 77
# (meson's SKIP), so that a missing optional input is reported, not hidden.
echo "SKIP: $*"
exit 77
