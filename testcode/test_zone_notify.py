#!/usr/bin/env python3
"""A worker that waits for the auth-zone I/O thread is told when its job
is done; it does not poll the job every few milliseconds. NSD serves a
large and a small zone, the built unbound (auth-zone I/O thread, 2
threads) is their secondary. An LD_PRELOAD shim (testcode/slowshim.c)
makes the large zone's zonefile write take --write-sec seconds; while it
runs:

1. the small zone is updated and NOTIFYed: its transfer is quick, and
   its apply waits behind the write on the I/O thread, with the worker
   that fetched it waiting for the apply;
2. unbound-control auth_zone_reload of the small zone waits the same
   way, in worker 0 (remote control).

Over each --window seconds, the worker threads (the threads that wait in
epoll, not the I/O thread) must not be woken up more than --max-wakeups
times (voluntary context switches, /proc/PID/task/TID/status); a worker
that polls every 10 ms is woken up 100 times a second. Afterwards the
small zone must be served with its new serial and the reload answer ok:
the reload runs after the apply, while the small zone's zonefile write
is still queued, and must not read the older zonefile back.

usage: test_zone_notify.py BUILDDIR [--write-sec S] [--window S]
                           [--max-wakeups N]"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

from harness.zone import (Primary, Secondary, build_preload, file_serial, notify,
                      verdict, thread_wakeups, write_zone)

BIG, SMALL = "big.example.", "small.example."
NBIG, NSMALL = 20000, 10
EVERY = 100


def worker_wakeups(pid, before, after):
    """Wakeups of the worker threads from before to after (thread_wakeups
    samples): the threads that wait in epoll in either sample."""
    total = {}
    for tid, (n, wchan) in after.items():
        if tid not in before:
            continue
        if "epoll" in wchan or "epoll" in before[tid][1]:
            total[tid] = n - before[tid][0]
    return total


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--write-sec", type=float, default=12.0)
    ap.add_argument("--window", type=float, default=3.0)
    ap.add_argument("--max-wakeups", type=int, default=30)
    a = ap.parse_args()
    fails = []
    usec = int(a.write_sec * 1e6 * EVERY / (NBIG + 4))
    with tempfile.TemporaryDirectory(prefix="steady-znotify-") as tmp:
        shim = build_preload(tmp, "slowshim.c")
        slow = os.path.join(tmp, "slow")
        prim = Primary(os.path.join(tmp, "nsd"), [BIG, SMALL])
        write_zone(prim.zonefile(BIG), BIG, 1, NBIG)
        write_zone(prim.zonefile(SMALL), SMALL, 1, NSMALL)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [BIG, SMALL], threads=2, io_thread=True)
        wrapper = ["env", "LD_PRELOAD=" + shim,
                   "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1",
                   "STEADY_SLOW=" + slow,
                   "STEADY_SLOW_USEC=%d" % usec, "STEADY_SLOW_EVERY=%d" % EVERY]
        prim.start({BIG: 1, SMALL: 1})
        reload_cmd = None
        try:
            sec.start(wrapper=wrapper, timeout=120)
            for z in (BIG, SMALL):
                if not sec.wait_serial(z, 1, timeout=120):
                    fails.append("%s: first transfer not on disk" % z)
                    raise StopIteration
            pid = sec.proc.pid
            # the large zone's write runs, slowly
            open(slow, "w").close()
            write_zone(prim.zonefile(BIG), BIG, 2, NBIG)
            prim.reload({BIG: 2, SMALL: 1})
            notify(sec.port, BIG)
            if not sec.wait_serial(BIG, 2, timeout=60, on_disk=False):
                fails.append("%s: serial 2 not served" % BIG)
                raise StopIteration
            time.sleep(0.3)

            # 1. a transfer of the small zone waits for its apply
            write_zone(prim.zonefile(SMALL), SMALL, 2, NSMALL)
            prim.reload({BIG: 2, SMALL: 2})
            notify(sec.port, SMALL)
            time.sleep(0.3)  # the transfer itself
            s0 = thread_wakeups(pid)
            time.sleep(a.window)
            s1 = thread_wakeups(pid)
            w = worker_wakeups(pid, s0, s1)
            # the window counts only if the apply waited through it: the
            # small zone is still served at serial 1
            served = sec.serial(SMALL)
            print("apply waiting: worker wakeups in %.1f s: %s; %s served at "
                  "serial %s" % (a.window, w, SMALL, served))
            if served != 1:
                fails.append("%s served at serial %s after the window: its apply "
                             "did not wait behind the write, the window proves "
                             "nothing" % (SMALL, served))
            if not w or sum(w.values()) > a.max_wakeups:
                fails.append("workers woken up %s times in %.1f s while a transfer "
                             "waits for its apply, limit %d" % (
                                 sum(w.values()) if w else "?", a.window, a.max_wakeups))

            # 2. auth_zone_reload waits for the I/O thread, in worker 0
            reload_cmd = subprocess.Popen(
                [sec.bin("unbound-control"), "-c", sec.conf, "auth_zone_reload", SMALL],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(0.3)
            s0 = thread_wakeups(pid)
            time.sleep(a.window)
            s1 = thread_wakeups(pid)
            w = worker_wakeups(pid, s0, s1)
            print("reload waiting: worker wakeups in %.1f s: %s" % (a.window, w))
            if reload_cmd.poll() is not None:
                fails.append("auth_zone_reload answered before the write was done: %s" %
                             reload_cmd.stdout.read())
            if not w or sum(w.values()) > a.max_wakeups:
                fails.append("workers woken up %s times in %.1f s while auth_zone_reload "
                             "waits, limit %d" % (sum(w.values()) if w else "?",
                                                  a.window, a.max_wakeups))

            # the write goes on at full speed; both finish
            os.unlink(slow)
            t0 = time.monotonic()
            out, _ = reload_cmd.communicate(timeout=60)
            reload_cmd = None
            print("auth_zone_reload: %s (%.2f s after the write was let go)" % (
                out.strip(), time.monotonic() - t0))
            if out.strip() != "ok":
                fails.append("auth_zone_reload answered %r" % out.strip())
            if not sec.wait_serial(SMALL, 2, timeout=30, on_disk=False):
                fails.append("%s: serial 2 not served (served %s, on disk %s)" % (
                    SMALL, sec.serial(SMALL), file_serial(sec.zonefile(SMALL))))
            print("%s serial 2 served %.2f s after the write was let go" % (
                SMALL, time.monotonic() - t0))
            if sec.stop() != 0:
                fails.append("stop: exit status not 0")
            for l in sec.read_log().splitlines():
                if " error:" in l or "fatal" in l or "Sanitizer" in l:
                    fails.append("log: " + l)
        except StopIteration:
            pass
        finally:
            if reload_cmd is not None:
                reload_cmd.kill()
                reload_cmd.wait()
            sec.kill()
            prim.stop()
            if fails:
                print(sec.read_log()[-3000:])
    return verdict(fails, "workers notified by the auth-zone I/O thread")


if __name__ == "__main__":
    sys.exit(main())
