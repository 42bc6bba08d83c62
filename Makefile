# Unbound Steady: build, run and test the fork of Unbound.
# The base (Debian's unbound source package) is fetched into build/, never
# committed; patches/ holds the fork. See README.md and CONTRIBUTING.md.

# ./configure writes config.mk; variables given to make override it.
-include config.mk

# Installation prefix; /etc/unbound, /run/unbound.pid and the root key stay
# at Debian's paths whatever it is (see scripts/build.sh).
PREFIX ?= /usr/local
# Extra ./configure options, e.g. CONFIGURE_FLAGS="--with-pidfile=/x.pid".
CONFIGURE_FLAGS ?=
# A directory holding the base's tarballs, to build without apt.
BASE_DIR ?=
# Loopback port for make run.
PORT ?= 5353
export PREFIX CONFIGURE_FLAGS BASE_DIR

B := build
SRC := $(B)/src
FORK := $(B)/fork
STOCK := $(B)/stock
PATCHLEVEL = $(shell git -C $(SRC) rev-list --count base..HEAD 2>/dev/null || echo unknown)

.PHONY: all deps deps-test rebase-check FORCE base src export-patches fork stock hashbug stock-hashbug build run test \
	fork-lookup3 fork-tsan fork-asan fork-debug fork-nothreads fork-32 fork-dnscrypt fork-fuzz fuzz soak bench deps-bench \
	upstream-test install install-systemd clean distclean bench-bundle

all: build

# Build and run dependencies only (no daemon); make test adds the test
# tools, with their services kept from starting (scripts/install-deps.sh).
deps:
	@scripts/install-deps.sh build
deps-test:
	@scripts/install-deps.sh test
deps-bench:
	@scripts/install-deps.sh bench

# The base's identity in base.pin (version, suite, files, sums): rewritten
# only when it changes, so other lines of base.pin (the security status)
# do not fetch and unpack the base again.
$(B)/.base-id: FORCE
	@mkdir -p $(B)
	@scripts/pin-id.sh > $@.tmp && { cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@; }
FORCE:

# build/base: the pristine base, orig tarball plus Debian's patch series.
$(B)/base/.stamp: $(B)/.base-id scripts/fetch-base.sh scripts/unpack-base.sh
	@scripts/install-deps.sh build
	rm -rf $(B)/base
	debtar=$$(scripts/fetch-base.sh $(B)/dl | tail -n 1) && \
		scripts/unpack-base.sh $(B)/dl "$$debtar" $(B)/base
	touch $@
base: $(B)/base/.stamp

# build/src: git work tree, base commit tagged "base" plus one per patch.
src: base
	@scripts/make-src.sh $(B)/base patches $(SRC)

export-patches:
	@scripts/export-patches.sh $(SRC) patches

# Both builds use the same configure options and flags.
fork: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) scripts/build.sh $(SRC) $(FORK)

stock: base
	scripts/build.sh $(B)/base $(STOCK)

build: deps fork

# Test-only builds leave out what no test runs in them: the Python module
# and pyunbound (tested in build/fork), and one of libtool's two compiles
# of every object (PIC for the shared library, non-PIC for the static
# one). build/fork-lookup3 keeps the static library, which hash-unit
# links; the others keep the shared one. fork-tsan's make took 37 s
# instead of 73, fork-fuzz's 148 instead of 275 (doc/ci-time.md).
TEST_BUILD_FLAGS = --without-pythonmodule --without-pyunbound

# The fork with lookup3 as the default cache hash (make test runs
# upstream's tests with each hash), and the fork under ThreadSanitizer
# (zone transfer tests). fork-lookup3 is also the checking build of the
# code that ships: asserts and the lock order checker, with the cache
# tables' atomics (lookups without the table lock, rrset_cache_touch
# without the bin lock), where fork-debug checks the code for compilers
# without atomics.
fork-lookup3: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) --with-cache-hash=lookup3 --enable-debug --enable-lock-checks $(TEST_BUILD_FLAGS) --disable-shared" \
		scripts/build.sh $(SRC) $(B)/fork-lookup3

fork-tsan: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) $(TEST_BUILD_FLAGS) --disable-static" \
		EXTRA_CFLAGS="-fsanitize=thread -O1 -g" \
		EXTRA_LDFLAGS="-fsanitize=thread" scripts/build.sh $(SRC) $(B)/fork-tsan

# The fork under AddressSanitizer and UndefinedBehaviorSanitizer (out of
# memory during zone writes, config fuzzing, the soak).
fork-asan: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) $(TEST_BUILD_FLAGS) --disable-static" \
		EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" scripts/build.sh $(SRC) $(B)/fork-asan

