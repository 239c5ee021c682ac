# shim/api: libtermdetect, the termdetect API (include/termdetect.h) over MPI,
# a driver of the algorithm core; installed with its header. Its test runs
# the guide's Algorithm 1 (tests/api/guide-example.c) at 1, 2, 4, 8 ranks.
lib_LTLIBRARIES += %reldir%/libtermdetect.la
include_HEADERS += include/termdetect.h
%canon_reldir%_libtermdetect_la_SOURCES = %reldir%/termdetect.c %reldir%/td_termdetect.h
%canon_reldir%_libtermdetect_la_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
%canon_reldir%_libtermdetect_la_LIBADD = shim/core/libtdcore.la $(MPI_LIBS)
# export only the guide's API: the core's td_* symbols stay private (no clash with libtdshim)
%canon_reldir%_libtermdetect_la_LDFLAGS = -version-info 0:0:0 -no-undefined -export-symbols-regex '^termdetect_'

check_PROGRAMS += tests/api/guide-example tests/api/api-check
tests_api_guide_example_SOURCES = tests/api/guide-example.c
tests_api_guide_example_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
tests_api_guide_example_LDADD = %reldir%/libtermdetect.la $(MPI_LIBS)
tests_api_api_check_SOURCES = tests/api/api-check.c
tests_api_api_check_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
tests_api_api_check_LDADD = %reldir%/libtermdetect.la $(MPI_LIBS)
TESTS += tests/api/test-guide.sh tests/api/test-api.sh
EXTRA_DIST += tests/api/test-guide.sh tests/api/test-api.sh
