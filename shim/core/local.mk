# The sans-I/O algorithm core. libtdcore: what the shim and tdsim link;
# libtdcore-test: the same sources plus the deliberately broken variants
# (TD_TEST_BROKEN) that the tests must catch; never installed.
TDCORE_SOURCES = \
	%reldir%/td_core.h %reldir%/td_algo.h \
	%reldir%/td_wire.c %reldir%/td_tree.c %reldir%/td_engine.c %reldir%/td_algos.c \
	%reldir%/bcj.c \
	%reldir%/edod.c \
	%reldir%/xulau.c \
	%reldir%/skr.c %reldir%/fourcounter.c %reldir%/termdetect.c \
	%reldir%/hcda.c %reldir%/cda.c \
	%reldir%/none.c

noinst_LTLIBRARIES += %reldir%/libtdcore.la %reldir%/libtdcore-test.la
%canon_reldir%_libtdcore_la_SOURCES = $(TDCORE_SOURCES)
%canon_reldir%_libtdcore_test_la_SOURCES = $(TDCORE_SOURCES)
%canon_reldir%_libtdcore_test_la_CPPFLAGS = $(AM_CPPFLAGS) -DTD_TEST_BROKEN
