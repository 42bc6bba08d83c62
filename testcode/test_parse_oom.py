#!/usr/bin/env python3
"""An upstream answer that cannot be parsed for lack of memory is not a
malformed reply (issue 66, finding 21).

test_parse_ptrs.py's server answers big.ptrs.example. A with 64 KB of A
records (over TCP, after a truncated UDP answer); unbound, a stub of it,
parses that in its scratch region, which takes new chunks of memory as
it goes. testcode/oomshim.c counts the malloc()s and calloc()s while a
trigger file exists: a first run counts those of one such query. Then,
for each K chosen (--sample N at random with --seed S, with the first
and the last; --all for every one), unbound starts, the trigger is made,
the query is asked, and allocation K fails. After each: unbound runs,
total.num.malformed_replies is 0 (a parse that failed for lack of
memory returns SERVFAIL, not FORMERR, and is not counted), and, without
the trigger, the query is answered; unbound stops with exit status 0 (in an
ASan build, without a report). Before the fix every parse failure
was counted.

usage: test_parse_oom.py BUILDDIR [--sample N] [--seed S] [--all] [--k K,...]"""

import argparse
import os
import sys
import tempfile

import dns.message
import dns.query

from harness.server import Unbound, loopback_conf
from harness.zone import (build_preload, checker, nth_count, nth_wrapper, rm,
                          shim_log_lines, sweep_choice, touch, verdict)
from test_parse_ptrs import ZONE, ChainServer

NAME = "big." + ZONE


def ask(ub):
    """The rcode of the TCP query for NAME, or None on a timeout."""
    try:
        return dns.query.tcp(dns.message.make_query(NAME, "A"), "127.0.0.1",
                             port=ub.port, timeout=10).rcode()
    except Exception:
        return None


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("--sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--k", help="the allocations to fail, K,K,... (no sample)")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    fails, check = checker()
    srv = ChainServer()
    try:
        with tempfile.TemporaryDirectory(prefix="steady-parse-oom-") as d:
            shim = build_preload(d, "oomshim.c")
            trigger, log = os.path.join(d, "nth"), os.path.join(d, "oom.log")

            def run(nth):
                """Start unbound failing allocation nth of the query's;
                returns (alive, malformed count, rcode without the
                trigger, failed allocation)."""
                rm(trigger)
                rm(log)
                ub = Unbound(build, os.path.join(d, "ub"))
                with open(ub.conf, "w") as f:
                    f.write(loopback_conf(
                        ub.rundir, ub.port, ub.control_port, threads=1,
                        server=["max-udp-size: 65535", "edns-buffer-size: 1232"],
                        clauses=["stub-zone:", '\tname: "%s"' % ZONE,
                                 "\tstub-addr: 127.0.0.1@%d" % srv.port]))
                ub.log = os.path.join(ub.rundir, "stdout.log")
                ub.start(wrapper=nth_wrapper(build, shim, trigger, nth, log))
                touch(trigger)
                ask(ub)
                rm(trigger)
                alive = ub.proc.poll() is None
                malformed, rc = None, None
                if alive:
                    malformed = int(ub.stats().get("total.num.malformed_replies", -1))
                    ub.control("flush_zone", ZONE)
                    ub.control("flush_infra", "all")
                    rc = ask(ub)
                status = ub.stop()
                if not alive or status != 0:
                    print("unbound log (oomshim prints the stack of the failed "
                          "allocation):\n" + ub.read_log()[-5000:])
                return alive and status == 0, malformed, rc, \
                    shim_log_lines(log, "fail nth")

            alive, malformed, rc, _ = run(1 << 60)
            n = nth_count(log)
            print("allocations of one query (count run): %d" % n)
            check(alive and malformed == 0 and rc == 0 and n > 0,
                  "count run: answered, not counted as malformed")
            ks = sweep_choice(n, a.sample, a.seed, a.all, a.k)
            for k in ks:
                alive, malformed, rc, failed = run(k)
                check(alive and malformed == 0 and rc == 0,
                      "K=%d (%s): unbound runs and stops with status 0 (%s), "
                      "total.num.malformed_replies %s, "
                      "answered after (rcode %s)" % (k, failed or "none failed",
                                                     alive, malformed, rc))
            print("runs: %d (K = %s)" % (len(ks), " ".join(str(k) for k in ks)))
    finally:
        srv.stop()
    return verdict(fails, "parse-oom")


if __name__ == "__main__":
    sys.exit(main())
