#!/usr/bin/env python3
"""Issue 43, part 1 (CVE-2026-96405): the work of name decompression in
the parse of one answer. Makes DNS answers of the same size, a normal one
and crafted ones whose names are each the longest chain of compression
pointers that the parser accepts, and times their parse
(bench/parse_ptrs.c: reply_info_parse, as the iterator parses an
upstream's answer) with stock and the fork side by side, alternating.
Prints a Markdown table: microseconds per message and per KB, median
(min-max) of --reps runs, fork/stock, and each message's cost per byte
against the normal answer's; --out writes it.

Messages (--size bytes each, 65535 by default: a TCP answer, or UDP with
EDNS at its largest):
- normal: A records of the question's name, each owner a pointer to it;
- owner-chain: a NULL record whose rdata holds a chain of K pointers, each
  to the one before (the first to a root label), then A records whose
  owner is a pointer to the chain's end: K+1 hops per owner;
- ns-chain: the same chain, then NS records whose owner and rdata name
  both point to its end (the rdata name is decompressed when the reply
  is made).
K is the largest the parser of stock accepts (found here).

usage: flock build/.bench.lock bench/parse_ptrs.py [--size 65535]
       [--reps 5] [--runs 9] [--out FILE]"""

import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lruhash_bench import BUILDS, build, med  # noqa: E402

QNAME = b"\x01a\x00"  # a.
HEADER = 12


def message(kind, size, k):
    """The wire format of a message of kind, at most size bytes."""
    q = QNAME + struct.pack("!HH", 1, 1)  # a. A IN
    count = 0
    body = b""
    pos = HEADER + len(q)
    if kind != "normal":
        # the chain: a root label, then k pointers, each to the one
        # before, in the rdata of a NULL record of the question's name
        rdata_at = pos + 2 + 10
        chain = b"\x00"
        prev = rdata_at
        for _ in range(k):
            chain += struct.pack("!H", 0xC000 | prev)
            prev = rdata_at + len(chain) - 2
        end = prev
        body += struct.pack("!HHHIH", 0xC000 | HEADER, 10, 1, 3600, len(chain)) + chain
        count = 1
        target = end
    else:
        target = HEADER
    while True:
        if kind == "ns-chain":
            rr = struct.pack("!HHHIHH", 0xC000 | target, 2, 1, 3600, 2, 0xC000 | target)
        else:
            rr = struct.pack("!HHHIHI", 0xC000 | target, 1, 1, 3600, 4, count)
        if HEADER + len(q) + len(body) + len(rr) > size:
            break
        body += rr
        count += 1
    hdr = struct.pack("!HHHHHH", 1, 0x8400, 1, count, 0, 0)
    return hdr + q + body


def run(exe, path, runs):
    out = subprocess.run([exe, path, str(runs)], capture_output=True, text=True,
                         check=True).stdout
    return dict(kv.split("=") for kv in out.split())


def longest_chain(exe, d, size):
    """The largest K whose owner-chain message the parser accepts."""
    for k in range(300, 0, -1):
        p = os.path.join(d, "probe")
        with open(p, "wb") as f:
            f.write(message("owner-chain", size, k))
        if run(exe, p, 1)["rcode"] == "0":
            return k
    raise SystemExit("no chain is accepted")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--size", type=int, default=65535)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out")
    a = ap.parse_args()
    exes = {label: build(label, "parse_ptrs") for label in BUILDS}
    with tempfile.TemporaryDirectory() as d:
        k = longest_chain(exes["stock"], d, a.size)
        print("longest chain stock accepts: %d pointers" % k, flush=True)
        kinds = ("normal", "owner-chain", "ns-chain")
        files = {}
        for kind in kinds:
            files[kind] = os.path.join(d, kind)
            with open(files[kind], "wb") as f:
                f.write(message(kind, a.size, k))
        res = {(kind, label): [] for kind in kinds for label in exes}
        rcode = {}
        size = {}
        for _ in range(a.reps):
            for kind in kinds:
                for label, exe in exes.items():
                    r = run(exe, files[kind], a.runs)
                    res[(kind, label)].append(float(r["us"]))
                    rcode[(kind, label)] = r["rcode"]
                    size[kind] = int(r["bytes"])
                    print(kind, label, r, flush=True)
    norm = {label: statistics.median(res[("normal", label)]) / size["normal"]
            for label in exes}
    report = ["# Parse cost of answers with long compression pointer chains "
              "(issue 43, CVE-2026-96405)", "",
              "`flock build/.bench.lock bench/parse_ptrs.py --size %d --reps %d --runs %d`"
              % (a.size, a.reps, a.runs), "",
              "reply_info_parse of one answer, microseconds: median (min-max) of %d "
              "runs, each the median of %d batches of about 20 ms. Chains of %d "
              "pointers (the longest stock accepts). rcode 0: parsed; else the "
              "parse failed (a FORMERR)." % (a.reps, a.runs, k), "",
              "| message | bytes | stock us | fork us | fork/stock | stock per byte "
              "vs normal | fork per byte vs normal | rcode stock / fork |",
              "|---|---|---|---|---|---|---|---|"]
    for kind in kinds:
        s, f = res[(kind, "stock")], res[(kind, "fork")]
        report.append("| %s | %d | %s | %s | %.2f | %.1f× | %.1f× | %s / %s |" % (
            kind, size[kind], med(s), med(f),
            statistics.median(f) / statistics.median(s),
            statistics.median(s) / size[kind] / norm["stock"],
            statistics.median(f) / size[kind] / norm["fork"],
            rcode[(kind, "stock")], rcode[(kind, "fork")]))
    print("\n".join(report))
    if a.out:
        with open(a.out, "w") as fo:
            fo.write("\n".join(report) + "\n")


if __name__ == "__main__":
    main()
