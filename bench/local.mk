# bench: plain MPI benchmarks and the driver that runs them natively and
# under tdshim in one invocation (bench/run). Not part of make check.
noinst_PROGRAMS += %reldir%/pingpong %reldir%/msgrate
%canon_reldir%_pingpong_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_pingpong_LDADD = $(MPI_LIBS)
%canon_reldir%_msgrate_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_msgrate_LDADD = $(MPI_LIBS)
# bench/run is a command in front of the package bench/tdbench (docs/internals.md)
EXTRA_DIST += %reldir%/tdbench/__init__.py %reldir%/tdbench/common.py %reldir%/tdbench/cli.py \
	%reldir%/tdbench/cost.py %reldir%/tdbench/table1.py %reldir%/tdbench/latency.py \
	%reldir%/tdbench/examples.py %reldir%/tdbench/skr.py %reldir%/tdbench/scale.py
EXTRA_DIST += %reldir%/cgtoggle.h %reldir%/run %reldir%/burst-ab.sh %reldir%/RESULTS.md %reldir%/ab-libs.sh %reldir%/ab-latency.py %reldir%/rate-sides.sh %reldir%/spin-notion.sh %reldir%/recipe-wall.sh %reldir%/ab-example.sh %reldir%/passthru.c %reldir%/ab-hpcc.sh %reldir%/ab-assembly.sh %reldir%/counting-figures.py %reldir%/overlap.sh %reldir%/ab-prog.sh
# overlap: a large message received while its sender computes (bench/RESULTS.md, "Large messages")
noinst_PROGRAMS += %reldir%/overlap
%canon_reldir%_overlap_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_overlap_LDADD = $(MPI_LIBS)
# msgcount: the deterministic workload of the instruction budget (tests/perf)
noinst_PROGRAMS += %reldir%/msgcount
%canon_reldir%_msgcount_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_msgcount_LDADD = $(MPI_LIBS)
# ctlhop: a control hop between two polling ranks, probed or through a persistent receive
noinst_PROGRAMS += %reldir%/ctlhop
%canon_reldir%_ctlhop_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_ctlhop_LDADD = $(MPI_LIBS)
# burst: a passive rank that then sends many messages to itself and to another rank (issue 43, tests/mpi/burst.sh)
noinst_PROGRAMS += %reldir%/burst
%canon_reldir%_burst_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_burst_LDADD = $(MPI_LIBS)
# coldbar: a barrier entered by a rank that worked W us (the reference of detection latency, issue 38)
noinst_PROGRAMS += %reldir%/coldbar
%canon_reldir%_coldbar_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_coldbar_LDADD = $(MPI_LIBS)
# pollmem: a poll per item of work with memory traffic between polls (hpcc MPIRandomAccess's loop; the poll clock)
noinst_PROGRAMS += %reldir%/pollmem
%canon_reldir%_pollmem_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_pollmem_LDADD = $(MPI_LIBS)
