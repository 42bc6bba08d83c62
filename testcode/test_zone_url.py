#!/usr/bin/env python3
"""A zone downloaded from a url: (an HTTP server on loopback, Python's
http.server) is written to its zonefile as it was downloaded, with its
comments, directives and layout, with both values of auth-zone-io-thread
(stock 1.22 writes the download; so must the auth-zone I/O thread), and
the zone answers. Then the server's file changes to serial 2, and the
new download is written over it after auth_zone_transfer.

usage: test_zone_url.py BUILDDIR"""

import functools
import http.server
import os
import sys
import tempfile
import threading

import dns.message
import dns.query

from harness.server import free_port
from harness.zone import Secondary, checker, verdict, wait_for

ZONE = "url.example."

TEXT = """; a zone served over HTTP, with comments and directives
$ORIGIN url.example.
$TTL 3600

@       IN SOA ns.url.example. hostmaster.url.example. (
                {serial} ; serial
                3600 600 86400 300 )
        IN NS  ns
ns      IN A   127.0.0.1
; the names
www     IN A   192.0.2.{serial}
txt     300 IN TXT "a TXT" "with two strings"
"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("usage: ")[1], file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    fails, check = checker()

    with tempfile.TemporaryDirectory(prefix="steady-url-") as d:
        www = os.path.join(d, "www")
        os.makedirs(www)
        served = os.path.join(www, "url.example.zone")
        port = free_port()
        httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", port), functools.partial(QuietHandler, directory=www))
        thr = threading.Thread(target=httpd.serve_forever, daemon=True)
        thr.start()
        try:
            for io in (True, False):
                mode = "auth-zone-io-thread: %s" % ("yes" if io else "no")
                with open(served, "w") as f:
                    f.write(TEXT.format(serial=1))
                ub = Secondary(build, os.path.join(d, "unbound-%s" % io), 9, [ZONE],
                               io_thread=io)
                with open(ub.conf) as f:
                    text = f.read()
                text = text.replace("\tprimary: 127.0.0.1@9\n",
                                    "\turl: \"http://127.0.0.1:%d/url.example.zone\"\n" % port)
                with open(ub.conf, "w") as f:
                    f.write(text)
                try:
                    ub.start()
                    for serial in (1, 2):
                        if serial == 2:
                            with open(served, "w") as f:
                                f.write(TEXT.format(serial=2))
                            ub.control("auth_zone_transfer", ZONE)
                        # the download's first line is a comment: the
                        # serial on disk is not read, the text compared
                        ok = ub.wait_serial(ZONE, serial, timeout=60, on_disk=False)
                        check(ok, "%s: serial %d downloaded" % (mode, serial))
                        with open(served) as f:
                            want = f.read()

                        def zonefile():
                            try:
                                with open(ub.zonefile(ZONE)) as f:
                                    return f.read()
                            except OSError:
                                return ""
                        wait_for(lambda: zonefile() == want, 30)
                        got = zonefile()
                        check(got == want, "%s: the zonefile of serial %d is the download "
                              "as it was served (%d bytes, served %d)" % (
                                  mode, serial, len(got), len(want)))
                        q = dns.message.make_query("www." + ZONE, "A")
                        r = dns.query.udp(q, "127.0.0.1", port=ub.port, timeout=5)
                        check(any("192.0.2.%d" % serial in rr.to_text() for rr in r.answer),
                              "%s: www answers from serial %d" % (mode, serial))
                finally:
                    rc = ub.stop()
                check(rc == 0, "%s: unbound exit status %s" % (mode, rc))
                if fails:
                    print(ub.read_log()[-2000:])
        finally:
            httpd.shutdown()
            thr.join()
    return verdict(fails, "zone-url")


if __name__ == "__main__":
    sys.exit(main())
