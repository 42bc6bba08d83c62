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

.PHONY: all deps base src export-patches fork stock hashbug stock-hashbug build run test \
	fork-lookup3 fork-tsan fork-asan fork-debug \
	upstream-test install clean distclean

all: build

deps:
	@scripts/install-deps.sh

# build/base: the pristine base, orig tarball plus Debian's patch series.
$(B)/base/.stamp: base.pin scripts/fetch-base.sh scripts/unpack-base.sh
	@scripts/install-deps.sh
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

# Test-only builds: the fork with lookup3 as the default cache hash (make
# test runs upstream's tests with each hash), and the fork under
# ThreadSanitizer (zone transfer tests).
fork-lookup3: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) --with-cache-hash=lookup3" \
		scripts/build.sh $(SRC) $(B)/fork-lookup3

fork-tsan: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) EXTRA_CFLAGS="-fsanitize=thread -O1 -g" \
		EXTRA_LDFLAGS="-fsanitize=thread" scripts/build.sh $(SRC) $(B)/fork-tsan

# The fork under AddressSanitizer (out of memory during zone writes).
fork-asan: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) EXTRA_CFLAGS="-fsanitize=address -fno-omit-frame-pointer -O1 -g" \
		EXTRA_LDFLAGS="-fsanitize=address" scripts/build.sh $(SRC) $(B)/fork-asan

# Checking build, as upstream's CI builds: asserts (UNBOUND_DEBUG) and the
# lock order checker; make test runs upstream's whole make test in it.
fork-debug: src
	STEADY_PATCHLEVEL=$(PATCHLEVEL) CONFIGURE_FLAGS="$(CONFIGURE_FLAGS) --enable-debug --enable-lock-checks" \
		scripts/build.sh $(SRC) $(B)/fork-debug

# Test-only build with the wildcard-CNAME hash fix reverted (never shipped).
hashbug: src
	scripts/build-hashbug.sh $(SRC) $(B)/fork-hashbug

# The same bug in stock, for benchmarks.
stock-hashbug: base
	scripts/build-hashbug.sh $(B)/base $(B)/stock-hashbug

run: build
	scripts/run-demo.sh $(FORK) $(B)/run $(PORT)

test: build stock hashbug fork-lookup3 fork-tsan fork-asan fork-debug
	testcode/run-tests.sh $(FORK)

install: build
	$(MAKE) -C $(FORK) install DESTDIR="$(DESTDIR)"

clean:
	rm -rf $(FORK) $(STOCK) $(B)/fork-lookup3 $(B)/fork-tsan $(B)/fork-asan $(B)/fork-debug $(B)/fork-hashbug $(B)/fork-hashbug.src $(B)/run $(B)/test

distclean:
	rm -rf $(B)
include mk/deliverables.mk
