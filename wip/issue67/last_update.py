#!/usr/bin/python3
"""git filter-branch --msg-filter: Last-Update of the patches whose diff
issue 67's steps changed, by subject (SUBJECTS, one per line, in the file
named by the environment variable LAST_UPDATE_SUBJECTS), to DATE.

usage: LAST_UPDATE_SUBJECTS=FILE last_update.py DATE < MESSAGE > MESSAGE
"""
import os
import re
import sys

if len(sys.argv) != 2 or "LAST_UPDATE_SUBJECTS" not in os.environ:
    sys.exit(__doc__.strip().split("\n\n")[1])
with open(os.environ["LAST_UPDATE_SUBJECTS"]) as f:
    subjects = set(l.rstrip("\n") for l in f if l.strip())
msg = sys.stdin.read()
if msg.split("\n", 1)[0] in subjects:
    msg = re.sub(r"^Last-Update: .*$", "Last-Update: " + sys.argv[1], msg,
                 flags=re.M)
sys.stdout.write(msg)
