# Example programs: ordinary asynchronous MPI programs with no termination
# detection of their own (see examples/ex_common.h). Built with the flags
# mpicc reports, like the shim; used by tests/mpi/test-examples*.sh,
# bench/run and the README.
EX_PROGS = %reldir%/token_ring %reldir%/five_cycle %reldir%/dnc_tree \
	%reldir%/burst_spawn %reldir%/three_phase %reldir%/work_steal \
	%reldir%/aggregated_traversal %reldir%/skr_problems %reldir%/part_halo \
	%reldir%/work_queue
noinst_PROGRAMS += $(EX_PROGS)
noinst_HEADERS += %reldir%/ex_common.h
EX_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
EX_LIBS = $(MPI_LIBS)

%canon_reldir%_token_ring_SOURCES = %reldir%/token_ring.c %reldir%/ex_common.c
%canon_reldir%_token_ring_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_token_ring_LDADD = $(EX_LIBS)
%canon_reldir%_five_cycle_SOURCES = %reldir%/five_cycle.c %reldir%/ex_common.c
%canon_reldir%_five_cycle_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_five_cycle_LDADD = $(EX_LIBS)
%canon_reldir%_dnc_tree_SOURCES = %reldir%/dnc_tree.c %reldir%/ex_common.c
%canon_reldir%_dnc_tree_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_dnc_tree_LDADD = $(EX_LIBS)
%canon_reldir%_burst_spawn_SOURCES = %reldir%/burst_spawn.c %reldir%/ex_common.c
%canon_reldir%_burst_spawn_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_burst_spawn_LDADD = $(EX_LIBS)
%canon_reldir%_three_phase_SOURCES = %reldir%/three_phase.c %reldir%/ex_common.c
%canon_reldir%_three_phase_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_three_phase_LDADD = $(EX_LIBS)
%canon_reldir%_work_steal_SOURCES = %reldir%/work_steal.c %reldir%/ex_common.c
%canon_reldir%_work_steal_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_work_steal_LDADD = $(EX_LIBS)
%canon_reldir%_aggregated_traversal_SOURCES = %reldir%/aggregated_traversal.c %reldir%/ex_common.c
%canon_reldir%_aggregated_traversal_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_aggregated_traversal_LDADD = $(EX_LIBS)
%canon_reldir%_skr_problems_SOURCES = %reldir%/skr_problems.c %reldir%/ex_common.c
%canon_reldir%_skr_problems_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_skr_problems_LDADD = $(EX_LIBS)
%canon_reldir%_part_halo_SOURCES = %reldir%/part_halo.c %reldir%/ex_common.c
%canon_reldir%_part_halo_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_part_halo_LDADD = $(EX_LIBS)
%canon_reldir%_work_queue_SOURCES = %reldir%/work_queue.c %reldir%/ex_common.c
%canon_reldir%_work_queue_CFLAGS = $(EX_CFLAGS)
%canon_reldir%_work_queue_LDADD = $(EX_LIBS)
EXTRA_DIST += %reldir%/README.md
