# MPI tests of libtdshim (TAP shell scripts running MPI programs with and
# without LD_PRELOAD). The programs are plain MPI programs: they never link
# tdshim, which only arrives through LD_PRELOAD.
check_PROGRAMS += %reldir%/transparency %reldir%/tdprog %reldir%/pbsize %reldir%/progmix %reldir%/stuck %reldir%/xjob \
	%reldir%/sigprog %reldir%/mpi4 %reldir%/unwrapped
check_PROGRAMS += %reldir%/sigmatch %reldir%/bigcount %reldir%/ringwait %reldir%/trunc %reldir%/probed %reldir%/collsum %reldir%/stalign
check_PROGRAMS += %reldir%/worktag %reldir%/idlesleep %reldir%/standing %reldir%/lostreq %reldir%/eagerx
check_PROGRAMS += %reldir%/initcost
check_PROGRAMS += %reldir%/stampwire %reldir%/busyreuse %reldir%/busymemo %reldir%/spingap
%canon_reldir%_spingap_SOURCES = %reldir%/spingap.c
%canon_reldir%_spingap_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_spingap_LDADD = $(MPI_LIBS)
%canon_reldir%_busymemo_SOURCES = %reldir%/busymemo.c
%canon_reldir%_busymemo_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_busymemo_LDADD = $(MPI_LIBS)
%canon_reldir%_busyreuse_SOURCES = %reldir%/busyreuse.c
%canon_reldir%_busyreuse_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_busyreuse_LDADD = $(MPI_LIBS)
%canon_reldir%_stampwire_SOURCES = %reldir%/stampwire.c
%canon_reldir%_stampwire_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_stampwire_LDADD = $(MPI_LIBS) $(DL_LIBS)
%canon_reldir%_initcost_SOURCES = %reldir%/initcost.c
%canon_reldir%_initcost_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_initcost_LDADD = $(MPI_LIBS)
%canon_reldir%_eagerx_SOURCES = %reldir%/eagerx.c
%canon_reldir%_eagerx_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_eagerx_LDADD = $(MPI_LIBS)
%canon_reldir%_lostreq_SOURCES = %reldir%/lostreq.c
%canon_reldir%_lostreq_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_lostreq_LDADD = $(MPI_LIBS)
%canon_reldir%_standing_SOURCES = %reldir%/standing.c
%canon_reldir%_standing_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_standing_LDADD = $(MPI_LIBS)
%canon_reldir%_idlesleep_SOURCES = %reldir%/idlesleep.c
%canon_reldir%_idlesleep_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_idlesleep_LDADD = $(MPI_LIBS)
%canon_reldir%_worktag_SOURCES = %reldir%/worktag.c
%canon_reldir%_worktag_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_worktag_LDADD = $(MPI_LIBS)
%canon_reldir%_collsum_SOURCES = %reldir%/collsum.c
%canon_reldir%_collsum_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_collsum_LDADD = $(MPI_LIBS)
%canon_reldir%_stalign_SOURCES = %reldir%/stalign.c
%canon_reldir%_stalign_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_stalign_LDADD = $(MPI_LIBS)
%canon_reldir%_probed_SOURCES = %reldir%/probed.c
%canon_reldir%_probed_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -pthread
%canon_reldir%_probed_LDADD = $(MPI_LIBS) -lpthread
%canon_reldir%_trunc_SOURCES = %reldir%/trunc.c
%canon_reldir%_trunc_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_trunc_LDADD = $(MPI_LIBS)
%canon_reldir%_ringwait_SOURCES = %reldir%/ringwait.c
%canon_reldir%_ringwait_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_ringwait_LDADD = $(MPI_LIBS)
%canon_reldir%_bigcount_SOURCES = %reldir%/bigcount.c
%canon_reldir%_bigcount_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_bigcount_LDADD = $(MPI_LIBS)
# the instruction budget of the per-message path (callgrind over bench/msgcount),
# first of the tests below: make -j runs the tests whose logs depend on the
# library (these) after the examples' and the report's, and this one, the
# longest (70 s), then ran last, alone for 40 s
TESTS += tests/perf/icount.sh
# unit tests built from the library's own sources, no MPI call made
TDS_UNIT_CPPFLAGS = $(AM_CPPFLAGS) -DTDS_IN_SHIM -I$(top_srcdir)/shim/mpi -I$(top_builddir)/shim/mpi \
	-I$(top_srcdir)/shim/report $(MPI_CFLAGS)
