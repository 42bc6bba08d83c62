#!/usr/bin/env python3
"""Out of memory while the auth-zone I/O thread writes a zonefile, under
AddressSanitizer, with NSD as the primary of a 200k-record zone.

An LD_PRELOAD shim (testcode/oomshim.c, built here with cc) holds the I/O
thread half way through the write of the zonefile (it reads the zone
data meanwhile, without a lock), and makes allocations fail while the
test wants:
- calloc: the next transfer's apply job cannot be allocated (the
  calloc of sizeof(struct auth_io_job), the size is read from the
  binary's debug information with gdb);
- strdup: the job is allocated, the copy of the primary's name is not;
- reload: unbound-control auth_zone_reload, with those jobs (the reload
  job, the one that frees the replaced data) not allocated.
In each case the worker must not apply, reload or free the zone data
itself: the transfer fails (logged, counted in
num.authzone.xfr.apply.nomem) and a later NOTIFY gets the zone; the
reload fails with an error. While the write is held, the version of the
zone that the transfer replaced must be freed already (logged at
verbosity 4), so that two versions of the zone are in memory only while
the new one is built. Then the held write goes on, and the
zonefile on disk must be a complete version (parsed: serial, and the
record count of that serial), the served serial must not go back, and
ASan must report nothing, also at the exit.

usage: test_zone_oom.py BUILDDIR [--phase calloc|strdup|reload ...]
  BUILDDIR: a build with AddressSanitizer (make fork-asan: build/fork-asan)"""

import argparse
import os
import sys
import tempfile
import time

from harness.zone import (Primary, Secondary, asan_build, build_preload, check_zonefile,
                          file_serial, notify, preload_env, rm, shim_log_lines, struct_size,
                          touch, verdict, write_zone)

