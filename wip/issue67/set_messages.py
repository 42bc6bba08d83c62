#!/usr/bin/python3
"""git filter-branch --msg-filter: the messages of issue 67's reworked
patches, by subject, from msg-*.txt beside this script (the first line of
each is the subject it replaces).

usage: set_messages.py < MESSAGE > MESSAGE
"""
import glob
import os
import sys

msg = sys.stdin.read()
here = os.path.dirname(os.path.abspath(__file__))
for f in sorted(glob.glob(os.path.join(here, "msg-*.txt"))):
    with open(f) as fh:
        new = fh.read()
    subject = new.split("\n", 1)[0]
    if msg.split("\n", 1)[0] == subject.split(" => ")[0]:
        msg = new.split("\n", 1)[1] if " => " in subject else new
        if " => " in subject:
            msg = subject.split(" => ")[1] + "\n" + msg
sys.stdout.write(msg)
