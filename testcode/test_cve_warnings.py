#!/usr/bin/env python3
"""The warnings for the known CVEs that the fork's base does not fix and
that only some configurations are open to (issue 43; doc/security-status.md):
unbound-checkconf and unbound's log at start name the CVE and
security-status.md, once each, when the config uses what the CVE needs,
and say nothing otherwise.

- unwanted-reply-threshold not 0: CVE-2026-109125;
- a trust anchor (with keys) for a zone below the root, with the
  validator in module-config: CVE-2026-50106 and CVE-2026-35501 ("may");
- none with a root anchor only (as Debian's default configuration), with
  domain-insecure for a zone below the root, or with a trust anchor below
  the root and no validator.
Then unbound is started with both settings: its log has each warning
once.

usage: test_cve_warnings.py BUILDDIR"""

import os
import shutil
import subprocess
import sys
import tempfile

from harness.server import Unbound
from harness.zone import checker, verdict

ROOT_KEY = "/usr/share/dns/root.key"
THRESHOLD = "CVE-2026-109125"
ISLAND = ("CVE-2026-50106", "CVE-2026-35501")
# a DS record of the right form for a zone below the root; the daemon
# loads it, nothing is validated with it here
SUB_DS = 'trust-anchor: "example.test. DS 12345 13 2 %s"' % ("ab" * 32)


def conf_with(ub, lines, validator=True):
    """ub's config with lines added to its server: clause, and the
    validator in module-config or not; returns the path."""
    with open(ub.conf) as f:
        text = f.read()
    if validator:
        old = '\tmodule-config: "iterator"\n'
        if old not in text:
            raise RuntimeError("the demo config's module-config changed")
        text = text.replace(old, '\tmodule-config: "validator iterator"\n')
    text = text.replace("server:\n", "server:\n" + "".join(
        "\t%s\n" % line for line in lines), 1)
    path = ub.conf + ".%d" % conf_with.n
    conf_with.n += 1
    with open(path, "w") as f:
        f.write(text)
    return path


conf_with.n = 0


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    fails, check = checker()
    if not os.path.exists(ROOT_KEY):
        print("test_cve_warnings: %s missing (apt-get install dns-root-data)" % ROOT_KEY)
        return 1
    with tempfile.TemporaryDirectory(prefix="steady-cve-") as d:
        ub = Unbound(build, d)
        key = os.path.join(d, "root.key")
        shutil.copy(ROOT_KEY, key)
        root = 'auto-trust-anchor-file: "%s"' % key
        cases = [
            ("a root anchor only, as Debian's default", [root], True, ()),
            ("unwanted-reply-threshold: 10000000",
             [root, "unwanted-reply-threshold: 10000000"], True, (THRESHOLD,)),
            ("a trust anchor for example.test.", [root, SUB_DS], True, ISLAND),
            ("domain-insecure: example.test.",
             [root, 'domain-insecure: "example.test."'], True, ()),
            ("a trust anchor for example.test. without the validator",
             [SUB_DS], False, ()),
        ]
        for what, lines, validator, want in cases:
            path = conf_with(ub, lines, validator)
            r = subprocess.run([ub.bin("unbound-checkconf"), path],
                               capture_output=True, text=True)
            out = r.stdout + r.stderr
            check(r.returncode == 0, "%s: unbound-checkconf passes: %s" % (what, out[-500:]))
            named = [c for c in (THRESHOLD,) + ISLAND if c in out]
            check(sorted(named) == sorted(want), "%s: unbound-checkconf names %s, want %s"
                  % (what, named or "no CVE", list(want) or "none"))
            for c in want:
                check(out.count(c) == 1, "%s: %s named once (%d)" % (what, c, out.count(c)))
            if want:
                check("security-status.md" in out, "%s: the warning names "
                      "security-status.md" % what)
        # the daemon, with both: each warning once in its log at start
        both = conf_with(ub, [root, "unwanted-reply-threshold: 10000000", SUB_DS])
        os.replace(both, ub.conf)
        try:
            ub.start()
            log = ub.read_log()
        finally:
            rc = ub.stop()
        for c in (THRESHOLD,) + ISLAND:
            check(log.count(c) == 1, "unbound's log names %s once at start (%d)"
                  % (c, log.count(c)))
        check(rc == 0, "unbound exit status %s" % rc)
    return verdict(fails, "cve-warnings")


if __name__ == "__main__":
    sys.exit(main())
