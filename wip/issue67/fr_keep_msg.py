#!/usr/bin/env python3
"""usage: fr_keep_msg.py < MESSAGE > MESSAGE

git filter-branch --msg-filter for issue 67, item 1 (session 26): patch
0077's message says that the I/O thread puts the data kept in place under
fast_reload's locks, and that the reload fails without memory for the
comparison."""
import sys

msg = sys.stdin.read()
subject = msg.split("\n", 1)[0]
CHANGES = [
("""Queries are answered from the zones served meanwhile. Under the locks,
fr_auth_zones_keep_newer read locks each zone served and looks again""",
"""Queries are answered from the zones served meanwhile. Under the locks,
auth_zones_fast_reload_keep read locks each zone served and looks again"""),
("""(without the I/O thread) now gives the zone a new data version, so that
a change it makes meanwhile is seen. Without memory for the comparison
the zones are compared under the locks, as before (logged).
""", """(without the I/O thread) now gives the zone a new data version, so that
a change it makes meanwhile is seen. Without memory for the comparison
the reload fails with an error, before it has changed anything.

Under the locks, the data kept is put in place by the auth-zone I/O
thread, which waits between jobs, while fast_reload waits for it
(auth_zones_io_fast_reload_keep): while it runs, the thread is the one
writer of zone data. The look under the locks is
auth_zones_fast_reload_keep in authzone.c, run by the thread or, without
it, by fast_reload; the pairs of zones compared are its struct
auth_zone_keep.
"""),
("""right after the comparison while the worker transfers a newer serial,
which must be kept (it was not, with the data version not compared
again under the locks).
""", """right after the comparison while the worker transfers a newer serial,
which must be kept (it was not, with the data version not compared
again under the locks). test_zone_fast_reload_rpz.py also checks that
the kept data is put in place by the I/O thread (the log line that
keeps it was the fast_reload thread's, thread 4, before).
"""),
]
if subject.startswith("fast_reload: compare the auth zones, and make the "
                      "RPZ policies of kept data"):
    for old, new in CHANGES:
        if msg.count(old) != 1:
            sys.exit("fr_keep_msg.py: 0077's message has changed")
        msg = msg.replace(old, new)
sys.stdout.write(msg)
