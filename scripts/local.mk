# scripts: installed launcher and report tool (see Makefile.am).
# tdshim-run is generated at build time (not by configure) so that
# `make libdir=...` and `make install prefix=...` substitute the final libdir.
bin_SCRIPTS += %reldir%/tdshim-run
EXTRA_DIST += %reldir%/tdshim-run.in
CLEANFILES += %reldir%/tdshim-run

%reldir%/tdshim-run: $(top_srcdir)/%reldir%/tdshim-run.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	sed -e 's|@libdir[@]|$(libdir)|g' -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	  $(top_srcdir)/%reldir%/tdshim-run.in > $@.tmp && chmod +x $@.tmp && mv -f $@.tmp $@

# the report tool (python3 + matplotlib) is installed as is; it checks
# reports against schema.json, found next to it: ../shim/report/ in the
# source tree, ../share/tdshim/ ($(pkgdatadir)) when installed
dist_bin_SCRIPTS = %reldir%/tdshim-report
pkgdata_DATA = shim/report/schema.json
EXTRA_DIST += %reldir%/check %reldir%/deps %reldir%/demo %reldir%/tally
