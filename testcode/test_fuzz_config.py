#!/usr/bin/env python3
"""Config fuzzing of the fork's new options: random values through
unbound-checkconf and through unbound-control set_option against a running
unbound on loopback, both from the AddressSanitizer build (make fork-asan).

The options are the ones the patches add to util/configlexer.lex (read from
patches/*.patch, so a new option is fuzzed too); the values each accepts are
known for hash-integrity-check, auth-zone-io-thread, auth-zone-journal
(yes, no) and cache-hash
(lookup3, xxh3); for an option not known here only "no crash" is checked.

Values: the valid ones, their case and whitespace variants, empty, numbers,
long strings, quotes, backslashes, format directives, non-ASCII bytes, and
random printable strings. Checked for every value:
- unbound-checkconf: a valid value passes (exit 0); any other exits nonzero
  with an error that names the file and line, or the option, or says what
  was expected; no sanitizer report, no signal;
- set_option: a valid value answers "ok", any other an error with a
  nonzero exit; get_option gives the value last set; the options in
  REFUSED, which nothing could apply at run time, are refused whatever
  the value, with an error that names the option and what changes it,
  and get_option keeps giving the configured value (before, set_option
  answered "ok" for hash-integrity-check and auth-zone-io-thread and
  changed nothing but get_option's answer); the server keeps running and
  answering;
- the server stops cleanly, and its log has no sanitizer report.
Half of SECONDS (default 50) for each of the two, split over the options;
the fixed values first, then random ones; the seed is printed.

usage: test_fuzz_config.py BUILDDIR [SECONDS] [SEED]"""

import glob
import os
import random
import re
import subprocess
import sys
import tempfile
import time

from harness.server import Unbound, TOP

KNOWN = {
    "hash-integrity-check": ["yes", "no"],
    "auth-zone-io-thread": ["yes", "no"],
    "auth-zone-journal": ["yes", "no"],
    "cache-hash": ["lookup3", "xxh3"],
}
# The options set_option refuses, and the word its error gives for what
# changes them instead.
REFUSED = {
    "hash-integrity-check": "reload",
    "auth-zone-io-thread": "reload",
    "auth-zone-journal": "reload",
    "cache-hash": "restart",
}
SAN = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:|"
                 r"UndefinedBehaviorSanitizer")


def new_options():
    """The options the patches add to the config lexer."""
    opts = set()
    for p in sorted(glob.glob(os.path.join(TOP, "patches", "*.patch"))):
        with open(p, errors="replace") as f:
            for line in f:
                m = re.match(r"^\+([a-z0-9-]+)\{COLON\}", line)
                if m:
                    opts.add(m.group(1))
    return sorted(opts)


def values(rnd, valid, first=True):
    """Random values for an option whose valid values are valid: the fixed
    list and random ones, or (not first) random ones only."""
    if not first:
        out = ["".join(rnd.choice(
            "abcdefghijklmnopqrstuvwxyzYESNO0123456789-_.:/@*~%\\ '")
            for _ in range(rnd.choice([1, 2, 3, 4, 5, 8, 16, 64, 300])))
            for _ in range(100)]
        return out
    v = list(valid) + ["yes", "no", "lookup3", "xxh3"]
    out = list(v)
    for x in v:
        out += [x.upper(), x.capitalize(), " " + x, x + " ", x + "x",
                x[:-1], x + " " + x, x + "\t"]
    out += ["", "0", "1", "-1", "4294967296", "99999999999999999999",
            "true", "false", "on", "off", "none", "%s%s%s%n", "%x" * 20,
            "\\", "\\\\yes", "'yes'", "\"", "a\"b", "y\u00e9s", "\u00ff" * 3,
            "x" * 5000, "y" * 70000, ";", "{", "}", "yes;no", "$(id)",
            "lookup3xxh3", "xxh3\\", "xxh64", "XXH3", "lookup2", "murmur"]
    for _ in range(60):
        n = rnd.choice([1, 2, 3, 5, 8, 16, 64, 300])
        out.append("".join(rnd.choice(
            "abcdefghijklmnopqrstuvwxyzYESNO0123456789-_.:/@*~%\\ '")
            for _ in range(n)))
    rnd.shuffle(out)
    return out


def batches(rnd, valid, end):
    """Values until time.monotonic() reaches end: the fixed list first."""
    first = True
    while time.monotonic() < end:
        for v in values(rnd, valid, first):
            if time.monotonic() >= end:
                return
            yield v
        first = False


def conf_value(v):
    """The value as config file text, or None if it has no such form (the
    lexer has no escapes in quoted strings)."""
    if "\n" in v or "\0" in v:
        return None
    if v and not re.search(r"[\s\"'#]", v):
        return v
    if '"' not in v:
        return '"%s"' % v
    if "'" not in v:
        return "'%s'" % v
    return None


