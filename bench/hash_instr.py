#!/usr/bin/env python3
"""Instructions per query of the whole server, and of its cache hashing,
with cache-hash: lookup3 and with cache-hash: xxh3 (issue: xxHash (XXH3) as
a selectable, seeded hash for cache keys).

On a shared 2-CPU machine the max-rate qps of bench/hash_qps.py varies by
+-25% from run to run, far more than hashing can change it. Instruction
counts do not depend on the other load: the server runs under valgrind
--tool=callgrind (one thread, loopback, the demo config of
testcode/harness/server.py), the counters are zeroed after the warm-up, dnsperf
sends a fixed number of queries at a low fixed rate, and the counters are
dumped. Reported per completed query: all instructions of the server, and
the instructions in the cache hash functions (self cost of the functions
in HASH_FUNCS: query_info_hash, rrset_key_hash, rrset_key_hash_rest,
pkt_hash_rrset, dname_query_hash, dname_pkt_hash, dname_xxh3_hash,
key_entry_hash, cache_hash, cache_hash_xxh3_fold, hashlittle and the
static helpers that are not inlined).

  cache-hit   1000 names under the demo zone's wildcard, cached by a
              warm-up pass; 10000 queries at 1000 qps
  udp-random  random labels under the wildcard (a miss each: iterator,
              msg and rrset cache inserts); 3000 queries at 300 qps

Take the benchmark lock: flock build/.bench.lock bench/hash_instr.py ..."""

import argparse
import glob
import os
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testcode"))
from harness.load import dnsperf  # noqa: E402
from harness.server import Unbound, wait_running  # noqa: E402

HASHES = ("lookup3", "xxh3")
# functions whose self cost is hashing for the caches
HASH_FUNCS = ("query_info_hash", "rrset_key_hash", "rrset_key_hash_rest",
              "pkt_hash_rrset", "pkt_hash_rrset_first", "pkt_hash_rrset_rest",
              "dname_query_hash", "dname_pkt_hash", "dname_xxh3_hash",
              "dname_hash_len", "has_upper", "upper8", "lowercase_copy",
              "key_entry_hash", "hash_addr", "hash_infra",
              "cache_hash", "cache_hash_xxh3_fold", "hashlittle")


class GrindUnbound(Unbound):
    """The server under callgrind."""

    def start(self, timeout=120):
        subprocess.run([self.bin("unbound-checkconf"), self.conf], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.logf = open(self.log, "w")
        self.cgout = os.path.join(self.rundir, "cg.out")
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + self.cgout,
             self.bin("unbound"), "-d", "-c", self.conf],
            stdout=self.logf, stderr=subprocess.STDOUT)
        if wait_running(self, timeout):
            return self
        self.stop()
        raise RuntimeError("unbound did not come up:\n" + self.read_log())




def costs(cgfile):
    """total Ir and self Ir per function name of a callgrind dump."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", cgfile],
                         capture_output=True, text=True).stdout
    total = None
    funcs = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+PROGRAM TOTALS", line) or \
            re.match(r"\s*([\d,]+)\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?\S*:(\S+?)(?:\'\d+)?\s", line + " ")
        if m:
            name = m.group(2)
            funcs[name] = funcs.get(name, 0) + int(m.group(1).replace(",", ""))
    return total, funcs


def one(build, hashname, workload, files):
    extra = "\tnum-threads: 1\n\tverbosity: 1\n\tcache-hash: %s\n" % hashname
    with tempfile.TemporaryDirectory(prefix="steady-hashinstr-") as rundir:
        ub = GrindUnbound(build, rundir, extra_conf=extra)
        ub.start()
        try:
            if workload == "cache-hit":
                dnsperf(ub.port, files["hit"], 30, 200, clients=4, outstanding=100, timeout=5, once=True)    # warm: each name once
                subprocess.run(["callgrind_control", "-z", str(ub.proc.pid)],
                               capture_output=True, check=True)
                done = dnsperf(ub.port, files["hit"], 10, 1000, clients=4, outstanding=100, timeout=5)["completed"]
            else:
                subprocess.run(["callgrind_control", "-z", str(ub.proc.pid)],
                               capture_output=True, check=True)
                done = dnsperf(ub.port, files["random"], 10, 300, clients=4, outstanding=100, timeout=5)["completed"]
            subprocess.run(["callgrind_control", "-d", str(ub.proc.pid)],
                           capture_output=True, check=True)
            time.sleep(1)
        finally:
            ub.stop(timeout=120)
        if "cache hash function: %s" % hashname not in ub.read_log():
            raise RuntimeError("server did not use %s:\n%s" % (hashname, ub.read_log()[-2000:]))
        dumps = sorted(glob.glob(ub.cgout + ".*"), key=os.path.getmtime)
        if not dumps:
            raise RuntimeError("no callgrind dump in " + rundir)
        total, funcs = costs(dumps[0])
        hashing = sum(v for k, v in funcs.items() if k in HASH_FUNCS)
        return done, total, hashing, {k: v for k, v in funcs.items() if k in HASH_FUNCS}


def main():
    ap = argparse.ArgumentParser(usage="hash_instr.py [--build DIR] [--out FILE]")
    ap.add_argument("--build", default="build/fork")
    ap.add_argument("--out")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    rnd = random.Random(2)
    report = ["## Instructions per query, cache-hash: lookup3 against xxh3 (callgrind)\n",
              "Command: `flock build/.bench.lock %s`  " % " ".join(["bench/hash_instr.py"] + sys.argv[1:]),
              "Date: %s; build %s; one server thread under valgrind --tool=callgrind\n" % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.path.relpath(build)),
              "| workload | hash | queries | instructions per query | in cache hashing per query | "
              "hashing share |",
              "|---|---|---|---|---|---|"]
    detail = []
    with tempfile.TemporaryDirectory(prefix="steady-hashinstr-data-") as d:
        files = {"random": os.path.join(d, "random.txt"), "hit": os.path.join(d, "hit.txt")}
        with open(files["random"], "w") as f:
            for _ in range(20000):
                f.write("%x.example.test A\n" % rnd.getrandbits(48))
        with open(files["hit"], "w") as f:
            for i in range(1000):
                f.write("h%d.example.test A\n" % i)
        res = {}
        for wl in ("cache-hit", "udp-random"):
            for h in HASHES:
                done, total, hashing, funcs = one(build, h, wl, files)
                res[(wl, h)] = (done, total, hashing)
                report.append("| %s | %s | %d | %.0f | %.0f | %.2f%% |" % (
                    wl, h, done, total / done, hashing / done, 100.0 * hashing / total))
                detail.append("- %s, %s, per query: %s" % (wl, h, ", ".join(
                    "%s %.0f" % (k, v / done) for k, v in sorted(funcs.items(), key=lambda x: -x[1]))))
                print(report[-1], file=sys.stderr, flush=True)
    report.append("")
    for wl in ("cache-hit", "udp-random"):
        (dl, tl, hl), (dx, tx, hx) = res[(wl, "lookup3")], res[(wl, "xxh3")]
        report.append("- %s: xxh3 runs %.2f%% fewer instructions per query; hashing "
                      "instructions per query %.0f -> %.0f (%.2fx fewer)" % (
                          wl, 100.0 * (1 - (tx / dx) / (tl / dl)), hl / dl, hx / dx,
                          (hl / dl) / (hx / dx) if hx else float("nan")))
    report.append("\nSelf instructions per query in the hash functions:\n")
    report.extend(detail)
    report.append("")
    text = "\n".join(report) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