# the flat receives' handle set (shim/mpi/tds_req.h)
check_PROGRAMS += %reldir%/test-hset
TESTS += %reldir%/test-hset
%canon_reldir%_test_hset_SOURCES = %reldir%/test-hset.c shim/mpi/tds_req.c
nodist_%canon_reldir%_test_hset_SOURCES = shim/mpi/tds_bodies.h
%canon_reldir%_test_hset_CPPFLAGS = $(TDS_UNIT_CPPFLAGS)
%canon_reldir%_test_hset_LDADD = $(MPI_LIBS)
# the poll clock (shim/mpi/tds_state.h tds_pnow)
check_PROGRAMS += %reldir%/test-pclock
TESTS += %reldir%/test-pclock
%canon_reldir%_test_pclock_SOURCES = %reldir%/test-pclock.c shim/mpi/tds_pclock.c
nodist_%canon_reldir%_test_pclock_SOURCES = shim/mpi/tds_bodies.h
%canon_reldir%_test_pclock_CPPFLAGS = $(TDS_UNIT_CPPFLAGS)
%canon_reldir%_test_pclock_LDADD = $(MPI_LIBS)
%canon_reldir%_unwrapped_SOURCES = %reldir%/unwrapped.c
%canon_reldir%_unwrapped_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_unwrapped_LDADD = $(MPI_LIBS)
%canon_reldir%_xjob_SOURCES = %reldir%/xjob.c
%canon_reldir%_xjob_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_xjob_LDADD = $(MPI_LIBS)
%canon_reldir%_sigmatch_SOURCES = %reldir%/sigmatch.c
%canon_reldir%_sigmatch_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_sigmatch_LDADD = $(MPI_LIBS)
%canon_reldir%_mpi4_SOURCES = %reldir%/mpi4.c
%canon_reldir%_mpi4_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_mpi4_LDADD = $(MPI_LIBS)
%canon_reldir%_transparency_SOURCES = %reldir%/transparency.c
%canon_reldir%_transparency_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_transparency_LDADD = $(MPI_LIBS)
%canon_reldir%_tdprog_SOURCES = %reldir%/tdprog.c
%canon_reldir%_tdprog_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_tdprog_LDADD = $(MPI_LIBS)
%canon_reldir%_progmix_SOURCES = %reldir%/progmix.c
%canon_reldir%_progmix_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_progmix_LDADD = $(MPI_LIBS)
%canon_reldir%_stuck_SOURCES = %reldir%/stuck.c
%canon_reldir%_stuck_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_stuck_LDADD = $(MPI_LIBS)
%canon_reldir%_sigprog_SOURCES = %reldir%/sigprog.c
%canon_reldir%_sigprog_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_sigprog_LDADD = $(MPI_LIBS)
# pbsize: the measurement behind TDS_COPY_MAX_DEFAULT (not a test)
%canon_reldir%_pbsize_SOURCES = %reldir%/pbsize.c
%canon_reldir%_pbsize_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_pbsize_LDADD = $(MPI_LIBS)

# libpcount.so: a tiny PMPI tool preloaded beside tdshim (stack.sh)
check_LTLIBRARIES += %reldir%/libpcount.la
%canon_reldir%_libpcount_la_SOURCES = %reldir%/pcount.c
%canon_reldir%_libpcount_la_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_libpcount_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
%canon_reldir%_libpcount_la_LIBADD = $(MPI_LIBS)
# libponly.so: a layer that defines PMPI_ names only (stack.sh)
check_LTLIBRARIES += %reldir%/libponly.la
%canon_reldir%_libponly_la_SOURCES = %reldir%/ponly.c
%canon_reldir%_libponly_la_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_libponly_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
%canon_reldir%_libponly_la_LIBADD = $(MPI_LIBS) -ldl
# libhspy.so: a PMPI layer after tdshim logging the headers of partitioned companions (partitioned.sh)
check_LTLIBRARIES += %reldir%/libhspy.la
%canon_reldir%_libhspy_la_SOURCES = %reldir%/hspy.c
%canon_reldir%_libhspy_la_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_libhspy_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
%canon_reldir%_libhspy_la_LIBADD = $(MPI_LIBS)

