# The man pages (issue 30): tdshim-run(1) and tdshim-report(1) from the
# commands' own --help, tdshim(7) from shim/mpi/tds_env.h (every variable,
# its default, accepted values, what it does and which ranks must agree) and
# the core's algorithm list (tdsim --list-algos). Generated at build time by
# docs/gen-man.py, so they cannot disagree with the code; installed by make
# install; installcheck (thus make distcheck) renders the installed pages
# with groff -ww and fails on any warning, and tests/docs/man.sh checks the
# built ones in make check.
man_MANS = %reldir%/tdshim-run.1 %reldir%/tdshim-report.1 %reldir%/tdshim.7
CLEANFILES += $(man_MANS)
EXTRA_DIST += %reldir%/gen-man.py %reldir%/tdshim.7.in
TDSHIM_GEN_MAN = $(PYTHON3) $(top_srcdir)/%reldir%/gen-man.py

%reldir%/tdshim-run.1: scripts/tdshim-run $(top_srcdir)/%reldir%/gen-man.py
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	scripts/tdshim-run --help >$@.help && \
	$(TDSHIM_GEN_MAN) help tdshim-run 1 '$(PACKAGE_VERSION)' 'run an MPI program under tdshim' <$@.help >$@.tmp && \
	rm -f $@.help && mv -f $@.tmp $@
# COLUMNS: argparse wraps its help to the terminal
%reldir%/tdshim-report.1: $(top_srcdir)/scripts/tdshim-report $(dist_tdshim_report_DATA) $(top_srcdir)/%reldir%/gen-man.py
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	COLUMNS=80 TDSHIM_REPORT_NO_REEXEC=1 $(PYTHON3) $(top_srcdir)/scripts/tdshim-report --help >$@.help && \
	$(TDSHIM_GEN_MAN) help tdshim-report 1 '$(PACKAGE_VERSION)' 'tables, comparisons and plots from tdshim reports' <$@.help >$@.tmp && \
	rm -f $@.help && mv -f $@.tmp $@
%reldir%/tdshim.7: $(top_srcdir)/shim/mpi/tds_env.h $(top_srcdir)/%reldir%/tdshim.7.in $(top_srcdir)/%reldir%/gen-man.py tests/sim/tdsim$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(TDSHIM_GEN_MAN) env $(top_srcdir)/shim/mpi/tds_env.h $(top_srcdir)/%reldir%/tdshim.7.in '$(PACKAGE_VERSION)' \
		"`tests/sim/tdsim --list-algos`" >$@.tmp && mv -f $@.tmp $@

# the installed pages render without a warning (make distcheck runs installcheck)
installcheck-local: installcheck-man-pages
installcheck-man-pages:
	@if command -v groff >/dev/null 2>&1; then \
	  for p in man1/tdshim-run.1 man1/tdshim-report.1 man7/tdshim.7; do \
	    f='$(DESTDIR)$(mandir)'/$$p; \
	    test -s "$$f" || { echo "installcheck: $$f is not installed" >&2; exit 1; }; \
	    w=`groff -man -Tutf8 -ww -z "$$f" 2>&1`; \
	    test -z "$$w" || { echo "installcheck: groff warns on $$f: $$w" >&2; exit 1; }; \
	    echo "installcheck: $$f renders without warnings"; \
	  done; \
	else echo "installcheck: no groff, man pages not rendered"; fi
.PHONY: installcheck-man-pages
