#!/usr/bin/python3
"""Commit messages that say where narrow_io.py moved code.

usage: narrow_msg.py < MESSAGE > MESSAGE
"""
import re
import sys
import textwrap

SUBS = [
    (r"They live in a\s+new unit, services/authzone_io\.c, where the "
     r"auth-zone I/O of the next\s+patches goes\.",
     "auth_zones_get_io_stats, which reads them, starts a new unit, "
     "services/authzone_io.c, for the auth-zone I/O of the next patches."),
    (r"zonemd_needs_lookup and\s+auth_zone_set_zonemd_pending are in "
     r"services/authzone_io\.c\. ", ""),
]

paras = sys.stdin.read().split("\n\n")
for k, p in enumerate(paras):
    q = p
    for old, new in SUBS:
        q = re.sub(old, new, q)
    if q != p:
        paras[k] = textwrap.fill(" ".join(q.split()), width=72,
                                 break_on_hyphens=False)
sys.stdout.write("\n\n".join(paras))
