#!/bin/sh
# Build and run the cmocka tests of util/storage against a configured
# build directory; with a sanitizer, lruhash.c and slabhash.c are compiled
# again with it (the rest of the objects come from the build).
usage="usage: run.sh BUILDDIR [plain|thread|address] [STRESS_SECONDS]
  TESTS (environment): the programs, default lruhash_test lruhash_stress
  cachedump_test;
  lruhash_model (the model-based test, not cmocka) takes MODEL_SEEDS
  (default 300) seeds; address also enables UndefinedBehaviorSanitizer.
  CC (environment): the compiler, default gcc (gcc -m32 for a 32-bit
  build; its LDFLAGS name the libraries)."

set -eu
[ $# -ge 1 ] && [ $# -le 3 ] || { echo "$usage" >&2; exit 2; }
bld=$(cd "$1" && pwd)
san=${2:-plain}
secs=${3:-2}
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(sed -n 's/^srcdir=[[:space:]]*//p' "$bld/Makefile")
case $srcdir in /*) ;; *) srcdir=$bld/$srcdir ;; esac
out=$bld/cmocka-$san
mkdir -p "$out"

# The objects upstream's unittest links, minus its own test files and main.
cat > "$out/objs.mk" <<'EOF'
print-objs:
	@echo $(UNITTEST_OBJ_LINK)
print-libs:
	@echo $(LDFLAGS) $(LIBS) $(SSLLIB)
print-includes:
	@echo $(CPPFLAGS) $(CFLAGS)
EOF
make -C "$bld" -s tests >/dev/null
objs=$(make -C "$bld" -s --no-print-directory -f Makefile -f "$out/objs.mk" print-objs |
	tr ' ' '\n' | grep -v '^unit' | grep -v '^$' | sed 's/\.lo$/.o/')
libs=$(make -C "$bld" -s --no-print-directory -f Makefile -f "$out/objs.mk" print-libs)
# the build's include directories too (cachedump_test includes OpenSSL's
# headers, which a 32-bit build has in directories of its own)
includes=$(make -C "$bld" -s --no-print-directory -f Makefile -f "$out/objs.mk" print-includes |
	tr ' ' '\n' | grep '^-I/' | tr '\n' ' ')
cflags="-g -O1 -I$bld -I$srcdir $includes -pthread"
extra=""
case $san in
plain) ;;
thread|address)
	cflags="$cflags -fsanitize=$san -fno-omit-frame-pointer"
	[ "$san" = address ] &&
		cflags="$cflags -fsanitize=undefined -fno-sanitize-recover=undefined"
	# the code under test, instrumented
	objs=$(echo "$objs" | grep -v '^lruhash\.o$' | grep -v '^slabhash\.o$')
	extra="$srcdir/util/storage/lruhash.c $srcdir/util/storage/slabhash.c" ;;
*) echo "$usage" >&2; exit 2 ;;
esac
objs=$(echo "$objs" | sed "s|^|$bld/|" | tr '\n' ' ')

rc=0
for t in ${TESTS:-lruhash_test lruhash_stress cachedump_test}; do
	# shellcheck disable=SC2086 # word lists
	# lruhash_test makes malloc fail (test_grow_backoff) and looks up
	# a key at an entry's write lock (test_insert_or_retrieve_unseen)
	wrap=""
	[ $t = lruhash_test ] && wrap="-Wl,--wrap=malloc -Wl,--wrap=pthread_rwlock_wrlock"
	# cachedump_test runs the daemon's dump_cache (its ssl_printf is a
	# stub in the test)
	own=""
	[ $t = cachedump_test ] && own="$bld/cachedump.o"
	${CC:-gcc} $cflags -o "$out/$t" "$here/$t.c" $own $extra $objs $libs -lcmocka $wrap
	arg=""
	[ $t = lruhash_stress ] && arg=$secs
	[ $t = lruhash_model ] && arg="-n ${MODEL_SEEDS:-300}"
	echo "== $t ($san)"
	# TSan: halt at the first report, so a race fails the test
	# a hang (a lost wakeup, a spin on a bin that is not there) fails too
	if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
		ASAN_OPTIONS="detect_leaks=1" timeout 300 "$out/$t" $arg; then :
	else echo "$t ($san) failed or timed out"; rc=1; fi
done
exit $rc
