#!/bin/sh
# Make issue 67's series in build/src from the series before it (branch
# pre-narrow): the interface of authzone_io narrowed in every patch, the
# two rpz-scale patches that end the full transfer after 5 IXFRs moved
# before the authzone-io topic, and the messages that say so.
# usage: rebuild.sh SRCDIR   (a git tree with tags base and pre-narrow)
set -eu
[ $# -eq 1 ] || { echo "usage: rebuild.sh SRCDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
cd "$1"
git checkout -q -B issue67 pre-narrow
export FILTER_BRANCH_SQUELCH_WARNING=1
git filter-branch -f --tree-filter "python3 $here/narrow_io.py ." \
	--msg-filter "python3 $here/narrow_msg.py" base..HEAD >/dev/null
# the second of them changed comments of the thread's, which is not
# there before it: they are set by series_text.py instead
if ! GIT_SEQUENCE_EDITOR="python3 $here/reorder.py" git rebase -q -i base \
	2>/dev/null; then
	# before the topic there is no authzone_io.c
	git rm -q services/authzone_io.c
	[ -z "$(git diff --name-only --diff-filter=U)" ] ||
		{ echo "rebuild: conflicts left" >&2; exit 1; }
	GIT_EDITOR=true git rebase --continue >/dev/null
fi
git filter-branch -f --tree-filter "python3 $here/series_text.py ." \
	--msg-filter "python3 $here/set_messages.py" base..HEAD >/dev/null
echo "rebuilt: $(git rev-parse --short HEAD)"