# The fork built with clang for libFuzzer (coverage instrumentation,
# AddressSanitizer, UndefinedBehaviorSanitizer), and the fuzz targets
# linked against its objects (testcode/fuzz/): make test fuzzes each.
fork-fuzz: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CC=clang \
		CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) $(TEST_BUILD_FLAGS) --disable-shared" \
		EXTRA_CFLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -O1 -g" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" scripts/build.sh $(SRC) $(B)/fork-fuzz
	testcode/fuzz/build.sh $(B)/fork-fuzz

# Checking build, as upstream's CI builds: asserts (UNBOUND_DEBUG) and the
# lock order checker; make test runs upstream's whole make test in it.
# Its cache tables use no atomics (LRUHASH_NO_ATOMICS, the code for
# compilers without them): lookups take the table lock and
# rrset_cache_touch the bin lock, and the lock checker sees that order.
fork-debug: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) --enable-debug --enable-lock-checks $(TEST_BUILD_FLAGS) --disable-static" \
		EXTRA_CFLAGS="-DLRUHASH_NO_ATOMICS" scripts/build.sh $(SRC) $(B)/fork-debug

# Without thread support, which upstream keeps building: workers are
# processes, and there is no auth-zone I/O thread (auth-zone-io-thread:
# yes works as no). make test runs upstream's make test and a zone
# transfer in it.
fork-nothreads: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) --without-pthreads --without-solaris-threads $(TEST_BUILD_FLAGS) --disable-static" \
		scripts/build.sh $(SRC) $(B)/fork-nothreads

# With DNSCrypt, which Debian's package leaves out but upstream builds: its
# two caches are shared caches too, whose statistics make test checks
# (stats-passes-dnscrypt).
fork-dnscrypt: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) --enable-dnscrypt $(TEST_BUILD_FLAGS) --disable-static" \
		scripts/build.sh $(SRC) $(B)/fork-dnscrypt

# 32-bit (i386, gcc -m32), as Debian builds and tests i386 and armhf:
# make test runs upstream's make test and the cache unit tests in it. Its
# libraries (OpenSSL, expat, cmocka) are Debian's i386 packages unpacked
# in build/i386/root (scripts/fetch-i386-libs.sh), so the build leaves
# out what needs others; run-tests.sh runs its tests with them.
I386_ROOT = $(CURDIR)/$(B)/i386/root
fork-32: src
	scripts/fetch-i386-libs.sh $(B)/i386
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CC="gcc -m32" \
		CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) --host=i686-linux-gnu --build=x86_64-linux-gnu $(TEST_BUILD_FLAGS) --disable-shared \
		--disable-dnstap --disable-cachedb --without-libhiredis --without-libnghttp2 --disable-systemd --without-libevent \
		--with-ssl=$(I386_ROOT)/usr --with-libexpat=$(I386_ROOT)/usr" \
		EXTRA_CFLAGS="-I$(I386_ROOT)/usr/include/i386-linux-gnu" \
		EXTRA_LDFLAGS="-L$(I386_ROOT)/usr/lib/i386-linux-gnu -L$(I386_ROOT)/lib/i386-linux-gnu" \
		scripts/build.sh $(SRC) $(B)/fork-32

# Test-only build with the wildcard-CNAME hash fix reverted (never shipped).
hashbug: src
	scripts/build-hashbug.sh $(SRC) $(B)/fork-hashbug

# The same bug in stock, for benchmarks.
stock-hashbug: base
	scripts/build-hashbug.sh $(B)/base $(B)/stock-hashbug

# Fuzz each target for FUZZ_SECONDS (default 600) with a new random seed
# each run, one after the other; make test runs them with a fixed seed.
fuzz: fork-fuzz fork-asan
	for t in lruhash_model zonefile_roundtrip zonefile_read; do \
		FUZZ_SEED= testcode/fuzz/run.sh $(B)/fork-fuzz $$t $${FUZZ_SECONDS:-600} || exit 1; \
	done
	/usr/bin/python3 testcode/test_fuzz_config.py $(B)/fork-asan $${FUZZ_SECONDS:-600}

# Everything at once for DURATION seconds (default 1800) against the fork
# with AddressSanitizer and UndefinedBehaviorSanitizer (testcode/soak.py);
# make test runs 120 s of it. The result goes to $(B)/soak.md.
soak: deps-test fork-asan
	/usr/bin/python3 testcode/soak.py $(B)/fork-asan --duration $${DURATION:-1800} \
		--report $(B)/soak.md
	# the allocation-failure check, every allocation (make test samples it)
	sh testcode/alloc_sweeps.sh $(B)/fork-asan --all

# Every benchmark, one after the other, into doc/bench/REPORT.md and its
# plots (bench/report.py). QUICK=1: small sizes and short runs into
# build/bench-quick/, a smoke check whose figures are not results.
# ONLY=part,...: run those parts again and replace their sections of the
# report, keeping the others. NAMES=N: the RPZ size of parts rpz-scale
# and rpz-startup, which run only when ONLY names them (default 10^7
# triggers, hours).
QUICK ?=
ONLY ?=
NAMES ?=
# The portable multicore benchmark: build/bench-bundle/ and its tarball
# (scripts/bench-bundle.sh, doc/bench-multicore.md).
bench-bundle: deps-test build stock
	scripts/bench-bundle.sh $(STOCK) $(FORK) $(B)/bench-bundle

