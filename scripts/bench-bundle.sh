#!/bin/sh
# Write the portable multicore benchmark bundle: stock Unbound and the
# fork, the benchmark programs, dnsperf and busybox, with every shared
# library they load and the dynamic loader, and the run script
# (bench/multicore.sh), so that it runs on any x86-64 Linux machine
# without installing anything (doc/bench-multicore.md).
usage="usage: bench-bundle.sh STOCKDIR FORKDIR OUTDIR
  STOCKDIR, FORKDIR: the release builds (build/stock, build/fork; make
  build stock). OUTDIR is written again (bin/, lib/, data/, run.sh,
  VERSIONS, README), and OUTDIR.tar.gz next to it. Needs gcc, dnsperf
  and apt-get download (for busybox-static), as make deps-test has them."

set -eu
[ $# -eq 3 ] || { echo "$usage" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
stock=$(cd "$1" && pwd) fork=$(cd "$2" && pwd)
out=$3
die() { echo "bench-bundle: error: $*" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || die "the bundle is for x86-64 (its loader is ld-linux-x86-64.so.2)"
for b in "$stock" "$fork"; do
	[ -x "$b/unbound" ] || die "no $b/unbound (make build stock)"
done
command -v dnsperf >/dev/null || die "dnsperf is not installed (make deps-test)"

rm -rf "$out" "$out.tar.gz"
mkdir -p "$out/bin" "$out/lib" "$out/data"
out=$(cd "$out" && pwd)
cp "$stock/unbound" "$out/bin/unbound-stock"
cp "$fork/unbound" "$out/bin/unbound-fork"
# lruhash_bench against each build's objects, as make bench compiles it
for b in stock fork; do
	exe=$(cd "$top" && /usr/bin/python3 -c 'import sys; sys.path.insert(0, "bench"); import lruhash_bench; print(lruhash_bench.build(sys.argv[1]))' "$b") ||
		die "could not build lruhash_bench against $b"
	cp "$exe" "$out/bin/lruhash_bench-$b"
done
gcc -O2 -pthread -o "$out/bin/udpfloor" "$top/bench/udpfloor.c"
cp "$(command -v dnsperf)" "$out/bin/dnsperf"

# busybox, statically linked: the shell and every tool of the run script
bb=$top/build/dl/busybox-static
if ! ls "$bb"/busybox-static_*.deb >/dev/null 2>&1; then
	mkdir -p "$bb"
	(cd "$bb" && apt-get download -q busybox-static) > "$bb/apt.log" 2>&1 ||
		{ cat "$bb/apt.log" >&2; die "apt-get download busybox-static failed"; }
fi
dpkg-deb --fsys-tarfile "$(ls "$bb"/busybox-static_*.deb | tail -n 1)" | tar -xO ./bin/busybox > "$out/bin/busybox"
chmod 755 "$out/bin/busybox"
file -L "$out/bin/busybox" 2>/dev/null | grep -q 'statically linked' || ldd "$out/bin/busybox" 2>&1 | grep -q 'not a dynamic' ||
	die "busybox-static's busybox is not statically linked"

# Every shared library the dynamic programs load, and the loader; the
# run script starts each program as ld-linux-x86-64.so.2 --library-path lib/.
for p in unbound-stock unbound-fork lruhash_bench-stock lruhash_bench-fork udpfloor dnsperf; do
	ldd "$out/bin/$p" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u > "$out/.libs"
while read -r l; do
	case $l in
	*/ld-linux-x86-64.so.2) cp -L "$l" "$out/lib/ld-linux-x86-64.so.2" ;;
	*) cp -L "$l" "$out/lib/" ;;
	esac
done < "$out/.libs"
rm -f "$out/.libs"
chmod 755 "$out/lib/ld-linux-x86-64.so.2"
[ -f "$out/lib/libc.so.6" ] || die "ldd named no libc.so.6"

cp "$top/conf/example.test.zone" "$out/data/"
cp "$top/bench/multicore.sh" "$out/run.sh"
{
	echo "stock: $("$stock/unbound" -V | head -n 1) ($(basename "$stock"), no fork patches)"
	echo "fork: $("$fork/unbound" -V | sed -n 's/^Unbound Steady //p' | cut -d';' -f1)"
} > "$out/VERSIONS"
cat > "$out/README" <<'EOF'
Unbound Steady multicore benchmark bundle (doc/bench-multicore.md in the
fork's repository). Nothing to install; x86-64 Linux. As any user:

    cd DIR && bin/busybox sh run.sh          # a full run, some minutes per thread count
    bin/busybox sh run.sh --quick            # a smoke run of a minute or so

It writes report-HOST-DATE.md here; please send that file back.
Options: bin/busybox sh run.sh --help.
EOF
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "bench-bundle: $out ($(du -sm "$out" | cut -f1) MB), $out.tar.gz ($(du -m "$out.tar.gz" | cut -f1) MB)"
