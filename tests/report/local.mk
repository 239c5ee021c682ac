# tests/report: the report writer, the per-rank JSON against its schema,
# the shim's counts against the program's own and Open MPI's monitoring,
# call sites, and scripts/tdshim-report (see Makefile.am; MPI only).
#
# test-writer links shim/report directly (no shim): known inputs, checked
# outputs. The other tests preload shim/.libs/libtdshim.so.
check_PROGRAMS += %reldir%/test-timing %reldir%/test-writer %reldir%/report-prog %reldir%/bench-report \
	%reldir%/test-advice
# test-advice: the advice, a pure function, built without MPI (no MPI_CFLAGS, no MPI_LIBS)
%canon_reldir%_test_advice_SOURCES = %reldir%/test-advice.c shim/report/tdr_advice.c shim/report/tdr_text.c \
	shim/report/tdr_json.c
%canon_reldir%_test_advice_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/shim/report
%canon_reldir%_test_advice_LDADD = -lm
# test-partial-symbols.sh: the partial report's objects name no allocator or stdio (nm)
TESTS += %reldir%/test-advice %reldir%/test-partial-symbols.sh
EXTRA_DIST += %reldir%/test-partial-symbols.sh
%canon_reldir%_test_timing_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/shim/report
%canon_reldir%_test_timing_LDADD = -lm
# the report writer's sources (shim/local.mk lists them with their headers)
tdr_writer_sources = shim/report/tdr.c shim/report/tdr_report.c shim/report/tdr_callsite.c \
	shim/report/tdr_json.c shim/report/tdr_file.c shim/report/tdr_clock.c shim/report/tdr_record.c \
	shim/report/tdr_summary.c shim/report/tdr_advice.c shim/report/tdr_partial.c shim/report/tdr_text.c
%canon_reldir%_test_writer_SOURCES = %reldir%/test-writer.c $(tdr_writer_sources)
%canon_reldir%_test_writer_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/shim/report $(MPI_CFLAGS)
%canon_reldir%_test_writer_LDADD = shim/core/libtdcore.la $(MPI_LIBS) $(UNWIND_LIBS) -lm
# bench-report: the cost of the measurement itself (not a test; bench/RESULTS.md)
%canon_reldir%_bench_report_SOURCES = %reldir%/bench-report.c $(tdr_writer_sources)
%canon_reldir%_bench_report_CPPFLAGS = $(%canon_reldir%_test_writer_CPPFLAGS)
%canon_reldir%_bench_report_LDADD = $(%canon_reldir%_test_writer_LDADD)
%canon_reldir%_report_prog_SOURCES = %reldir%/report-prog.c
%canon_reldir%_report_prog_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
%canon_reldir%_report_prog_LDADD = $(MPI_LIBS)

TESTS += %reldir%/test-timing %reldir%/test-writer.sh %reldir%/test-counts.sh %reldir%/test-monitoring.sh \
	%reldir%/test-callsites.sh %reldir%/test-tool.sh %reldir%/test-files.sh %reldir%/test-utf8.sh \
	%reldir%/test-tool-input.sh %reldir%/test-tool-attack.sh %reldir%/test-tool-plots.sh %reldir%/test-bench-lib.sh
EXTRA_DIST += %reldir%/test-writer.sh %reldir%/test-counts.sh %reldir%/test-monitoring.sh \
	%reldir%/test-callsites.sh %reldir%/test-tool.sh %reldir%/test-files.sh %reldir%/test-utf8.sh %reldir%/report_lib.sh \
	%reldir%/test-tool-input.sh %reldir%/test-tool-attack.sh %reldir%/test-tool-plots.sh \
	%reldir%/test-bench-lib.sh %reldir%/bench_lib.py \
	%reldir%/malformed.py %reldir%/layout_check.py %reldir%/dom_check.py %reldir%/fixture-demo \
	%reldir%/check_writer.py %reldir%/check_counts.py %reldir%/bench-reports.py \
	shim/report/SCHEMA.md shim/report/schema.json
noinst_HEADERS += shim/report/tdr_mpi.h shim/report/tdr_site.h
# the report tests keep their work directories for inspection; make clean
# (and distcheck's distcleancheck) removes them
clean-local: clean-report-work
clean-report-work:
	-rm -rf $(builddir)/tests/report/work-*
.PHONY: clean-report-work

# scripts/tdshim-report on malformed reports, long: 20,000 cases with a new
# seed each time (printed; REPORT_FUZZ_SEED=S repeats a run). Part of
# `make fuzz-long` (tests/fuzz/local.mk), hence of `make check-long`.
fuzz-long: fuzz-long-report
fuzz-long-report:
	REPORT_FUZZ_SEED=$${REPORT_FUZZ_SEED:-`date +%s`} REPORT_FUZZ_CASES=20000 REPORT_FUZZ_CLI_EVERY=200 REPORT_FUZZ_TIMEOUT=7200 \
		$(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/test-tool-input.sh
.PHONY: fuzz-long-report
