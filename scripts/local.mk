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

# the report tool (python3 + matplotlib): the command tdshim-report and its
# package tdshim_report (docs/internals.md, "The report tool and the bench
# driver"). In the source tree the command finds the package beside itself
# and the package finds schema.json in ../../shim/report/; installed, the
# package and schema.json go to $(pkgdatadir), and the command is a copy
# whose @pkgdatadir@ placeholder is that directory (made at build time, as
# tdshim-run is). installcheck runs the installed command on a report.
bin_SCRIPTS += %reldir%/installed/tdshim-report
EXTRA_DIST += %reldir%/tdshim-report
CLEANFILES += %reldir%/installed/tdshim-report
%reldir%/installed/tdshim-report: $(top_srcdir)/%reldir%/tdshim-report Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	sed -e 's|@pkgdatadir[@]|$(pkgdatadir)|g' $(top_srcdir)/%reldir%/tdshim-report > $@.tmp && \
	chmod +x $@.tmp && mv -f $@.tmp $@
tdshim_reportdir = $(pkgdatadir)/tdshim_report
dist_tdshim_report_DATA = %reldir%/tdshim_report/__init__.py %reldir%/tdshim_report/common.py \
	%reldir%/tdshim_report/validate.py %reldir%/tdshim_report/load.py %reldir%/tdshim_report/doc.py \
	%reldir%/tdshim_report/tables.py %reldir%/tdshim_report/outdir.py %reldir%/tdshim_report/plots.py \
	%reldir%/tdshim_report/page.py %reldir%/tdshim_report/cli.py
pkgdata_DATA = shim/report/schema.json
# the installed command on the distributed demo run (not under DESTDIR: the
# command names $(pkgdatadir) itself)
installcheck-local: installcheck-report-tool
installcheck-report-tool:
	@if test -n '$(DESTDIR)'; then echo "installcheck: DESTDIR set, the installed tdshim-report not run"; else \
	  out=`'$(bindir)/tdshim-report' '$(abs_top_srcdir)/tests/report/fixture-demo' --no-plots 2>&1` && \
	  echo "$$out" | grep -q '^@--- Detection episodes' && \
	  echo "installcheck: $(bindir)/tdshim-report reads a report with its package from $(pkgdatadir)" || \
	  { echo "installcheck: $(bindir)/tdshim-report failed: $$out" | head -5 >&2; exit 1; }; fi
.PHONY: installcheck-report-tool
EXTRA_DIST += %reldir%/check %reldir%/deps %reldir%/demo %reldir%/tally
