# tests/diff: generated transparency cases, native against tdshim (issue 12)
check_PROGRAMS += %reldir%/diffgen
%canon_reldir%_diffgen_SOURCES = %reldir%/diffgen.c
%canon_reldir%_diffgen_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_diffgen_LDADD = $(MPI_LIBS)
TESTS += %reldir%/diff.sh %reldir%/diff-ucx.sh
EXTRA_DIST += %reldir%/diff.sh %reldir%/diff-ucx.sh
%reldir%/diff.log %reldir%/diff-ucx.log: shim/libtdshim.la
