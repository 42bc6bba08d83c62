#!/bin/sh
# Build the libFuzzer targets of Unbound Steady against a build of the fork
# made with clang and -fsanitize=fuzzer-no-link,address,undefined (make
# fork-fuzz): the objects of that build are linked, the code under test
# is compiled again here with the fuzzer's instrumentation.
usage="usage: build.sh FUZZBUILDDIR [TARGET ...]
  TARGET: lruhash_model zonefile_roundtrip zonefile_read (default: all);
  the programs are written to FUZZBUILDDIR/fuzz/TARGET.
  LRUHASH_C (environment): another lruhash.c to test instead of the
  build's, e.g. a copy with a fix reverted, to show the fuzzer finds it."

set -eu
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
case $1 in -h|--help) echo "$usage"; exit 0 ;; esac
bld=$(cd "$1" && pwd)
shift
[ $# -gt 0 ] || set -- lruhash_model zonefile_roundtrip zonefile_read
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
[ -f "$bld/Makefile" ] || { echo "build: $bld is not a configured build" >&2; exit 1; }
srcdir=$(sed -n 's/^srcdir=[[:space:]]*//p' "$bld/Makefile")
case $srcdir in /*) ;; *) srcdir=$bld/$srcdir ;; esac
out=$bld/fuzz
mkdir -p "$out"
CC=${CC:-clang}

# The objects upstream's unittest links (libunbound's and the daemon's
# common objects, with worker_cb.o for the callbacks), minus its own
# test files and main.
cat > "$out/objs.mk" <<'EOF'
print-objs:
	@echo $(UNITTEST_OBJ_LINK)
print-libs:
	@echo $(LDFLAGS) $(LIBS) $(SSLLIB)
EOF
make -C "$bld" -s --no-print-directory -f Makefile -f "$out/objs.mk" print-objs > "$out/objs.txt"
make -C "$bld" -s --no-print-directory -f Makefile -f "$out/objs.mk" print-libs > "$out/libs.txt"
objs=$(tr ' ' '\n' < "$out/objs.txt" | grep -v '^unit' | grep -v '^$' |
	sed 's/\.lo$/.o/')
libs=$(cat "$out/libs.txt")
for o in $objs; do
	# the test objects (readhex, testpkts, worker_cb) are built by
	# upstream's make tests only
	[ -f "$bld/$o" ] || make -C "$bld" -s "${o%.o}.lo" >/dev/null
done
cflags="-g -O1 -fno-omit-frame-pointer -I$bld -I$srcdir -pthread
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
# objs without the given ones, with the build directory's path
without() {
	echo "$objs" | grep -v -x -F "$(printf '%s\n' "$@")" |
		sed "s|^|$bld/|" | tr '\n' ' '
}

for t; do
	case $t in
	lruhash_model)
		lru=${LRUHASH_C:-$srcdir/util/storage/lruhash.c}
		# shellcheck disable=SC2046,SC2086 # word lists
		$CC $cflags -DLRUHASH_MODEL_FUZZ -o "$out/$t" \
			"$top/testcode/cmocka/lruhash_model.c" "$lru" \
			"$srcdir/util/storage/slabhash.c" \
			$(without lruhash.o slabhash.o) $libs ;;
	zonefile_roundtrip|zonefile_read)
		# the harness includes services/authzone.c, for its static
		# functions (az_insert_rr)
		# shellcheck disable=SC2046,SC2086 # word lists
		$CC $cflags -o "$out/$t" "$here/$t.c" \
			$(without authzone.o) $libs ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
	echo "built $out/$t"
done
