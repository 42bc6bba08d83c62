"""Helpers for the zone transfer tests and benchmarks of Unbound Steady:
NSD as the primary on loopback, the fork (or stock) as a secondary with a
zonefile, NOTIFY and the serial of a zonefile on disk (the latency probe
is harness.load.Probe).
Everything stays on 127.0.0.1 and every process is stopped by PID."""

import os
import random
import re
import signal
import socket
import subprocess
import threading
import time

import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.query
import dns.rcode
import dns.rdatatype
import dns.rrset

from .server import WireServer, build_tool, free_port, loopback_conf, stop_pid, wait_running


def zone_text(origin, serial, nrecords, pairs=False, fixed=False, vary=0):
    """A zone with nrecords names h0..hN under origin. Every name has one
    A record 10.<serial%256>.x.y, and with pairs a second one 11.<...>, so
    an answer shows which serial it came from. With fixed, the records
    are the same in every serial (10.0.x.y), only the SOA and the serial
    TXT change, so an IXFR between two serials is small; and the first
    vary names carry the serial after all."""
    s = 0 if fixed else serial % 256
    out = ["$ORIGIN %s\n$TTL 3600\n" % origin,
           "@ IN SOA ns.%s admin.%s %d 3600 600 86400 300\n" % (origin, origin, serial),
           "@ IN NS ns\nns IN A 127.0.0.1\n",
           "serial IN TXT \"%d\"\n" % serial]
    for i in range(nrecords):
        if i < vary:
            out.append("h%d IN A 10.%d.%d.%d\n" % (i, serial % 256, (i >> 8) & 255, i & 255))
            continue
        out.append("h%d IN A 10.%d.%d.%d\n" % (i, s, (i >> 8) & 255, i & 255))
        if pairs:
            out.append("h%d IN A 11.%d.%d.%d\n" % (i, s, (i >> 8) & 255, i & 255))
    return "".join(out)


def write_zone(path, origin, serial, nrecords, pairs=False, fixed=False, vary=0):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(zone_text(origin, serial, nrecords, pairs, fixed, vary))
    os.rename(tmp, path)


def soa_serial(port, zone, timeout=1.0):
    """The SOA serial a server on 127.0.0.1:port answers for zone, or None."""
    try:
        q = dns.message.make_query(zone, "SOA")
        r = dns.query.udp(q, "127.0.0.1", port=port, timeout=timeout)
    except Exception:
        return None
    for rrset in r.answer:
        if rrset.rdtype == dns.rdatatype.SOA:
            return rrset[0].serial
    return None


def wait_all_serials(port, zones, serial, timeout):
    """Poll until every zone of zones answers serial on port (many zones:
    the ones left are asked again every 0.2 s); False at the timeout."""
    left = list(zones)
    end = time.monotonic() + timeout
    while left and time.monotonic() < end:
        left = [z for z in left if soa_serial(port, z, timeout=0.5) != serial]
        if left:
            time.sleep(0.2)
    return not left


def notify(port, zone, timeout=2.0, sport=0):
    """Send a NOTIFY for zone to 127.0.0.1:port from source port sport;
    returns (rcode text, seconds until the answer), or (None, timeout)."""
    m = dns.message.make_query(zone, "SOA")
    m.flags = dns.flags.AA
    m.set_opcode(dns.opcode.NOTIFY)
    t0 = time.monotonic()
    try:
        r = dns.query.udp(m, "127.0.0.1", port=port, timeout=timeout,
                          source="127.0.0.1", source_port=sport)
    except Exception:
        return None, timeout
    return dns.rcode.to_text(r.rcode()), time.monotonic() - t0


SOA_RE = re.compile(r"^\S+\s+\d+\s+IN\s+SOA\s+\S+\s+\S+\s+(\d+)\s")


def file_serial(path):
    """Serial of the SOA on the first line of a zonefile written by
    Unbound, or None if there is no such file (or no SOA first)."""
    try:
        with open(path) as f:
            line = f.readline()
    except OSError:
        return None
    m = SOA_RE.match(line)
    return int(m.group(1)) if m else None