# Fortran (fortran.sh): ftoken in the three Fortran bindings, and fmix, a C
# program whose Fortran half exchanges messages with it. Built with the MPI
# library's Fortran wrapper ($(MPIFC)) by the rules below, not by automake's
# Fortran support, so that a machine without a Fortran compiler only skips them.
EXTRA_DIST += %reldir%/ftoken.F90 %reldir%/fmix_c.c %reldir%/fmix_f.F90
TDS_FORTRAN_PROGS = %reldir%/ftoken_mpifh %reldir%/ftoken_mod %reldir%/ftoken_f08 %reldir%/fmix
if HAVE_MPIFC
check_SCRIPTS += $(TDS_FORTRAN_PROGS)
endif
CLEANFILES += $(TDS_FORTRAN_PROGS) %reldir%/fmix_c.o %reldir%/fmix_f.o
%reldir%/ftoken_mpifh: $(top_srcdir)/%reldir%/ftoken.F90
	$(AM_V_GEN)$(MPIFC) -DUSE_MPIFH -o $@ $(top_srcdir)/%reldir%/ftoken.F90
%reldir%/ftoken_mod: $(top_srcdir)/%reldir%/ftoken.F90
	$(AM_V_GEN)$(MPIFC) -o $@ $(top_srcdir)/%reldir%/ftoken.F90
%reldir%/ftoken_f08: $(top_srcdir)/%reldir%/ftoken.F90
	$(AM_V_GEN)$(MPIFC) -DUSE_F08 -o $@ $(top_srcdir)/%reldir%/ftoken.F90
%reldir%/fmix: $(top_srcdir)/%reldir%/fmix_c.c $(top_srcdir)/%reldir%/fmix_f.F90
	$(AM_V_GEN)$(CC) $(CFLAGS) $(MPI_CFLAGS) -c -o %reldir%/fmix_c.o $(top_srcdir)/%reldir%/fmix_c.c && \
	$(MPIFC) -c -o %reldir%/fmix_f.o $(top_srcdir)/%reldir%/fmix_f.F90 && \
	$(MPIFC) -o $@ %reldir%/fmix_c.o %reldir%/fmix_f.o

TDS_MPI_TESTS = %reldir%/transparency.sh %reldir%/config.sh %reldir%/idle.sh %reldir%/notify.sh \
	%reldir%/progress.sh %reldir%/hang.sh %reldir%/threads.sh %reldir%/stack.sh %reldir%/fortran.sh \
	%reldir%/mixed.sh %reldir%/xjob.sh %reldir%/signals.sh %reldir%/mpi4.sh %reldir%/p2p-complete.sh \
	%reldir%/partitioned.sh %reldir%/sigmatch.sh %reldir%/unwrapped.sh %reldir%/bigcount.sh %reldir%/ringwait.sh \
	%reldir%/dupcomm.sh %reldir%/finlate.sh %reldir%/burst.sh %reldir%/trunc.sh %reldir%/probed.sh %reldir%/stalign.sh \
	%reldir%/collsum.sh %reldir%/busypoll.sh %reldir%/worktag.sh %reldir%/idlesleep.sh \
	%reldir%/standing.sh %reldir%/eagerx.sh %reldir%/eagerx-ucx.sh %reldir%/eagerx-mca.sh %reldir%/initcost.sh \
	%reldir%/lostreq.sh %reldir%/hpcc.sh %reldir%/assembly.sh %reldir%/netpipe.sh %reldir%/lammps.sh %reldir%/nwchem.sh %reldir%/starpu.sh %reldir%/hyphy.sh \
	%reldir%/stampwire.sh %reldir%/busyreuse.sh %reldir%/busymemo.sh %reldir%/spingap.sh %reldir%/mumps.sh %reldir%/tachyon.sh %reldir%/scalapack.sh %reldir%/petsc.sh %reldir%/mpi4py.sh %reldir%/coarrays.sh %reldir%/meep.sh %reldir%/memcheck.sh
