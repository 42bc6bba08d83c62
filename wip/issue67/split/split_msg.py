#!/usr/bin/env python3
"""usage: split_msg.py < MESSAGE > MESSAGE

git filter-branch --msg-filter for issue 67's split of the apply in
place: patch 0069's message says that the in-place apply shares its start
and end with the difference's apply."""
import sys

msg = sys.stdin.read()
subject = msg.split("\n", 1)[0]
old = """The man page's auth-zone-io-thread says when an AXFR is applied as
its difference, and that an apply in place holds the zone's lock for
its whole time.
"""
new = """The apply in place is split into its start and end
(auth_io_inplace_begin: lock the zone, take the transfer state;
auth_io_inplace_end: the SOA, the ZONEMD check that needs no lookups, the
transfer state and the write), shared by auth_io_apply_inplace (the
transfer's own RRs) and auth_io_apply_difference, not chosen by a flag.

The man page's auth-zone-io-thread says when an AXFR is applied as
its difference, and that an apply in place holds the zone's lock for
its whole time.
"""
if subject == ("authzone_io: apply an AXFR of a zone held as its "
               "difference to it"):
    if msg.count(old) != 1:
        sys.exit("split_msg.py: 0069's message has changed")
    msg = msg.replace(old, new)
sys.stdout.write(msg)
