#!/bin/sh
# Make issue 67's second step in build/src: one owner for a zone's ZONEMD
# state (zonemd_state.py on every tree, zonemd_msg.py on the messages),
# from the series of main 1eeb07b (session 24).
# usage: zonemd_state.sh SRCDIR FROM   (FROM: the branch or commit to start
#        from; the result is branch zonemd-state)
set -eu
[ $# -eq 2 ] || { echo "usage: zonemd_state.sh SRCDIR FROM" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
cd "$1"
git checkout -q -B zonemd-state "$2"
export FILTER_BRANCH_SQUELCH_WARNING=1
log=$(mktemp)
git filter-branch -f --tree-filter "python3 $here/zonemd_state.py . 2>>$log || true" \
	--msg-filter "python3 $here/zonemd_msg.py" base..HEAD >/dev/null
if [ -s "$log" ]; then
	cat "$log" >&2
	rm -f "$log"
	echo "zonemd_state: sites left, see above" >&2
	exit 1
fi
rm -f "$log"
echo "zonemd-state: $(git rev-parse --short HEAD)"
