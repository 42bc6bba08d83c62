#!/usr/bin/env python3
"""Print the order in which a daemon took its locks, from the lock
checker's trace files (ublocktrace.<thread>, written by a build with
--enable-lock-checks; testcode/checklocks.c): for each pair of locks,
by the file and line that created them, that one was held while the
other was taken, with where. upstream's lock-verify reports only the
cycles; this shows the whole order, for the documentation of a unit's
locks (doc/authzone-io.md) and to see which pairs a test exercised.

Only pairs where both locks were created in one of the given files are
printed (all pairs without --files). Locks created in the same place
(the zone locks of all zones, say) are one node.

usage: lock_order.py [--files F1,F2,...] TRACEFILE..."""

import argparse
import collections
import struct
import sys


def read_str(f):
    """A string ended by a zero octet."""
    out = bytearray()
    while True:
        c = f.read(1)
        if not c:
            raise ValueError("trace ends in a string")
        if c == b"\0":
            return out.decode(errors="replace")
        out += c


def read_trace(path, created, edges):
    """Add the locks path creates to created ({(thr, inst): "file:line"})
    and its lock orders to edges ([(held id, taken id, "file:line")])."""
    with open(path, "rb") as f:
        f.read(8 + 4 + 4)  # time_t, thread number, pid
        while True:
            b = f.read(4)
            if len(b) < 4:
                return
            fst = struct.unpack("=i", b)[0]
            if fst == -1:
                thr, inst = struct.unpack("=ii", f.read(8))
                fname = read_str(f)
                line = struct.unpack("=i", f.read(4))[0]
                created[(thr, inst)] = "%s:%d" % (fname.replace("../src/", ""), line)
            else:
                prev_inst, now_thr, now_inst = struct.unpack("=iii", f.read(12))
                fname = read_str(f)
                line = struct.unpack("=i", f.read(4))[0]
                edges.append(((fst, prev_inst), (now_thr, now_inst),
                              "%s:%d" % (fname.replace("../src/", ""), line)))


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--files", default="")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    files = [f for f in a.files.split(",") if f]
    created, edges = {}, []
    for t in a.traces:
        read_trace(t, created, edges)
    pairs = collections.defaultdict(set)
    for held, taken, where in edges:
        h, n = created.get(held, "?"), created.get(taken, "?")
        if files and not (any(h.startswith(x + ":") for x in files) and
                          any(n.startswith(x + ":") for x in files)):
            continue
        pairs[(h, n)].add(where)
    for (h, n), where in sorted(pairs.items()):
        print("%s  before  %s   (taken at %s)" % (h, n, ", ".join(sorted(where)[:3])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