bench: deps-bench build stock hashbug stock-hashbug
	flock $(B)/.bench.lock /usr/bin/python3 bench/report.py \
		$(if $(QUICK),--quick --dir $(B)/bench-quick) $(if $(ONLY),--only $(ONLY)) \
		$(if $(NAMES),--names $(NAMES))

run: build
	scripts/run-demo.sh $(FORK) $(B)/run $(PORT)

# Every build of make test appends its times here (scripts/build.sh), and
# the tests' closing report lists them with the tests' own (doc/ci-time.md).
export STEADY_TIMES := $(CURDIR)/$(B)/build-times
TEST_START := $(shell date +%s)
TEST_BUILDS = build stock hashbug fork-lookup3 fork-tsan fork-asan fork-debug fork-nothreads fork-32 fork-dnscrypt fork-fuzz
# The builds run two at a time, after the packages are in: configure is
# serial, so one build at a time kept 1.51 of the 2 CPUs busy
# (doc/ci-time.md). TEST_BUILD_JOBS=1 builds one at a time.
TEST_BUILD_JOBS ?= 2
test: deps-test
	$(MAKE) --no-print-directory -j$(TEST_BUILD_JOBS) $(TEST_BUILDS)
	STEADY_TEST_START=$(TEST_START) testcode/run-tests.sh $(FORK)

# Apply the series to another base given as tarballs in BASE_DIR
# (upstream's release tarball, or Debian's orig + debian tarballs) and
# report per patch what applies and what conflicts: build/rebase-check/.
# BASE_DIR means the other base here, not the pinned one (make base runs
# without it). REBASE_CHECK_FLAGS=--keep-conflicts keeps a conflicting
# patch (its side taken), so that each conflict reported is a patch's own.
REBASE_CHECK_FLAGS ?=
rebase-check:
	@[ -n "$(BASE_DIR)" ] || { echo "usage: make rebase-check BASE_DIR=DIR (DIR: upstream's tarball, or Debian's orig + debian tarballs)" >&2; exit 2; }
	@$(MAKE) --no-print-directory base BASE_DIR=
	scripts/rebase-check.py $(REBASE_CHECK_FLAGS) $(B)/base patches "$(BASE_DIR)" $(B)/rebase-check

install: build
	$(MAKE) -C $(FORK) install DESTDIR="$(DESTDIR)"

# A host that runs Debian's unbound package: a drop-in for its
# unbound.service that starts $(PREFIX)/sbin/unbound instead (README,
# "make install next to Debian's unbound"). It restarts nothing.
DROPIN_DIR = $(DESTDIR)/etc/systemd/system/unbound.service.d
install-systemd: install
	mkdir -p "$(DROPIN_DIR)"
	scripts/systemd-dropin.sh "$(PREFIX)" > "$(DROPIN_DIR)/unbound-steady.conf.tmp"
	mv "$(DROPIN_DIR)/unbound-steady.conf.tmp" "$(DROPIN_DIR)/unbound-steady.conf"
	@echo "wrote $(DROPIN_DIR)/unbound-steady.conf; to use it: systemctl daemon-reload && systemctl restart unbound"

clean:
	rm -rf $(FORK) $(STOCK) $(B)/bench-quick $(B)/fork-lookup3 $(B)/fork-tsan $(B)/fork-asan $(B)/fork-debug $(B)/fork-nothreads $(B)/fork-32 $(B)/fork-dnscrypt $(B)/i386 $(B)/fork-fuzz $(B)/fork-hashbug $(B)/fork-hashbug.src $(B)/run $(B)/test

distclean:
	rm -rf $(B)
# The upstream topics, exported by make upstream onto an upstream tree,
# built and tested there: make upstream-check UPSTREAM=TREE [TOPICS=...].
# TREE here, from the fetched snapshot with the base's release merged
# (doc/upstream.md): scripts/upstream-tree.sh GITDIR master TREE build/base
# release-1.26.0 build/dl/unbound_1.26.1.orig.tar.gz
UPSTREAM ?=
TOPICS ?=
upstream-check:
	@[ -n "$(UPSTREAM)" ] || { echo "usage: make upstream-check UPSTREAM=TREE [TOPICS=...]" >&2; exit 2; }
	$(MAKE) --no-print-directory upstream UPSTREAM="$(UPSTREAM)"
	scripts/upstream-check.sh "$(UPSTREAM)" $(B)/upstream $(TOPICS)
.PHONY: upstream-check

include mk/deliverables.mk
