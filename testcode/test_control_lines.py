#!/usr/bin/env python3
"""Remote control reads its input a line at a time, not a byte at a time.
unbound-control load_cache and the other commands that read stdin run on
the worker that serves remote control; with a plain (control-use-cert: no)
connection unbound made one recv() per byte of the input, so loading a
dump of a few hundred kB held that worker from its queries for over
100 ms (found by testcode/soak.py).

The test fills the cache with random names under the demo's wildcard,
takes dump_cache, flushes, and loads the dump again while strace counts
unbound's recvfrom() calls: at most 4 per line (plus a few) are allowed.
The loaded cache must then dump the same rrsets, and local_datas given
on stdin must answer, so the line reader still splits lines right.

usage: test_control_lines.py BUILDDIR"""

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

from harness.server import Unbound

NAMES = 2000


def rrset_names(dump):
    """The owner names of the rrsets in a dump_cache output."""
    names, in_rrsets = set(), False
    for line in dump.splitlines():
        if line == "START_RRSET_CACHE":
            in_rrsets = True
        elif line == "END_RRSET_CACHE":
            in_rrsets = False
        elif in_rrsets and line and not line.startswith(";"):
            names.add(line.split()[0])
    return names


def count_recv(pid, action):
    """Run action while strace counts the recvfrom() calls of pid's threads."""
    out = tempfile.mktemp(prefix="steady-strace-")
    st = subprocess.Popen(["strace", "-f", "-c", "-e", "trace=recvfrom",
                           "-o", out, "-p", str(pid)],
                          stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)             # strace attaches to every thread
    try:
        action()
    finally:
        st.send_signal(signal.SIGINT)
        st.wait(30)
    with open(out) as f:
        text = f.read()
    os.unlink(out)
    m = re.search(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?recvfrom$",
                  text, re.M)
    return int(m.group(1)) if m else 0


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fails = []
    rnd = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="steady-ctl-") as tmp:
        ub = Unbound(sys.argv[1], tmp, "\trrset-cache-size: 64m\n\tmsg-cache-size: 32m")
        with ub:
            for _ in range(NAMES):
                ub.query("r%d.example.test." % rnd.randrange(1 << 30))
            dump = ub.control("dump_cache").stdout
            before = rrset_names(dump)
            lines = dump.count("\n")
            ub.control("flush_zone", "example.test.")
            result = {}

            def load():
                result["r"] = subprocess.run(
                    [ub.bin("unbound-control"), "-c", ub.conf, "load_cache"],
                    input=dump, capture_output=True, text=True, timeout=120)

            calls = count_recv(ub.proc.pid, load)
            r = result["r"]
            print("load_cache: %d bytes, %d lines, %d rrsets; unbound made %d "
                  "recvfrom() calls" % (len(dump), lines, len(before), calls))
            if r.returncode != 0 or r.stdout.strip() != "ok":
                fails.append("load_cache: %r %r" % (r.stdout, r.stderr))
            if len(before) < NAMES:
                fails.append("only %d rrsets in the dump" % len(before))
            if calls == 0:
                fails.append("strace counted no recvfrom() at all")
            if calls > 4 * lines + 20:
                fails.append("%d recvfrom() calls for %d lines" % (calls, lines))
            after = rrset_names(ub.control("dump_cache").stdout)
            if not before <= after:
                fails.append("%d rrsets not loaded, e.g. %s" % (
                    len(before - after), sorted(before - after)[:3]))
            data = "".join("l%d.example.test. 300 IN A 198.51.100.%d\n" % (i, i)
                           for i in range(1, 51))
            r = subprocess.run([ub.bin("unbound-control"), "-c", ub.conf,
                                "local_datas"], input=data, capture_output=True,
                               text=True, timeout=60)
            if r.returncode != 0:
                fails.append("local_datas: %r %r" % (r.stdout, r.stderr))
            for i in (1, 25, 50):
                a = ub.query("l%d.example.test." % i)
                got = [x.to_text() for rr in a.answer for x in rr]
                if got != ["198.51.100.%d" % i]:
                    fails.append("l%d.example.test. after local_datas: %r" % (i, got))
    for f in fails:
        print("FAIL " + f)
    print("test_control_lines: %s" % ("FAIL" if fails else "PASS"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
