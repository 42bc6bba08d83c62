# Deliverables for operators and upstream (issue 7): Debian packages of the
# fork, a bisect check of the patch series, the upstream submission set.
# Included by the top-level Makefile; uses its B and the base stamp.

# make deb DIST=trixie builds the packages for that Debian release, in a
# root of it made here (scripts/debian-root.sh), into build/deb-trixie/;
# without DIST, for this machine's release, into build/deb/.
DIST ?=
DEB := $(B)/deb$(if $(DIST),-$(DIST))
DEB_ROOT := $(B)/root-$(DIST)-build
# make check-series LAST=K checks only the last K prefixes of the series;
# FORCE=1 checks again the prefixes that passed before with the same inputs.
LAST ?=
# make upstream exports the series onto the pristine tarball of the base,
# or with UPSTREAM=TREE onto an upstream tree (scripts/upstream-tree.sh
# writes one from a fetched upstream git: master); TEST=1 also builds
# the re-exported series there and runs upstream's make test.
TEST ?=
PATCH_FILES := patches/series $(wildcard patches/*.patch)

.PHONY: deb test-deb test-deb-trixie check-series upstream

# Rebuilt when the series, a patch, the pin or the scripts change; the
# version grows with every commit that changes patches/ or base.pin.
deb: $(DEB)/VERSION
$(DEB)/VERSION: $(B)/base/.stamp base.pin $(PATCH_FILES) scripts/make-deb.sh scripts/deb-version.sh scripts/pin.sh \
		conf/deb/unbound.preinst conf/deb/unbound.prerm $(if $(DIST),scripts/debian-root.sh scripts/in-root.sh)
	$(if $(DIST),scripts/debian-root.sh $(DIST) $(DEB_ROOT) build-essential &&) \
	scripts/make-deb.sh $(if $(DIST),--root $(DEB_ROOT)) $(B)/dl patches $(DEB)

# Installs the packages on this machine, runs them, purges them (root).
test-deb: deb
	testcode/test_deb.sh $(DEB)

# The trixie packages in a trixie root (loopback only, a network namespace
# of its own): Debian 13's unbound, the fork over it, back again, and
# what apt upgrade does in each state (README: Installing).
test-deb-trixie:
	$(MAKE) deb DIST=trixie
	scripts/debian-root.sh trixie $(B)/root-trixie-test bind9-dnsutils python3-minimal dns-root-data
	testcode/test_deb_release.sh $(B)/deb-trixie $(B)/root-trixie-test

# The prefixes that passed are recorded in testcode/check-series.passed
# (commit it with the series): make test checks only the others of the
# last 3.
check-series: $(B)/base/.stamp
	scripts/check-series.sh $(if $(FORCE),--force) $(if $(LAST),--last $(LAST)) \
		--record testcode/check-series.passed $(B)/base patches $(B)/check-series

upstream: $(B)/base/.stamp
	scripts/make-upstream.py $(if $(TEST),--test) $(if $(UPSTREAM),--onto $(UPSTREAM) --fork-base $(B)/base) \
		$(B)/dl patches $(B)/upstream
