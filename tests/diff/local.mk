# tests/diff: generated transparency cases, native against tdshim (issue 12)
check_PROGRAMS += %reldir%/diffgen
%canon_reldir%_diffgen_SOURCES = %reldir%/diffgen.c
%canon_reldir%_diffgen_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_diffgen_LDADD = $(MPI_LIBS)
TESTS += %reldir%/diff.sh %reldir%/diff-ucx.sh
EXTRA_DIST += %reldir%/diff.sh %reldir%/diff-ucx.sh
%reldir%/diff.log %reldir%/diff-ucx.log: shim/libtdshim.la

# generated cases at scale: 40 more seeds (24,000 cases), each also under
# the ignored-tags configurations (make check runs seeds 1 and 2)
check-long-diff: all
	DIFF_SEEDS="$$(seq -s ' ' 101 140)" DIFF_IGN_ALL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/diff.sh
.PHONY: check-long-diff
