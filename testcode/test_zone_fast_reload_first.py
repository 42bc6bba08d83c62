#!/usr/bin/env python3
"""A fast_reload that adds the first secondary zone finds the auth-zone
I/O thread running (issue 66, finding 6).

unbound starts with auth-zone-io-thread: yes and no auth-zone; before the
fix the thread was started only when a zone had a primary or a URL, and
fast_reload never started it, so the zones it added were applied and
written in the workers' event loops until a restart. NSD serves
first.example.; unbound-control fast_reload (with --nopause, +p) loads a
config that adds it as a secondary. Then it must be transferred and
served, an update (serial 2) too, and num.authzone.xfr.apply (the applies
the thread made) must count both; unbound stops with exit status 0 and,
in a sanitizer build, without a report.

usage: test_zone_fast_reload_first.py BUILDDIR [--nopause]"""

import argparse
import os
import re
import sys
import tempfile

from harness.zone import (Primary, Secondary, check_clean_exit, checker,
                          notify, verdict, write_zone)

ZONE = "first.example."


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("builddir")
    ap.add_argument("--nopause", action="store_true", help="fast_reload +p")
    a = ap.parse_args()
    fails, check = checker()
    with tempfile.TemporaryDirectory(prefix="steady-zfr-first-") as tmp:
        prim = Primary(os.path.join(tmp, "nsd"), [ZONE])
        write_zone(prim.zonefile(ZONE), ZONE, 1, 100)
        prim.start({ZONE: 1})
        ub = Secondary(a.builddir, os.path.join(tmp, "unbound"), prim.port,
                       [ZONE], io_thread=True)
        with open(ub.conf) as f:
            full = f.read()
        # the same config without its auth-zone clause
        first = re.sub(r"auth-zone:\n(\t.*\n)*", "", full)
        check("auth-zone:" not in first, "the first config has no auth-zone")
        with open(ub.conf, "w") as f:
            f.write(first)
        rc = None
        try:
            ub.start()
            with open(ub.conf, "w") as f:
                f.write(full)
            r = ub.control("fast_reload", *(["+p"] if a.nopause else []),
                           check=False, timeout=60)
            check(r.returncode == 0 and "ok" in r.stdout.split(),
                  "fast_reload%s that adds %s answers ok: %s" % (
                      " +p" if a.nopause else "", ZONE,
                      (r.stdout + r.stderr).strip()[-200:]))
            check(ub.wait_serial(ZONE, 1, timeout=60),
                  "serial 1 transferred, served and written")
            write_zone(prim.zonefile(ZONE), ZONE, 2, 100)
            prim.reload({ZONE: 2})
            notify(ub.port, ZONE)
            check(ub.wait_serial(ZONE, 2, timeout=60),
                  "serial 2 transferred, served and written")
            applied = int(ub.stats().get("num.authzone.xfr.apply", "0"))
            check(applied >= 2, "the auth-zone I/O thread applied both "
                  "transfers (num.authzone.xfr.apply=%d)" % applied)
        finally:
            rc = ub.stop()
            prim.stop()
        check_clean_exit(check, rc, ub.read_log())
        if fails:
            print(ub.read_log()[-3000:])
    return verdict(fails, "zone-fast-reload-first")


if __name__ == "__main__":
    sys.exit(main())
