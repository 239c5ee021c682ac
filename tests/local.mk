# Core unit tests (TAP, tests/tap.h).
noinst_HEADERS += %reldir%/tap.h
check_PROGRAMS += %reldir%/core/test-wire %reldir%/core/test-tree %reldir%/core/test-engine
TESTS += %reldir%/core/test-wire %reldir%/core/test-tree %reldir%/core/test-engine
%canon_reldir%_core_test_wire_LDADD = shim/core/libtdcore-test.la
%canon_reldir%_core_test_tree_LDADD = shim/core/libtdcore-test.la
%canon_reldir%_core_test_engine_LDADD = shim/core/libtdcore-test.la
