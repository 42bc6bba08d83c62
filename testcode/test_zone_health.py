#!/usr/bin/env python3
"""A feed's health is visible per zone: unbound-control list_auth_zones
and the extended statistics give, for an RPZ zone taken from Knot, its
serial, its number of names, its transfers by kind, when the last one was
applied, the wall clock and CPU time of that apply, the size of the
zonefile written after it, and when the primary last confirmed the zone;
contrib/metrics.awk exports them, promtool accepts the metrics, and the
rules of conf/monitoring fire on them when the feed stops (a promtool
rules test made of the real scrape's names).

Knot serves the RPZ (--names QNAME triggers). Checked after the first
transfer (one AXFR, of a zone not held: full_held 0), after --updates
IXFRs, and after a full transfer of the held zone (Knot restarted with its journal purged,
so it answers the IXFR with the whole zone: axfr and full_held 1 more):
- list_auth_zones and the stats agree, and count exactly those transfers;
- names is the number of owner names of the zone Knot serves;
- last_update lies between the NOTIFY and the check, apply.time > 0 and
  apply.cpu at most apply.time (plus a clock tick);
- write.bytes is the size of the zonefile on disk;
- refreshed is at least last_update, soa.refresh the SOA's 3600;
- the stats command (which resets) leaves them as they are.

usage: test_zone_health.py BUILDDIR SRCDIR [--io-thread yes|no]
                           [--names N] [--updates N]"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from harness.prom import metrics_awk, promtool, rules_test, samples
from harness.zone import (checker, file_serial, list_auth_zone, notify, rpz_from_knot,
                          rpz_qname_zone, verdict, wait_for)

ZONE = "rpz.example."
TRIGGER_A = "192.0.2.1"


def owner_names(text):
    """The number of distinct owner names of a zone text as
    rpz_qname_zone writes it ($ORIGIN, relative names, '@')."""
    names = set()
    for line in text.splitlines():
        if not line or line.startswith("$"):
            continue
        names.add(line.split()[0])
    return len(names)


def zone_stats(ub, cmd="stats_noreset"):
    """The authzone.zone.*.ZONE values of a stats command: {key: value}."""
    stats = ub.stats(cmd)
    suffix = "." + ZONE
    return {k[len("authzone.zone."):-len(suffix)]: v for k, v in stats.items()
            if k.startswith("authzone.zone.") and k.endswith(suffix)}


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("build")
    ap.add_argument("src")
    ap.add_argument("--io-thread", choices=["yes", "no"], default="yes")
    ap.add_argument("--names", type=int, default=2000)
    ap.add_argument("--updates", type=int, default=3)
    a = ap.parse_args()
    fails, check = checker()
    labels = ["t%d" % i for i in range(a.names)]

    with tempfile.TemporaryDirectory(prefix="steady-zone-health-") as d:
        text = rpz_qname_zone(ZONE, 1, labels, TRIGGER_A)
        knot, ub = rpz_from_knot(d, a.build, ZONE, text, a.io_thread == "yes",
                                 server_extra="\textended-statistics: yes\n")
        want = {"ixfr": 0, "axfr": 0, "http": 0, "full_held": 0, "failed": 0}

        def verify(stage, serial, text, since):
            lst = list_auth_zone(ub, ZONE)
            st = zone_stats(ub)
            check(lst is not None, "%s: %s in list_auth_zones" % (stage, ZONE))
            if lst is None:
                return
            print("%s: list_auth_zones %s" % (stage, " ".join(
                "%s=%s" % kv for kv in sorted(lst.items()))))
            check(lst.get("serial") == str(serial) and st.get("serial") == str(serial),
                  "%s: serial %d in the list (%s) and the stats (%s)" % (
                      stage, serial, lst.get("serial"), st.get("serial")))
            for k, v in want.items():
                check(lst.get(k) == str(v) and st.get("xfr." + k) == str(v),
                      "%s: %s %d in the list (%s) and the stats (%s)" % (
                          stage, k, v, lst.get(k), st.get("xfr." + k)))
            names = owner_names(text)
            check(lst.get("names") == str(names) and st.get("names") == str(names),
                  "%s: names %d, the zone's owner names (list %s, stats %s)" % (
                      stage, names, lst.get("names"), st.get("names")))
            same = {"last_update": "last_update", "apply": "apply.time", "cpu": "apply.cpu",
                    "written": "write.bytes", "refreshed": "refreshed"}
            check(all(lst.get(k) == st.get(s) for k, s in same.items()),
                  "%s: the list and the stats agree on %s" % (stage, ", ".join(same)))
            last = int(st.get("last_update", "0"))
            check(since <= last <= time.time() + 1,
                  "%s: last_update %d between the NOTIFY (%d) and now" % (stage, last, since))
            apply_s, cpu_s = float(st.get("apply.time", "0")), float(st.get("apply.cpu", "-1"))
            check(apply_s > 0 and 0 <= cpu_s <= apply_s + 0.01,
                  "%s: apply took %.6f s, %.6f s of CPU" % (stage, apply_s, cpu_s))
            size = os.path.getsize(ub.zonefile(ZONE))
            check(st.get("write.bytes") == str(size),
                  "%s: write.bytes %s is the zonefile's size %d" % (stage, st.get("write.bytes"), size))
            check(int(st.get("refreshed", "0")) >= last and st.get("soa.refresh") == "3600"
                  and st.get("expired") == "0",
                  "%s: refreshed %s >= last_update, soa.refresh %s, expired %s" % (
                      stage, st.get("refreshed"), st.get("soa.refresh"), st.get("expired")))

        def notified(serial, what):
            """NOTIFY unbound of serial and wait until it is written;
            returns whether it was, and the time of the NOTIFY."""
            since = int(time.time())
            notify(ub.port, ZONE)
            ok = wait_for(lambda: file_serial(ub.zonefile(ZONE)) == serial, 120)
            check(ok, "serial %d (%s) transferred and written" % (serial, what))
            return ok, since

        try:
            since = int(time.time())
            ub.start()
            ok = wait_for(lambda: file_serial(ub.zonefile(ZONE)) == 1, 120)
            check(ok, "serial 1 transferred and written")
            want["axfr"] = 1
            if ok:
                verify("first transfer", 1, text, since)
            serial = 1
            for serial in range(2, a.updates + 2):
                labels[serial] = "s%d" % serial
                text = rpz_qname_zone(ZONE, serial, labels, TRIGGER_A)
                with open(knot.zonefile(ZONE), "w") as f:
                    f.write(text)
                knot.reload({ZONE: serial}, timeout=120)
                ok, since = notified(serial, "IXFR")
                if not ok:
                    break
                want["ixfr"] += 1
            if ok:
                verify("after %d IXFRs" % a.updates, serial, text, since)
                # the stats command resets the counters of the interval, not these
                before = zone_stats(ub, "stats")
                check(zone_stats(ub) == before, "stats (with its reset) leaves them as they are")

            # a full transfer of the held zone: Knot, restarted with its
            # journal purged, answers the IXFR with the whole zone
            # ("incomplete history, fallback to AXFR")
            serial += 1
            labels[0] = "full%d" % serial
            text = rpz_qname_zone(ZONE, serial, labels, TRIGGER_A)
            subprocess.run(["knotc", "-c", knot.conf, "-f", "zone-purge", ZONE, "+journal"],
                           capture_output=True, check=True)
            knot.stop()
            with open(knot.zonefile(ZONE), "w") as f:
                f.write(text)
            knot.start({ZONE: serial}, timeout=120)
            ok, since = notified(serial, "the whole zone for an IXFR")
            if ok:
                want["axfr"] += 1
                want["full_held"] += 1
                verify("after the full transfer of the held zone", serial, text, since)

            stats_text = ub.control("stats_noreset").stdout
        finally:
            rc = ub.stop()
            knot.stop()
        check(rc == 0, "unbound exit status %s" % rc)

        metrics = metrics_awk(a.src, stats_text)
        ours = {k: v for k, v in samples(metrics).items() if k.startswith("unbound_authzone_")}
        print("metrics.awk: %s" % " ".join("%s=%s" % kv for kv in sorted(ours.items())))
        check(len(ours) == 14, "metrics.awk exports the 14 values of %s (%d)" % (ZONE, len(ours)))
        r = promtool("check", "metrics", stdin=metrics)
        linted = set(re.findall(r"^(unbound_authzone_\w+) ", r.stdout + r.stderr, re.M))
        check(not linted, "promtool check metrics finds nothing in unbound_authzone_* (%s)" % (
            sorted(linted) or "nothing"))
        # the rules on the scrape's own names and labels: refreshed every
        # minute is quiet; refreshed stuck while the time goes on fires
        refreshed = [k for k in ours if k.startswith("unbound_authzone_refreshed_seconds")]
        series = {k.replace("{", '{instance="r",'): v + "x40" for k, v in ours.items()}
        series = {k: v for k, v in series.items()
                  if not k.startswith(("unbound_authzone_refreshed_seconds",
                                       "unbound_authzone_soa_refresh_seconds"))}
        for k in refreshed:
            series[k.replace("{", '{instance="r",')] = "0+60x40"
            series[k.replace("{", '{instance="r",').replace(
                "refreshed_seconds", "soa_refresh_seconds")] = "60x40"
        rc, fired = rules_test(d, "feed-updating", series, minutes=30)
        check(refreshed and rc == 0 and not fired,
              "a feed confirmed every minute fires no alert (fired: %s)" % (sorted(fired) or "none"))
        for k in refreshed:
            series[k.replace("{", '{instance="r",')] = "0+60x9 540x30"
        rc, fired = rules_test(d, "feed-stopped", series, minutes=30)
        check("UnboundAuthZoneNotRefreshed" in fired,
              "a feed not confirmed after minute 9 fires UnboundAuthZoneNotRefreshed (fired: %s)" % (
                  sorted(fired) or "none"))
        if fails:
            print(ub.read_log()[-3000:])
    return verdict(fails, "zone-health")


if __name__ == "__main__":
    sys.exit(main())
