# tests/sim: tdsim, the deterministic discrete-event simulator driving the
# core (DESIGN.md §2). Two binaries from the same sources: tdsim links the
# production core, tdsim-test the test core with the broken variants
# (TD_ALGO_BROKEN) that test-sim-broken.sh must catch.
TDSIM_SOURCES = %reldir%/tdsim.h %reldir%/tdsim.c %reldir%/sim_int.h %reldir%/sim.c %reldir%/sim_store.c %reldir%/workload.c

noinst_PROGRAMS += %reldir%/tdsim
%canon_reldir%_tdsim_SOURCES = $(TDSIM_SOURCES)
%canon_reldir%_tdsim_LDADD = shim/core/libtdcore.la -lm

check_PROGRAMS += %reldir%/tdsim-test
%canon_reldir%_tdsim_test_SOURCES = $(TDSIM_SOURCES)
%canon_reldir%_tdsim_test_LDADD = shim/core/libtdcore-test.la -lm

TESTS += %reldir%/test-sim-algos.sh %reldir%/test-sim-broken.sh %reldir%/test-sim-cli.sh %reldir%/test-sim-longhaul.sh \
	%reldir%/test-sim-sendwait.sh %reldir%/test-sim-confirm.sh %reldir%/test-sim-busyagain.sh %reldir%/test-sim-misjudge.sh \
	%reldir%/test-sim-finalized.sh
EXTRA_DIST += %reldir%/test-sim-algos.sh %reldir%/test-sim-broken.sh %reldir%/test-sim-cli.sh %reldir%/test-sim-longhaul.sh \
	%reldir%/test-sim-sendwait.sh %reldir%/test-sim-confirm.sh %reldir%/test-sim-busyagain.sh %reldir%/test-sim-misjudge.sh \
	%reldir%/test-sim-finalized.sh \
	%reldir%/README-sim.md %reldir%/bench-sim.sh

# make check-long: 10^7 adversarial schedules over every detector, workload
# and confirmation setting (schedules-long.sh; about 15 min on 1 core)
EXTRA_DIST += %reldir%/schedules-long.sh
check-long-sim: %reldir%/tdsim
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/%reldir%/schedules-long.sh
.PHONY: check-long-sim
