# Core unit tests (TAP, tests/tap.h).
noinst_HEADERS += %reldir%/tap.h %reldir%/core/world.h
# the synchronous world (world.h) every engine and algorithm test drives
check_LTLIBRARIES = %reldir%/core/libtworld.la
%canon_reldir%_core_libtworld_la_SOURCES = %reldir%/core/world.c
check_PROGRAMS += %reldir%/core/test-wire %reldir%/core/test-tree %reldir%/core/test-engine
TESTS += %reldir%/core/test-wire %reldir%/core/test-tree %reldir%/core/test-engine
%canon_reldir%_core_test_wire_LDADD = shim/core/libtdcore-test.la
%canon_reldir%_core_test_tree_LDADD = shim/core/libtdcore-test.la
%canon_reldir%_core_test_engine_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
check_PROGRAMS += %reldir%/core/test-skr %reldir%/core/test-fourcounter %reldir%/core/test-termdetect
TESTS += %reldir%/core/test-skr %reldir%/core/test-fourcounter %reldir%/core/test-termdetect
%canon_reldir%_core_test_skr_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
%canon_reldir%_core_test_fourcounter_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
%canon_reldir%_core_test_termdetect_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
check_PROGRAMS += %reldir%/core/test-hcda %reldir%/core/test-cda
TESTS += %reldir%/core/test-hcda %reldir%/core/test-cda
%canon_reldir%_core_test_hcda_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
%canon_reldir%_core_test_cda_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
check_PROGRAMS += %reldir%/core/test-edod %reldir%/core/test-xulau
TESTS += %reldir%/core/test-edod %reldir%/core/test-xulau
%canon_reldir%_core_test_edod_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la -lm
%canon_reldir%_core_test_xulau_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
check_PROGRAMS += %reldir%/core/test-confirm
TESTS += %reldir%/core/test-confirm
%canon_reldir%_core_test_confirm_LDADD = %reldir%/core/libtworld.la shim/core/libtdcore-test.la