EXTRA_DIST += %reldir%/say.h %reldir%/tclock.h %reldir%/thirdparty.sh %reldir%/mpi4py_pool.py %reldir%/mpi4py_p2p.py
TESTS += $(TDS_MPI_TESTS)
EXTRA_DIST += $(TDS_MPI_TESTS) %reldir%/mpi-env.sh %reldir%/tsan.supp %reldir%/memcheck.supp %reldir%/hydra-mpirun
EXTRA_DIST += tests/perf/icount.sh tests/perf/cgcost.py
tests/perf/icount.log: shim/libtdshim.la bench/msgcount
# the scripts preload the library: build it before running them
$(TDS_MPI_TESTS:.sh=.log): shim/libtdshim.la
%reldir%/partitioned.log: examples/part_halo %reldir%/libhspy.la
%reldir%/burst.log: bench/burst
%reldir%/memcheck.log: tests/diff/diffgen $(EX_PROGS)
if HAVE_MUMPS
check_PROGRAMS += %reldir%/mumpslap
%canon_reldir%_mumpslap_SOURCES = %reldir%/mumpslap.c
%canon_reldir%_mumpslap_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_mumpslap_LDADD = -ldmumps -lmumps_common $(MPI_LIBS) -lm
endif
EXTRA_DIST += %reldir%/mumpslap.c
if HAVE_TACHYON
check_PROGRAMS += %reldir%/tachyscene
%canon_reldir%_tachyscene_SOURCES = %reldir%/tachyscene.c
%canon_reldir%_tachyscene_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_tachyscene_LDADD = -ltachyon-openmpi -lm $(MPI_LIBS)
endif
EXTRA_DIST += %reldir%/tachyscene.c
check_PROGRAMS += %reldir%/threads
%canon_reldir%_threads_SOURCES = %reldir%/threads.c
%canon_reldir%_threads_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -pthread
%canon_reldir%_threads_LDADD = $(MPI_LIBS) -lpthread
check_PROGRAMS += %reldir%/dupcomm
check_PROGRAMS += %reldir%/finlate
%canon_reldir%_finlate_SOURCES = %reldir%/finlate.c
%canon_reldir%_finlate_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_finlate_LDADD = $(MPI_LIBS)
%canon_reldir%_dupcomm_SOURCES = %reldir%/dupcomm.c
%canon_reldir%_dupcomm_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_dupcomm_LDADD = $(MPI_LIBS)
check_PROGRAMS += %reldir%/thread-late
%canon_reldir%_thread_late_SOURCES = %reldir%/thread-late.c
%canon_reldir%_thread_late_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) -pthread
%canon_reldir%_thread_late_LDADD = $(MPI_LIBS) -lpthread
# the assemblers with Ray too (make check: ABySS only; a Ray run takes 22 s of both cores)
check-long-assembly: all
	ASSEMBLY_RAY="bcj skr:none" $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/assembly.sh
.PHONY: check-long-assembly
# bigmsg: a 3 GiB message (check-long-bigmsg, part of make check-long)
check_PROGRAMS += %reldir%/bigmsg
%canon_reldir%_bigmsg_SOURCES = %reldir%/bigmsg.c
%canon_reldir%_bigmsg_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_bigmsg_LDADD = $(MPI_LIBS)
EXTRA_DIST += %reldir%/bigmsg.sh
check-long-bigmsg: all
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/bigmsg.sh
.PHONY: check-long-bigmsg
# bigcount: MPI-4.0 calls of more than INT_MAX elements, their 2 GiB
# messages in check-long-bigcount (make check runs the small ones)
check-long-bigcount: all
	BIGCOUNT=full $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/bigcount.sh
.PHONY: check-long-bigcount
# fortran's ftoken under every algorithm and every binding (make check: bcj
# and skr under all three, the others under one each)
check-long-fortran: all
	FORTRAN_FULL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/fortran.sh
.PHONY: check-long-fortran
# finlate's loop at the issue's 40 runs (make check: 15)
check-long-finlate: all
	FINLATE_RUNS=40 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/finlate.sh
.PHONY: check-long-finlate
# signals at 25 jobs of 4 ranks, 100 SIGTERMs (make check: 12 jobs)
check-long-signals: all
	SIG_SIZES="4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4 4" $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/signals.sh
.PHONY: check-long-signals
# the programs written by others under every algorithm (make check spreads
# the algorithms over them: tests/mpi/thirdparty.sh, tp_cfg)
check-long-thirdparty: all
	TP_FULL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS="%reldir%/hpcc.sh %reldir%/mumps.sh %reldir%/starpu.sh %reldir%/scalapack.sh %reldir%/hyphy.sh %reldir%/coarrays.sh"
.PHONY: check-long-thirdparty