def main():
    if len(sys.argv) not in (2, 3, 4):
        print("usage: " + __doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = sys.argv[1]
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 50.0
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else random.randrange(1 << 30)
    print("seed %d, %.0f s" % (seed, budget))
    rnd = random.Random(seed)
    opts = new_options()
    print("new options in the patches: %s" % " ".join(opts))
    fails = []
    counts = {"checkconf": 0, "set_option": 0}

    def fail(what):
        print("FAIL: " + what)
        fails.append(what)

    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="steady-fuzzconf-") as d:
        ub = Unbound(build, os.path.join(d, "run"))
        with open(ub.conf) as f:
            base = f.read()
        cfile = os.path.join(d, "fuzz.conf")

        # unbound-checkconf: half the budget
        for opt in opts:
            valid = KNOWN.get(opt)
            end = start + budget / 2 * (opts.index(opt) + 1) / len(opts)
            for v in batches(rnd, valid or [], end):
                text = conf_value(v)
                if text is None:
                    continue
                with open(cfile, "w") as f:
                    f.write(base.replace("server:\n", "server:\n\t%s: %s\n"
                                         % (opt, text), 1))
                r = subprocess.run([ub.bin("unbound-checkconf"), cfile],
                                   capture_output=True, text=True,
                                   errors="replace", env=env, timeout=60)
                counts["checkconf"] += 1
                out = r.stdout + r.stderr
                if r.returncode < 0 or SAN.search(out):
                    fail("checkconf %s: %r: crash or sanitizer report "
                         "(exit %d):\n%s" % (opt, v, r.returncode, out[-3000:]))
                elif valid is None:
                    continue
                elif v in valid and r.returncode != 0:
                    fail("checkconf %s: %r: valid value refused:\n%s"
                         % (opt, v, out[-500:]))
                elif v not in valid and r.returncode == 0:
                    fail("checkconf %s: %r: bad value accepted" % (opt, v))
                elif v not in valid and not re.search(
                        r"fuzz\.conf:\d+|%s|expected" % re.escape(opt), out):
                    fail("checkconf %s: %r: error does not say what is "
                         "wrong:\n%s" % (opt, v, out[-500:]))

        # set_option against a running server
        ub.start()
        try:
            last = {}
            configured = {o: ub.control("get_option", o, check=False)
                          .stdout.strip() for o in REFUSED}
            for opt in opts:
                valid = KNOWN.get(opt)
                end = start + budget / 2 + budget / 2 * (
                    opts.index(opt) + 1) / len(opts)
                for v in batches(rnd, valid or [], end):
                    if not v or v != v.strip() or "\0" in v or len(v) > 4000:
                        continue  # not one argument of unbound-control
                    # "--": a value such as -1 is not an option of
                    # unbound-control (getopt permutes)
                    r = ub.control("--", "set_option", opt + ":", v,
                                   check=False)
                    counts["set_option"] += 1
                    out = r.stdout + r.stderr
                    if ub.proc.poll() is not None:
                        fail("set_option %s: %r: unbound exited (%s)"
                             % (opt, v, ub.proc.returncode))
                        raise RuntimeError("server gone")
                    if valid is None:
                        continue
                    ok = r.returncode == 0 and out.strip() == "ok"
                    if opt in REFUSED:
                        if (ok or r.returncode == 0 or opt + ":" not in out
                                or REFUSED[opt] not in out):
                            fail("set_option %s %r not refused with what "
                                 "changes it: %s" % (opt, v, out))
                        g = ub.control("get_option", opt, check=False)
                        if g.stdout.strip() != configured[opt]:
                            fail("get_option %s gives %r after a refused "
                                 "set %r, not the configured %r" % (
                                     opt, g.stdout.strip(), v,
                                     configured[opt]))
                    elif v in valid and not ok:
                        fail("set_option %s %r refused: %s" % (opt, v, out))
                    elif v not in valid and (r.returncode == 0 or
                                             "error" not in out):
                        fail("set_option %s %r: bad value accepted or no "
                             "error: %s (exit %d)" % (opt, v, out[-300:],
                                                      r.returncode))
                    if ok:
                        last[opt] = v
                    if opt in last:
                        g = ub.control("get_option", opt, check=False)
                        if g.stdout.strip() != last[opt]:
                            fail("get_option %s gives %r after set %r"
                                 % (opt, g.stdout.strip(), last[opt]))
            st = ub.control("status", check=False)
            if "is running" not in st.stdout:
                fail("status after fuzzing: %s" % st.stdout)
        except RuntimeError as e:
            print("stopped: %s" % e)
        finally:
            rc = ub.stop()
        log = ub.read_log()
        if rc != 0:
            fail("unbound exit status %s on SIGTERM" % rc)
        if SAN.search(log):
            fail("sanitizer report in the server log:\n%s" % log[-3000:])
    print("config fuzz: %d checkconf runs, %d set_option commands, seed %d"
          % (counts["checkconf"], counts["set_option"], seed))
    print("config fuzz: %d passed, %d failed" % (1 if not fails else 0,
                                                   1 if fails else 0))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