def siphash24(data, key=bytes(16)):
    """SipHash-2-4 of data, the 8 octets as the reference code writes them
    (util/siphash.c): the checksum of the IXFR journal."""
    mask = (1 << 64) - 1

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & mask

    k0 = int.from_bytes(key[:8], "little")
    k1 = int.from_bytes(key[8:], "little")
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & mask
            v[1] = rotl(v[1], 13) ^ v[0]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & mask
            v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & mask
            v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & mask
            v[1] = rotl(v[1], 17) ^ v[2]
            v[2] = rotl(v[2], 32)

    tail = len(data) % 8
    for i in range(0, len(data) - tail, 8):
        m = int.from_bytes(data[i:i + 8], "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    b = ((len(data) & 0xff) << 56) | int.from_bytes(data[len(data) - tail:], "little")
    v[3] ^= b
    rounds(2)
    v[0] ^= b
    v[2] ^= 0xff
    rounds(4)
    return (v[0] ^ v[1] ^ v[2] ^ v[3]).to_bytes(8, "little")


def journal_records(zonefile):
    """The IXFR journal beside a zonefile, zonefile + ".ixfr"
    (services/authzone_journal.c): (the zonefile serial its header names,
    [(from, to, record octets) of the complete records, in order], the
    octets the header and those records take), or None if there is no
    journal or its header is damaged. A record is complete when it fits
    the file and its checksum matches; the first that is not ends it."""
    try:
        with open(zonefile + ".ixfr", "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < 48 or data[:8] != b"UBSJNL01" or siphash24(data[:40]) != data[40:48]:
        return None
    base = int.from_bytes(data[8:12], "big")
    records, pos = [], 48
    while len(data) - pos >= 24 and data[pos:pos + 4] == b"IXFR":
        frm, to, n = (int.from_bytes(data[pos + i:pos + i + 4], "big") for i in (4, 8, 12))
        end = pos + 16 + n
        if end + 8 > len(data) or siphash24(data[pos:end]) != data[end:end + 8]:
            break
        records.append((frm, to, end + 8 - pos))
        pos = end + 8
    return base, records, pos


def disk_serial(zonefile):
    """The serial of the version on disk: the zonefile's, followed by the
    complete records of its journal that chain from it (as a read of the
    zonefile replays them when the journal's header names the zonefile;
    that is not checked here)."""
    serial = file_serial(zonefile)
    j = journal_records(zonefile)
    if serial is None or j is None or j[0] != serial:
        return serial
    for frm, to, _ in j[1]:
        if frm != serial:
            break
        serial = to
    return serial


def host_serial_byte(serial, index, fixed=False, vary=0):
    """The second octet of host index's A record in zone_text(serial,
    fixed=fixed, vary=vary): the serial's low byte, or 0 where fixed."""
    return 0 if fixed and index >= vary else serial % 256


def check_zonefile(path, origin, nrecords, pairs=False, fixed=False, vary=None):
    """Parse a whole zonefile written by Unbound: a SOA first, every line a
    complete RR of the zone, the serial TXT matching the SOA, and the number
    of host records of that serial (as zone_text made them with fixed, and
    vary(serial) names that vary). Returns (serial, None) or (None, why)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        return None, "cannot read %s: %s" % (path, e)
    if not text.endswith("\n"):
        return None, "%s does not end with a newline (truncated?)" % path
    lines = text.splitlines()
    m = SOA_RE.match(lines[0]) if lines else None
    if not m:
        return None, "%s has no SOA first" % path
    serial = int(m.group(1))
    hosts = 0
    txt = None
    for line in lines:
        parts = line.split()
        if len(parts) < 5 or parts[2] != "IN":
            return None, "%s: bad line %r" % (path, line)
        if not parts[0].endswith(origin):
            return None, "%s: name outside the zone %r" % (path, line)
        if parts[3] == "A" and parts[0].startswith("h"):
            index = int(parts[0][1:].split(".")[0])
            octet = host_serial_byte(serial, index, fixed,
                                     vary(serial) if vary else 0)
            if parts[4].split(".")[1] != str(octet):
                return None, "%s: record of another serial than %d: %r" % (
                    path, serial, line)
            hosts += 1
        elif parts[3] == "TXT" and parts[0].startswith("serial."):
            txt = parts[4].strip('"')
    want = nrecords * (2 if pairs else 1)
    if hosts != want:
        return None, "%s: %d host records for serial %d, want %d" % (
            path, hosts, serial, want)
    if txt != str(serial):
        return None, "%s: serial TXT %r, SOA %d" % (path, txt, serial)
    return serial, None


def checker():
    """A test's list of failures, and check(ok, what), which prints an
    ok or FAIL line for what and adds what to the list when not ok."""
    fails = []

    def check(ok, what):
        print("%s: %s" % ("ok" if ok else "FAIL", what), flush=True)
        if not ok:
            fails.append(what)
    return fails, check


def wait_for(cond, timeout, step=0.05):
    """Call cond until it is true (True) or timeout seconds passed (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return False


def verdict(fails, what):
    """Print a test's failures and its closing line; returns its exit
    code."""
    for f in fails:
        print("FAIL:", f)
    print("%s: %s" % (what, "FAIL" if fails else "OK"))
    return 1 if fails else 0


def ldns_check(path, origin):
    """Parse the zonefile with ldns-read-zone; returns None or the error."""
    r = subprocess.run(["ldns-read-zone", "-E", "SOA", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "ldns-read-zone %s: %s" % (path, (r.stderr or r.stdout).strip())
    if origin not in r.stdout:
        return "ldns-read-zone %s: no SOA of %s" % (path, origin)
    return None


def dnssec_keys(workdir, origin):
    """Make a KSK and a ZSK (ECDSA P-256) for origin in workdir with
    ldns-keygen; returns their file names without .key/.private, KSK
    first."""
    keys = []
    for ksk in (True, False):
        out = subprocess.run(["ldns-keygen", "-a", "ECDSAP256SHA256"] + (["-k"] if ksk else []) +
                             [origin], cwd=workdir, capture_output=True, text=True, check=True)
        keys.append(os.path.join(workdir, out.stdout.strip()))
    return keys


def sign_zone(path, origin, keys, zonemd=False, expire=None):
    """Sign the zonefile path with ldns-signzone (NSEC), with a ZONEMD
    (SIMPLE, SHA384) if zonemd, with signatures that expire expire
    seconds from now if given (ldns-signzone's default is 4 weeks);
    returns the signed file's path."""
    opts = ["-z", "1:1"] if zonemd else []
    if expire is not None:
        opts += ["-e", time.strftime("%Y%m%d%H%M%S", time.gmtime(time.time() + expire))]
    subprocess.run(["ldns-signzone"] + opts + ["-o", origin, path] + keys,
                   cwd=os.path.dirname(path), check=True)
    return path + ".signed"


class SignedDelegation:
    """A signed parent zone and a signed child zone with a ZONEMD, for
    ZONEMD checks below a trust anchor: the parent's keys, its zonefile
    (with the child's DS) and the child's keys are made in workdir;
    child_zonefile() writes a new serial of the child, signed."""

    def __init__(self, workdir, parent="example.", child="sec.example.", names=1000):
        self.dir = os.path.abspath(workdir)
        os.makedirs(self.dir, exist_ok=True)
        self.parent, self.child, self.names = parent, child, names
        self.pkeys = dnssec_keys(self.dir, parent)
        self.ckeys = dnssec_keys(self.dir, child)
        # the keys of an unannounced rollover (rollover()): the child's
        # DNSKEY changes at once, the parent has their DS all along
        self.next_ckeys = dnssec_keys(self.dir, child)
        self.anchor = self.pkeys[0] + ".key"
        ds = "\n".join(subprocess.run(
            ["ldns-key2ds", "-n", "-2", k[0] + ".key"], capture_output=True, text=True,
            check=True).stdout.strip() for k in (self.ckeys, self.next_ckeys))
        label = child[:-len(parent) - 1]
        path = os.path.join(self.dir, "parent.unsigned")
        with open(path, "w") as f:
            f.write("$ORIGIN %s\n$TTL 3600\n"
                    "@ IN SOA ns.%s hostmaster.%s 1 3600 600 86400 300\n"
                    "@ IN NS ns\nns IN A 127.0.0.1\n"
                    "%s IN NS ns.%s\nns.%s IN A 127.0.0.1\n%s\n"
                    % (parent, parent, parent, label, label, label, ds))
        self.parent_signed = sign_zone(path, parent, self.pkeys)

    def child_zonefile(self, serial, dest, expire=None):
        """Write serial of the child, signed with a ZONEMD, to dest: names
        h0..hN with an A record 10.<serial>.x.y, and a TXT with the
        serial; signatures expire in expire seconds if given."""
        c = self.child
        out = ["$ORIGIN %s\n$TTL 3600\n" % c,
               "@ IN SOA ns.%s hostmaster.%s %d 3600 600 86400 300\n" % (c, c, serial),
               "@ IN NS ns\nns IN A 127.0.0.1\n",
               "serial IN TXT \"%d\"\n" % serial]
        for i in range(self.names):
            out.append("h%d IN A 10.%d.%d.%d\n" % (i, serial % 256, (i >> 8) & 255, i & 255))
        path = os.path.join(self.dir, "child.unsigned")
        with open(path, "w") as f:
            f.write("".join(out))
        os.replace(sign_zone(path, c, self.ckeys, zonemd=True, expire=expire), dest)

    def rollover(self):
        """The child's next serials are signed with new keys only."""
        self.ckeys = self.next_ckeys

    def secondary_conf(self, conf, parent_port):
        """Change a Secondary's config for the child: the validator (with
        the parent's KSK as trust anchor), zonemd-check: yes, and a stub
        for the parent at parent_port."""
        with open(conf) as f:
            text = f.read()
        text = text.replace("\tmodule-config: \"iterator\"\n",
                            "\tmodule-config: \"validator iterator\"\n"
                            "\ttrust-anchor-file: \"%s\"\n" % self.anchor)
        text = text.replace("\tname: \"%s\"\n" % self.child,
                            "\tname: \"%s\"\n\tzonemd-check: yes\n" % self.child)
        text += "stub-zone:\n\tname: \"%s\"\n\tstub-addr: 127.0.0.1@%d\n" % (
            self.parent, parent_port)
        with open(conf, "w") as f:
            f.write(text)


class WaitProbe(threading.Thread):
    """Asks name A, one query at a time, until stopping is set: the
    longest wait for an answer, and the queries not answered within 5 s
    (lost). For the stall of a reload as a client sees it."""

    def __init__(self, port, name):
        super().__init__(daemon=True)
        self.port = port
        self.name = name
        self.stopping = threading.Event()
        self.longest = 0.0
        self.lost = 0

    def run(self):
        while not self.stopping.is_set():
            q = dns.message.make_query(self.name, "A")
            t = time.monotonic()
            try:
                dns.query.udp(q, "127.0.0.1", port=self.port, timeout=5)
            except Exception:
                self.lost += 1
            self.longest = max(self.longest, time.monotonic() - t)
            time.sleep(0.001)


class AnswerProbe(threading.Thread):
    """Asks names for A over UDP on 127.0.0.1:port, one query at a time,
    until stopping is set: random names of the list with seed, else the
    names in turn from the first-th. judge(name, answer) returns None for
    a right answer, else what is wrong with it; answers counts the
    answers, wrong keeps what judge said and the queries not answered in
    2 s."""

    def __init__(self, port, names, judge, seed=None, first=0):
        super().__init__(daemon=True)
        self.port = port
        self.names = names
        self.judge = judge
        self.seed = seed
        self.first = first
        self.stopping = threading.Event()
        self.answers = 0
        self.wrong = []

    def run(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.settimeout(2.0)
        rnd = random.Random(self.seed) if self.seed is not None else None
        i = self.first
        while not self.stopping.is_set():
            if rnd:
                name = rnd.choice(self.names)
            else:
                name = self.names[i % len(self.names)]
                i += 1
            q = dns.message.make_query(name, "A")
            sock.sendto(q.to_wire(), ("127.0.0.1", self.port))
            try:
                while True:
                    r = dns.message.from_wire(sock.recv(65535))
                    if r.id == q.id:
                        break
            except socket.timeout:
                self.wrong.append("%s: no answer in 2 s" % name)
                continue
            self.answers += 1
            why = self.judge(name, r)
            if why:
                self.wrong.append("%s: %s" % (name, why))
        sock.close()


class SoaPoller(threading.Thread):
    """Queries the SOA of every zone in turn, a few ms apart, on
    127.0.0.1:port, and records (time, zone, serial or None) for every
    query, until stop(). A query that gets no answer is followed at once
    by the next."""

    def __init__(self, port, zones, timeout=0.1, pause=0.003):
        super().__init__(daemon=True)
        self.port, self.zones = port, zones
        self.timeout, self.pause = timeout, pause
        self.rows = []
        self.done = threading.Event()

    def run(self):
        i = 0
        while not self.done.is_set():
            z = self.zones[i % len(self.zones)]
            i += 1
            s = soa_serial(self.port, z, timeout=self.timeout)
            self.rows.append((time.monotonic(), z, s))
            if s is None:
                continue
            time.sleep(self.pause)

    def serials(self, zone):
        """The serials answered for zone, in order (None: no answer)."""
        return [s for _, z, s in self.rows if z == zone]

    def stop(self):
        self.done.set()
        self.join()


def changed_zone_set(text, sec, gone, change, new, change_file):
    """Secondary sec's configuration text, changed for a fast_reload that
    keeps its zones but these: the auth-zone gone removed, zone change
    with change_file as its zonefile, and zone new added, from the same
    primary (the first primary: line of text)."""
    out, skip = [], False
    for line in text.splitlines():
        if line and not line[0].isspace():
            # a clause starts
            skip = False
        if line.strip() == 'name: "%s"' % gone:
            # drop the clause: its "auth-zone:" line is the last one out
            out.pop()
            skip = True
        if skip:
            continue
        if line.strip() == 'zonefile: "%s"' % sec.zonefile(change):
            line = '\tzonefile: "%s"' % change_file
        out.append(line)
    primary = [l for l in text.splitlines() if l.strip().startswith("primary:")][0]
    out += ["auth-zone:", '\tname: "%s"' % new, primary,
            '\tzonefile: "%s"' % sec.zonefile(new),
            "\tfor-downstream: yes", "\tfor-upstream: yes", "\tfallback-enabled: no"]
    return "\n".join(out) + "\n"


def valgrind_wrapper(logfile):
    """The command before unbound's that runs it under valgrind's memcheck,
    its report in logfile (may hold %p, the PID), exit status 99 on an
    error or a definite or indirect leak."""
    return ["valgrind", "--leak-check=full", "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect",
            "--error-exitcode=99", "--log-file=" + logfile]


def valgrind_problems(text, complete=True):
    """What a valgrind report (valgrind_wrapper's log) finds: a list of
    lines, empty when clean. complete: the process exited, so the report
    must have its error summary (a process killed with -9 has none)."""
    out = []
    m = re.search(r"ERROR SUMMARY: (\d+) errors", text)
    if m and m.group(1) != "0":
        out.append(m.group(0))
    elif not m and complete:
        out.append("no error summary")
    if not m and re.search(r"^==\d+== (Invalid|Conditional|Syscall param|Mismatched)",
                           text, re.M):
        out.append("an error before the process was killed")
    for kind in ("definitely lost", "indirectly lost"):
        m = re.search(kind + r": ([\d,]+) bytes", text)
        if m and m.group(1) != "0":
            out.append(m.group(0))
    return out


def sanitizer_reports(log):
    """The lines of a log that report a sanitizer finding."""
    return [l for l in log.splitlines() if "Sanitizer" in l or "runtime error" in l]


def log_threads(log, text):
    """The thread numbers of the log lines that contain text (unbound's
    log prefix: name[pid:thread]); the auth-zone I/O thread is number
    num-threads (Secondary.threads)."""
    return {m.group(1) for m in re.finditer(r"unbound\[\d+:(\d+)\] [a-z]+: .*%s" %
                                          re.escape(text), log)}


def check_clean_exit(check, rc, log):
    """check (from checker()) that unbound exited with status 0 and that
    its log has no sanitizer report."""
    check(rc == 0, "unbound exit status %s" % rc)
    bad = sanitizer_reports(log)
    check(not bad, "no sanitizer report in the log%s" % (": " + bad[0] if bad else ""))


def struct_size(builddir, name):
    """sizeof(struct name) in builddir's unbound, from its debug
    information (gdb)."""
    r = subprocess.run(["gdb", "-batch", "-ex", "print sizeof(struct %s)" % name,
                        os.path.join(builddir, "unbound")],
                       capture_output=True, text=True)
    m = re.search(r"^\$1 = (\d+)$", r.stdout, re.M)
    if not m:
        raise RuntimeError("gdb cannot tell sizeof(struct %s): %s%s"
                           % (name, r.stdout, r.stderr))
    return int(m.group(1))


def auth_data_size(builddir, name):
    """The size of the allocation of an auth zone's node for name: struct
    auth_data with the name's wire format after it (patch 0065), as the
    first node of a new version or copy of a zone, its apex, has."""
    return struct_size(builddir, "auth_data") + len(dns.name.from_text(name).to_wire())


def asan_build(builddir):
    """True if builddir's unbound is built with AddressSanitizer."""
    r = subprocess.run(["readelf", "-d", os.path.join(builddir, "unbound")],
                       capture_output=True, text=True)
    return "libasan" in r.stdout


def preload_env(builddir, shim):
    """The environment (a list for env(1)) that preloads shim into
    builddir's unbound; under AddressSanitizer the shim goes before ASan's
    runtime, which then must not check the order, and the first report
    stops unbound."""
    env = ["LD_PRELOAD=" + shim]
    if asan_build(builddir):
        env.append("ASAN_OPTIONS=verify_asan_link_order=0:halt_on_error=1:detect_leaks=1")
    return env


def touch(path):
    """Create the file path, empty (an LD_PRELOAD shim's trigger)."""
    with open(path, "w"):
        pass


def rm(path):
    """Remove the file path if it is there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def nth_wrapper(builddir, shim, trigger, nth, log):
    """The command line (env(1)) that runs builddir's unbound with
    testcode/oomshim.c failing allocation number nth of those made while
    the file trigger exists, logged to log; under AddressSanitizer with
    its slow unwinder, since the shim has no frame pointers and a leak's
    stack would end in it."""
    env = [e + ":fast_unwind_on_malloc=0" if e.startswith("ASAN_OPTIONS=") else e
           for e in preload_env(builddir, shim)]
    return ["env"] + env + ["STEADY_OOM_NTH_TRIGGER=" + trigger,
                            "STEADY_OOM_NTH=%d" % nth, "STEADY_OOM_LOG=" + log]


def nth_count(log):
    """The allocations that oomshim.c counted, from its log at the exit."""
    lines = shim_log_lines(log, "count nth")
    return int(lines[-1].split()[-1]) if lines else 0


def sweep_choice(n, sample, seed, every=False, given=None):
    """The allocations to fail of a sweep over n: given ("K,K,..."), all
    with every or when sample covers them, else sample of them at random
    (seed), the first and the last always."""
    if given:
        return [int(k) for k in given.split(",")]
    if every or sample >= n:
        return list(range(1, n + 1))
    rnd = random.Random(seed)
    return sorted(set([1, n] + rnd.sample(range(2, n), max(0, sample - 2))))


def shim_log_lines(path, prefix):
    """The lines of an LD_PRELOAD shim's log (oomshim.c's STEADY_OOM_LOG)
    that start with prefix ("fail", "hold", "release"); none before the
    shim wrote one."""
    try:
        with open(path) as f:
            return [l for l in f.read().splitlines() if l.startswith(prefix)]
    except FileNotFoundError:
        return []


def build_preload(tmpdir, source):
    """Build an LD_PRELOAD shim of testcode/ (e.g. slowshim.c) into tmpdir;
    returns the path of the .so."""
    testcode = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return build_tool(os.path.join(testcode, source), tmpdir, "-shared", "-fPIC", "-ldl")


def thread_wakeups(pid):
    """{tid: (voluntary context switches, wchan)} of the threads of pid:
    a thread that waits in its event loop and is woken up, by a timer or
    a packet, adds one voluntary switch."""
    out = {}
    base = "/proc/%d/task" % pid
    for tid in os.listdir(base):
        try:
            with open("%s/%s/status" % (base, tid)) as f:
                st = f.read()
            with open("%s/%s/wchan" % (base, tid)) as f:
                wchan = f.read().strip()
        except OSError:
            continue
        m = re.search(r"^voluntary_ctxt_switches:\s+(\d+)", st, re.M)
        out[int(tid)] = (int(m.group(1)) if m else 0, wchan)
    return out


def threads_in_socket_read(pid):
    """The threads of pid that sleep in a blocking read of a unix socket.
    In unbound with the auth-zone I/O thread that is fast_reload's thread
    waiting for the I/O thread's answer (tube_read_msg of pause_ack, a
    socketpair): the workers and the I/O thread wait in epoll or poll."""
    out = []
    base = "/proc/%d/task" % pid
    for tid in os.listdir(base):
        try:
            with open("%s/%s/wchan" % (base, tid)) as f:
                wchan = f.read().strip()
        except OSError:
            continue
        if wchan.startswith("unix_stream_read"):
            out.append(int(tid))
    return out


class Primary:
    """NSD serving zones from workdir on a free loopback port, providing
    transfers to 127.0.0.1."""

    def __init__(self, workdir, zones):
        """zones: list of zone names (with the trailing dot)."""
        self.dir = os.path.abspath(workdir)
        os.makedirs(self.dir, exist_ok=True)
        self.zones = zones
        self.port = free_port()
        self.pidfile = os.path.join(self.dir, "nsd.pid")
        self.conf = os.path.join(self.dir, "nsd.conf")
        self.pid = None
        self.proc = None
        lines = ["server:",
                 "\tip-address: 127.0.0.1@%d" % self.port,
                 "\tzonesdir: \"%s\"" % self.dir,
                 "\tdatabase: \"\"",
                 "\tpidfile: \"%s\"" % self.pidfile,
                 "\tlogfile: \"%s/nsd.log\"" % self.dir,
                 "\txfrdfile: \"%s/xfrd.state\"" % self.dir,
                 "\tzonelistfile: \"%s/zone.list\"" % self.dir,
                 "\tusername: \"\"", "\tchroot: \"\"",
                 "\tserver-count: 1", "\tverbosity: 1",
                 # Debian's NSD limits responses to 200 qps per client
                 # network by default; loads from loopback exceed it
                 "\trrl-ratelimit: 0",
                 "remote-control:", "\tcontrol-enable: no"]
        for z in zones:
            lines += ["zone:", "\tname: \"%s\"" % z,
                      "\tzonefile: \"%s\"" % self.zonefile(z),
                      "\tprovide-xfr: 127.0.0.1 NOKEY"]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def zonefile(self, zone):
        return os.path.join(self.dir, zone.rstrip(".") + ".zone")

    def start(self, serials, timeout=60):
        """Start NSD and wait until it serves zone -> serial (a dict).
        NSD runs in the foreground (-d), a child of this process: as a
        daemon it would call setsid() and so get a scheduler autogroup of
        its own, which Linux starved for 0.4-0.8 s at a time when the
        processes of a benchmark kept both CPUs busy (doc/scale-out.md)."""
        self.out = open(os.path.join(self.dir, "nsd.out"), "w")
        self.proc = subprocess.Popen(["nsd", "-d", "-c", self.conf], stdout=self.out,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.pidfile) and time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("NSD exited at start-up: see %s" % self.dir)
            time.sleep(0.05)
        self.pid = self.proc.pid
        self.wait_serials(serials, deadline - time.monotonic())
        return self

    def wait_serials(self, serials, timeout=60):
        deadline = time.monotonic() + timeout
        for z, s in serials.items():
            while soa_serial(self.port, z) != s:
                if time.monotonic() > deadline:
                    raise RuntimeError("NSD does not serve %s serial %d" % (z, s))
                time.sleep(0.05)

    def reload(self, serials, timeout=60):
        """Reread the zonefiles (SIGHUP) and wait for the new serials."""
        os.kill(self.pid, signal.SIGHUP)
        self.wait_serials(serials, timeout)

    def stop(self):
        if self.pid:
            stop_pid(self.proc, 5)
            self.out.close()
            self.pid = None


class KnotPrimary(Primary):
    """Knot DNS as the primary: it keeps the differences between the
    serials of its zonefiles in its journal and answers IXFR with them
    (NSD 4.6 always sends the whole zone)."""

    def __init__(self, workdir, zones):
        self.dir = os.path.abspath(workdir)
        os.makedirs(self.dir, exist_ok=True)
        self.zones = zones
        self.port = free_port()
        self.conf = os.path.join(self.dir, "knot.conf")
        os.makedirs(os.path.join(self.dir, "db"), exist_ok=True)
        self.pidfile = None
        self.pid = None
        self.proc = None
        lines = ["server:", "    rundir: \"%s\"" % self.dir,
                 "    listen: 127.0.0.1@%d" % self.port,
                 "    user: root:root",
                 "database:", "    storage: \"%s/db\"" % self.dir,
                 "log:", "  - target: \"%s/knot.log\"" % self.dir, "    any: info",
                 "acl:", "  - id: xfr", "    address: 127.0.0.1",
                 "    action: transfer",
                 "template:", "  - id: default", "    storage: \"%s\"" % self.dir,
                 "    zonefile-sync: -1", "    zonefile-load: difference",
                 "    journal-content: changes", "    semantic-checks: off",
                 "zone:"]
        for z in zones:
            lines += ["  - domain: %s" % z, "    file: \"%s\"" % self.zonefile(z),
                      "    acl: xfr"]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start(self, serials, timeout=60):
        self.out = open(os.path.join(self.dir, "knotd.out"), "w")
        self.proc = subprocess.Popen(["knotd", "-c", self.conf],
                                     stdout=self.out, stderr=subprocess.STDOUT)
        self.pid = self.proc.pid
        self.wait_serials(serials, timeout)
        return self

    def reload(self, serials, timeout=60):
        """Reread the zonefiles (knotc zone-reload; the difference to the
        previous serial goes into the journal) and wait for the serials."""
        for z in serials:
            subprocess.run(["knotc", "-c", self.conf, "zone-reload", z],
                           capture_output=True, check=True)
        self.wait_serials(serials, timeout)

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.out.close()
            self.proc = None
            self.pid = None


class Secondary:
    """The fork's (or stock's) unbound as a secondary of the primary, with
    zonefiles in zonedir, on a free loopback port."""

    def __init__(self, builddir, rundir, primary_port, zones, zonedir=None,
                 threads=2, io_thread=None, for_downstream=True, verbosity=1,
                 extra="", upstream_only=(), zonefiles=True, zone_options=()):
        """primary_port: the port of every zone's primary, or a dict of
        zone: port. upstream_only: zones served for-upstream only
        (for-downstream: no), answered through the iterator. zonefiles:
        False for zones without a zonefile. zone_options: more lines of
        every auth-zone: clause (without the tab)."""
        self.builddir = os.path.abspath(builddir)
        self.rundir = os.path.abspath(rundir)
        os.makedirs(self.rundir, exist_ok=True)
        self.zonedir = os.path.abspath(zonedir or self.rundir)
        self.zones = zones
        # the worker threads are 0..threads-1; the auth-zone I/O thread
        # logs as number threads (daemon.c gives it num-threads)
        self.threads = threads
        self.port = free_port()
        self.control_port = self.port + 1
        self.conf = os.path.join(self.rundir, "unbound.conf")
        self.log = os.path.join(self.rundir, "unbound.log")
        self.proc = None
        server = ["log-time-ascii: yes"]
        if io_thread is not None:
            server.append("auth-zone-io-thread: %s" % ("yes" if io_thread else "no"))
        clauses = []
        for z in zones:
            clauses += ["auth-zone:", "\tname: \"%s\"" % z,
                        "\tprimary: 127.0.0.1@%d" % (
                            primary_port[z] if isinstance(primary_port, dict)
                            else primary_port),
                        "\tfor-downstream: %s" % ("yes" if for_downstream and
                                                 z not in upstream_only else "no"),
                        "\tfor-upstream: yes", "\tfallback-enabled: no"]
            if zonefiles:
                clauses.append("\tzonefile: \"%s\"" % self.zonefile(z))
            clauses += ["\t" + line for line in zone_options]
        text = loopback_conf(self.rundir, self.port, self.control_port,
                             threads=threads, verbosity=verbosity, server=server,
                             extra=extra, clauses=clauses)
        with open(self.conf, "w") as f:
            f.write(text)

    def zonefile(self, zone):
        return os.path.join(self.zonedir, zone.rstrip(".") + ".zone")

    def bin(self, name):
        return os.path.join(self.builddir, name)

    def start(self, wrapper=None, timeout=60):
        cmd = [self.bin("unbound"), "-d", "-c", self.conf]
        if wrapper:
            cmd = wrapper + cmd
        self.out = open(os.path.join(self.rundir, "stdout.log"), "a")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT)
        if wait_running(self, timeout):
            return self
        self.kill()
        raise RuntimeError("unbound did not come up:\n" + self.read_log())

    def read_log(self):
        text = ""
        for p in (self.log, os.path.join(self.rundir, "stdout.log")):
            try:
                with open(p, errors="replace") as f:
                    text += f.read()
            except OSError:
                pass
        return text

    def control(self, *args, check=True, timeout=30):
        r = subprocess.run([self.bin("unbound-control"), "-c", self.conf] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError("unbound-control %s failed: %s%s" % (
                " ".join(args), r.stdout, r.stderr))
        return r

    def stats(self, cmd="stats_noreset"):
        out = self.control(cmd).stdout
        stats = {}
        for line in out.splitlines():
            name, sep, value = line.partition("=")
            assert sep and name and "=" not in value, "bad stats line %r" % line
            stats[name] = value
        return stats

    def serial(self, zone):
        return soa_serial(self.port, zone)

    def wait_serial(self, zone, serial, timeout=60, on_disk=True):
        """Wait until zone is served with serial (and written to disk)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.serial(zone) == serial and (
                    not on_disk or file_serial(self.zonefile(zone)) == serial):
                return True
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError("unbound exited:\n" + self.read_log()[-3000:])
            time.sleep(0.05)
        return False

    def stop(self, timeout=60):
        """SIGTERM by PID; returns the exit status."""
        if self.proc is None:
            return None
        rc = stop_pid(self.proc, timeout)
        self.out.close()
        self.proc = None
        if rc is None:
            raise RuntimeError("unbound did not stop within %ds" % timeout)
        return rc

    def kill(self):
        """SIGKILL by PID."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            self.out.close()
            self.proc = None


def rpz_qname_zone(zone, serial, labels, address):
    """The text of an RPZ zone whose QNAME triggers label.bench.<zone>,
    for each of labels, have local data A address."""
    return ("$ORIGIN %s\n$TTL 3600\n@ IN SOA ns.%s hostmaster.%s %d 3600 600 86400 300\n"
            "@ IN NS ns\nns IN A 127.0.0.1\n" % (zone, zone, zone, serial) +
            "".join("%s.bench IN A %s\n" % (lab, address) for lab in labels))


def answers_address(port, name, address, timeout):
    """Whether the server on 127.0.0.1:port answers an A query for name
    with address (an RPZ trigger's local data, say) within timeout s."""
    try:
        r = dns.query.udp(dns.message.make_query(name, "A"), "127.0.0.1",
                          port=port, timeout=timeout)
    except Exception:
        return False
    return any(rd.to_text() == address for rrset in r.answer for rd in rrset)


def list_auth_zone(ub, zone):
    """The unbound-control list_auth_zones line of zone as {field: value}:
    'serial', and the tab separated 'key value ...' fields after it; None
    if the zone is not listed or the command fails (unbound starting).
    An RPZ zone answers no SOA query, its serial is here."""
    r = ub.control("list_auth_zones", check=False)
    for line in r.stdout.splitlines():
        parts = line.split("\t")
        if parts[0] != zone:
            continue
        out = {}
        for part in parts[1:]:
            words = part.split()
            for i in range(0, len(words) - 1, 2):
                out[words[i]] = words[i + 1]
        return out
    return None


def rpz_from_knot(workdir, build, zone, text, io_thread, server_extra=""):
    """Knot, started, serving zone at serial 1 with text, and the built
    unbound (one thread, auth-zone-io-thread io_thread), not started,
    its secondary with zone as an rpz: clause; server_extra as for
    rpz_clause. Returns (knot, unbound)."""
    knot = KnotPrimary(os.path.join(workdir, "knot"), [zone])
    with open(knot.zonefile(zone), "w") as f:
        f.write(text)
    knot.start({zone: 1}, timeout=120)
    ub = Secondary(os.path.abspath(build), os.path.join(workdir, "unbound"), knot.port,
                   [zone], threads=1, io_thread=io_thread)
    rpz_clause(ub, zone, server_extra)
    return knot, ub


def knot_update(knot, ub, zone, serial, text, timeout=120):
    """Give the primary's zone (Knot's, or NSD's: any Primary) the text
    at serial, send ub a NOTIFY, and wait until ub's zonefile has that
    serial; whether it came within timeout s."""
    with open(knot.zonefile(zone), "w") as f:
        f.write(text)
    knot.reload({zone: serial}, timeout=timeout)
    notify(ub.port, zone)
    return wait_for(lambda: file_serial(ub.zonefile(zone)) == serial, timeout)


def rpz_clause(secondary, zone, server_extra=""):
    """Make zone an rpz: clause in secondary's config (it takes no for-*
    or fallback options, and needs the respip module); server_extra,
    lines with their tab and newline, is added to its server: clause."""
    with open(secondary.conf) as f:
        text = f.read()
    text = text.replace("auth-zone:\n\tname: \"%s\"" % zone, "rpz:\n\tname: \"%s\"" % zone)
    for opt in ("\tfor-downstream: yes\n", "\tfor-downstream: no\n",
                "\tfor-upstream: yes\n", "\tfallback-enabled: no\n"):
        text = text.replace(opt, "")
    text = text.replace("\tmodule-config: \"iterator\"\n",
                        "\tmodule-config: \"respip iterator\"\n" + server_extra)
    with open(secondary.conf, "w") as f:
        f.write(text)


class ScriptedPrimary(WireServer):
    """A primary written in Python for transfers that real primaries do
    not send: it serves one zone on 127.0.0.1 (SOA over UDP, AXFR and
    IXFR over TCP) from versions the test gives as lists of RR lines,
    and answers an IXFR from one serial with a difference the test
    scripts (bad_ixfr), even one that does not match the versions. Other
    IXFRs are differences computed from the versions, or the whole zone
    when the client's serial is unknown. While hold_full is set, a
    request that would get the whole zone gets no answer (the connection
    is closed), like a primary that is down for full transfers. Runs in
    threads of this process until stop()."""

    def __init__(self, zone, versions):
        """versions: {serial: [RR text lines, the SOA first]}."""
        self.zone = zone
        self.versions = dict(versions)
        self.serial = min(versions)
        self.bad_ixfr = {}
        self.hold_full = False
        self.requests = []
        self.lock = threading.Lock()
        WireServer.__init__(self)

    def set_serial(self, serial):
        with self.lock:
            self.serial = serial

    def count(self, kind):
        """How many requests of kind ("SOA", "AXFR", "IXFR <from>",
        "held") were seen."""
        with self.lock:
            return sum(1 for r in self.requests if r == kind)

    @staticmethod
    def _rrsets(lines):
        """One RRset per line ("name ttl class type rdata")."""
        return [dns.rrset.from_text(*line.split(None, 4)) for line in lines]

    def _soa(self, serial):
        return self.versions[serial][0]

    def _answer_records(self, q):
        """The RR lines of the answer to the transfer request q, or None
        for no answer."""
        qtype = q.question[0].rdtype
        with self.lock:
            cur = self.serial
            if qtype == dns.rdatatype.IXFR and q.authority:
                have = q.authority[0][0].serial
                self.requests.append("IXFR %d" % have)
                if have == cur:
                    return [self._soa(cur)]
                if (have, cur) in self.bad_ixfr:
                    dels, adds = self.bad_ixfr[(have, cur)]
                    return ([self._soa(cur), self._soa(have)] + dels +
                            [self._soa(cur)] + adds + [self._soa(cur)])
                if have in self.versions:
                    old = set(self.versions[have][1:])
                    new = set(self.versions[cur][1:])
                    return ([self._soa(cur), self._soa(have)] +
                            sorted(old - new) + [self._soa(cur)] +
                            sorted(new - old) + [self._soa(cur)])
            else:
                self.requests.append("AXFR")
            if self.hold_full:
                self.requests.append("held")
                return None
            return self.versions[cur] + [self._soa(cur)]

    def answer(self, data, over_tcp):
        """UDP: the SOA for an SOA query, an empty answer for others; TCP:
        the transfer, or None (the connection closed)."""
        q = dns.message.from_wire(data)
        r = dns.message.make_response(q)
        r.flags |= dns.flags.AA
        if not over_tcp:
            if q.question and q.question[0].rdtype == dns.rdatatype.SOA:
                with self.lock:
                    self.requests.append("SOA")
                    soa = self._soa(self.serial)
                r.answer = self._rrsets([soa])
            return r.to_wire()
        records = self._answer_records(q)
        if records is None:
            return None
        # the RRs in order, each its own RRset: a difference repeats the
        # SOA
        r.answer = self._rrsets(records)
        return r.to_wire(max_size=65535)
