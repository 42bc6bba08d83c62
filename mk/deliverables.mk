# Deliverables for operators and upstream (issue 7): Debian packages of the
# fork, a bisect check of the patch series, the upstream submission set.
# Included by the top-level Makefile; uses its B and the base stamp.

DEB := $(B)/deb
# make check-series LAST=K checks only the last K prefixes of the series;
# FORCE=1 checks again the prefixes that passed before with the same inputs.
LAST ?=
# make upstream exports the series onto the pristine tarball of the base,
# or with UPSTREAM=TREE onto an upstream tree (scripts/upstream-tree.sh
# writes one from a fetched upstream git: master); TEST=1 also builds
# the re-exported series there and runs upstream's make test.
TEST ?=
PATCH_FILES := patches/series $(wildcard patches/*.patch)

.PHONY: deb test-deb check-series upstream

# Rebuilt when the series, a patch, the pin or the scripts change; the
# version grows with every commit that changes patches/ or base.pin.
deb: $(DEB)/VERSION
$(DEB)/VERSION: $(B)/base/.stamp base.pin $(PATCH_FILES) scripts/make-deb.sh scripts/deb-version.sh scripts/pin.sh
	scripts/make-deb.sh $(B)/dl patches $(DEB)

# Installs the packages on this machine, runs them, purges them (root).
test-deb: deb
	testcode/test_deb.sh $(DEB)

check-series: $(B)/base/.stamp
	scripts/check-series.sh $(if $(FORCE),--force) $(if $(LAST),--last $(LAST)) \
		$(B)/base patches $(B)/check-series

upstream: $(B)/base/.stamp
	scripts/make-upstream.py $(if $(TEST),--test) $(if $(UPSTREAM),--onto $(UPSTREAM) --fork-base $(B)/base) \
		$(B)/dl patches $(B)/upstream
