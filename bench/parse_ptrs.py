#!/usr/bin/env python3
"""Issue 43 (CVE-2026-96405): the work of name decompression in the parse
of one answer. Makes DNS answers of the same size, a normal one
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
K is the largest that each build's parser accepts for that kind of
message (found here), so each build parses the worst one it lets through;
the fork's K is set by its bound on the pointers of the whole message.
- stock's owner-chain: stock's owner-chain message, parsed by both (what
  the fork's refusal costs).
- encoder-chain: K CNAME records whose names each add a label to the one
  before, as a compressor writes them, then A records of the last name
  (K+1 hops each; issue 66 finding 20); K the largest each build accepts;
- encoder-chain 16: the same with K = 16 for both builds, what a bound
  of 16 hops a name alone would let through;
- owner-chain alt: owner-chain whose owners are, in turn, a pointer to
  the chain's end and a pointer to the question name, so that each is
  walked (a parser need not walk an owner that is the same pointer as
  the one before); K the largest each build accepts;
- ptr: PTR records whose rdata is a pointer to the question's name;
- ptr-labels: PTR records whose rdata is a pointer to one name of K
  one-octet labels (issue 66 finding 19): one hop each, K labels; K the
  largest each build accepts, up to 127 (255 octets).
harness/ptrchain.py makes the messages (test_parse_ptrs.py uses them too).

usage: flock build/.bench.lock bench/parse_ptrs.py [--size 65535]
       [--reps 5] [--runs 9] [--out FILE]"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lruhash_bench import BUILDS, build, med  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "testcode"))
from harness.ptrchain import answer as message  # noqa: E402


def run(exe, path, runs):
    out = subprocess.run([exe, path, str(runs)], capture_output=True, text=True,
                         check=True).stdout
    return dict(kv.split("=") for kv in out.split())


def shape(kind, size, k):
    """The message of a kind of the table (harness/ptrchain.py's answer)."""
    kind = kind.replace("stock's ", "")
    return message(kind.split()[0], size, k, alternate=kind.endswith(" alt"))


def longest_chain(exe, d, size, kind, top=300):
    """The largest K up to top whose message of kind the parser accepts,
    or 0."""
    for k in range(top, 0, -1):
        p = os.path.join(d, "probe")
        with open(p, "wb") as f:
            f.write(shape(kind, size, k))
        if run(exe, p, 1)["rcode"] == "0":
            return k
    return 0


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("--size", type=int, default=65535)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out")
    a = ap.parse_args()
    exes = {label: build(label, "parse_ptrs") for label in BUILDS}
    with tempfile.TemporaryDirectory() as d:
        kinds = ("normal", "owner-chain", "ns-chain", "stock's owner-chain",
                 "owner-chain alt", "encoder-chain", "encoder-chain 16", "ptr",
                 "ptr-labels")
        k = {(kind, label): longest_chain(exe, d, a.size, kind)
             for kind in kinds[1:3] for label, exe in exes.items()}
        for label, exe in exes.items():
            k[("normal", label)] = 0
            k[(kinds[3], label)] = k[("owner-chain", "stock")]
            k[("owner-chain alt", label)] = longest_chain(exe, d, a.size,
                                                          "owner-chain alt")
            k[("encoder-chain", label)] = longest_chain(exe, d, a.size,
                                                        "encoder-chain", 40)
            k[("encoder-chain 16", label)] = 16
            k[("ptr", label)] = 0
            k[("ptr-labels", label)] = longest_chain(exe, d, a.size,
                                                     "ptr-labels", 127)
        print("longest chains accepted: %s" % k, flush=True)
        files = {}
        for kind in kinds:
            for label in exes:
                files[(kind, label)] = os.path.join(d, "%d.%s" % (
                    kinds.index(kind), label))
                with open(files[(kind, label)], "wb") as f:
                    f.write(shape(kind, a.size, k[(kind, label)]))
        res = {(kind, label): [] for kind in kinds for label in exes}
        rcode = {}
        size = {}
        for _ in range(a.reps):
            for kind in kinds:
                for label, exe in exes.items():
                    r = run(exe, files[(kind, label)], a.runs)
                    res[(kind, label)].append(float(r["us"]))
                    rcode[(kind, label)] = r["rcode"]
                    size[(kind, label)] = int(r["bytes"])
                    print(kind, label, r, flush=True)
    norm = {label: statistics.median(res[("normal", label)]) /
            size[("normal", label)] for label in exes}
    report = ["# Parse cost of answers with long compression pointer chains "
              "(issue 43, CVE-2026-96405)", "",
              "`flock build/.bench.lock bench/parse_ptrs.py --size %d --reps %d --runs %d`"
              % (a.size, a.reps, a.runs), "",
              "reply_info_parse of one answer, microseconds: median (min-max) of %d "
              "runs, each the median of %d batches of about 20 ms. Each build "
              "parses, of each kind, the message with the longest chains it "
              "accepts (K pointers; a name pointing to the chain's end takes "
              "K+1 hops). rcode 0: parsed; else the parse failed (a FORMERR)."
              % (a.reps, a.runs), "",
              "| message | K stock / fork | bytes stock / fork | stock us | fork us | fork/stock | stock per byte "
              "vs normal | fork per byte vs normal | rcode stock / fork |",
              "|---|---|---|---|---|---|---|---|---|"]
    for kind in kinds:
        s, f = res[(kind, "stock")], res[(kind, "fork")]
        report.append("| %s | %d / %d | %d / %d | %s | %s | %.2f | %.1f× | %.1f× "
                      "| %s / %s |" % (
            kind, k[(kind, "stock")], k[(kind, "fork")], size[(kind, "stock")], size[(kind, "fork")], med(s), med(f),
            statistics.median(f) / statistics.median(s),
            statistics.median(s) / size[(kind, "stock")] / norm["stock"],
            statistics.median(f) / size[(kind, "fork")] / norm["fork"],
            rcode[(kind, "stock")], rcode[(kind, "fork")]))
    print("\n".join(report))
    if a.out:
        with open(a.out, "w") as fo:
            fo.write("\n".join(report) + "\n")


if __name__ == "__main__":
    main()