ZONE = "example.net."
N = 200000
PHASES = ("calloc", "strdup", "reload")


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("builddir")
    ap.add_argument("--phase", action="append", choices=PHASES)
    a = ap.parse_args()
    phases = a.phase or list(PHASES)
    if not asan_build(a.builddir):
        print("test_zone_oom: %s is not built with AddressSanitizer" % a.builddir)
        return 1
    fails = []
    with tempfile.TemporaryDirectory(prefix="steady-zoom-") as tmp:
        shim = build_preload(tmp, "oomshim.c")
        triggers = {"calloc": os.path.join(tmp, "oom.calloc"),
                    "strdup": os.path.join(tmp, "oom.strdup"),
                    "reload": os.path.join(tmp, "oom.calloc")}
        hold = os.path.join(tmp, "write.hold")
        shimlog = os.path.join(tmp, "shim.log")
        size = struct_size(a.builddir, "auth_io_job")
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE])
        write_zone(prim.zonefile(ZONE), ZONE, 1, N)
        sec = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                        [ZONE], threads=2, io_thread=True, verbosity=4)
        zfile = sec.zonefile(ZONE)
        host = "127.0.0.1@%d" % prim.port
        wrapper = ["env"] + preload_env(a.builddir, shim) + [
                   "STEADY_OOM_CALLOC_TRIGGER=" + triggers["calloc"],
                   "STEADY_OOM_SIZE=%d" % size,
                   "STEADY_OOM_STRDUP_TRIGGER=" + triggers["strdup"],
                   "STEADY_OOM_STRDUP=" + host, "STEADY_HOLD=" + hold,
                   "STEADY_OOM_LOG=" + shimlog]
        state = {"serial": 1, "nomem": 0}

        def shim_lines(prefix):
            return shim_log_lines(shimlog, prefix)

        def asan_report():
            return [l for l in sec.read_log().splitlines()
                    if "Sanitizer" in l or l.startswith("    #")]

        def alive():
            return sec.proc is not None and sec.proc.poll() is None

        def oom_errors():
            return [l for l in sec.read_log().splitlines()
                    if " error: " in l and "out of memory" in l]

        def update(serial):
            write_zone(prim.zonefile(ZONE), ZONE, serial, N)
            prim.reload({ZONE: serial})
            notify(sec.port, ZONE)

        def wait(cond, timeout):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if cond() or not alive():
                    return cond()
                time.sleep(0.05)
            return cond()

        def phase(kind):
            s0 = state["serial"]
            s1, s2 = s0 + 1, s0 + 2
            # 1. the zonefile write of s1, held half way
            holds = len(shim_lines("hold"))
            touch(hold)
            update(s1)
            if not wait(lambda: len(shim_lines("hold")) > holds, 60):
                fails.append("%s: the write of serial %d was not held" % (kind, s1))
                return False
            print("%s: I/O thread holds the write of serial %d half way (%s)"
                  % (kind, s1, shim_lines("hold")[-1].split()[-1]))
            # the version it replaced is freed already: two versions of
            # the zone are in memory only while the new one is built
            freed = "names of the version of %s before serial %d in" % (ZONE, s1)
            if freed not in sec.read_log():
                fails.append("%s: the version before serial %d is not freed while "
                             "its zonefile write runs" % (kind, s1))
            # 2. the fault
            nfail = len(shim_lines("fail"))
            nerr = len(oom_errors())
            trigger = triggers[kind]
            touch(trigger)
            if kind == "reload":
                r = sec.control("auth_zone_reload", ZONE, check=False, timeout=120)
                out = (r.stdout + r.stderr).strip()
                print("reload: unbound-control auth_zone_reload: %s" % out)
                if not out.startswith("error"):
                    fails.append("reload: %r, want an error: the reload "
                                 "cannot be done without memory" % out)
            else:
                write_zone(prim.zonefile(ZONE), ZONE, s2, N)
                prim.reload({ZONE: s2})
                notify(sec.port, ZONE)
                # the worker received s2 and could not give it to the I/O
                # thread; it must fail the transfer (an error), not apply
                # it itself (then s2 is served)
                wait(lambda: len(shim_lines("fail")) > nfail and (
                    len(oom_errors()) > nerr or sec.serial(ZONE) == s2), 60)
                time.sleep(0.5)
            rm(trigger)
            failed = shim_lines("fail")[nfail:]
            print("%s: shim failed %d allocations: %s" % (kind, len(failed), failed[:3]))
            if not failed:
                fails.append("%s: no allocation was failed" % kind)
            served = sec.serial(ZONE) if alive() else None
            print("%s: served serial %s while the write of %d is held" % (
                kind, served, s1))
            # 3. the write goes on
            rm(hold)
            wait(lambda: len(shim_lines("release")) > holds and
                 file_serial(zfile) is not None and
                 not os.path.exists(zfile + ".tmp%d" % sec.proc.pid), 60)
            time.sleep(0.5)
            rep = asan_report()
            if rep or not alive():
                fails.append("%s: unbound %s; ASan:\n%s" % (
                    kind, "is alive" if alive() else "exited",
                    "\n".join(rep[:40])))
                return False
            s, why = check_zonefile(zfile, ZONE, N)
            print("%s: zonefile after the write: serial %s %s" % (
                kind, s, why or "complete, %d host records" % N))
            if why or s not in (s0, s1, s2):
                fails.append("%s: zonefile not a complete version: %s (serial %s)"
                             % (kind, why, s))
            if kind != "reload":
                # a failed transfer is tried again at once with the whole
                # list of primaries, and the shim may fail an allocation
                # elsewhere too: at least one transfer is not applied,
                # and every one is logged and counted
                errs = [e for e in oom_errors()[nerr:] if "transfer" in e]
                if not errs:
                    fails.append("%s: no out of memory error logged for the "
                                 "transfer" % kind)
                for e in errs:
                    print("%s: %s" % (kind, e.split(" error: ", 1)[1]))
                if served != s1:
                    fails.append("%s: served serial %s after the failed "
                                 "transfer, want %d" % (kind, served, s1))
                state["nomem"] += len(errs)
                st = sec.stats()
                n = st.get("num.authzone.xfr.apply.nomem")
                if n is None or int(n) != state["nomem"]:
                    fails.append("%s: num.authzone.xfr.apply.nomem=%s, want %d"
                                 % (kind, n, state["nomem"]))
                # 4. the transfer again, now with memory
                notify(sec.port, ZONE)
                if not sec.wait_serial(ZONE, s2, timeout=60):
                    fails.append("%s: serial %d not served and on disk after a "
                                 "NOTIFY (file %s)" % (kind, s2, file_serial(zfile)))
                    return False
                s, why = check_zonefile(zfile, ZONE, N)
                if why or s != s2:
                    fails.append("%s: zonefile %s (serial %s)" % (kind, why, s))
                print("%s: then serial %d transferred, served and on disk" % (kind, s2))
                state["serial"] = s2
            else:
                if served != s1:
                    fails.append("reload: served serial %s, want %d (the failed "
                                 "reload must not change the zone)" % (served, s1))
                if not sec.wait_serial(ZONE, s1, timeout=60):
                    fails.append("reload: serial %d not on disk" % s1)
                state["serial"] = s1
            return True

        try:
            prim.start({ZONE: 1})
            sec.start(wrapper=wrapper)
            if not sec.wait_serial(ZONE, 1, timeout=120):
                fails.append("first transfer not on disk")
                raise StopIteration
            for kind in phases:
                if not phase(kind):
                    break
            if alive():
                rc = sec.stop()
                rep = asan_report()
                if rc != 0 or rep:
                    fails.append("exit status %s; ASan at exit:\n%s" % (
                        rc, "\n".join(rep[:40])))
        except StopIteration:
            pass
        finally:
            rm(hold)
            for t in triggers.values():
                rm(t)
            sec.kill()
            prim.stop()
            if fails:
                print(sec.read_log()[-4000:])
    return verdict(fails, "out of memory during zonefile writes")


if __name__ == "__main__":
    sys.exit(main())
