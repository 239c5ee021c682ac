# tests/model: SPIN models of the engine and of bcj, fourcounter and cda
# (README.md there). check.sh verifies them and replays their
# counterexamples through the core (replay.c): the short bounds in `make
# check`, the deeper ones in `make check-long-model` (part of check-long).
check_PROGRAMS += %reldir%/replay
%canon_reldir%_replay_LDADD = tests/core/libtworld.la shim/core/libtdcore-test.la
TESTS += %reldir%/check.sh
EXTRA_DIST += %reldir%/check.sh %reldir%/README.md %reldir%/engine.pml %reldir%/processes.pml \
	%reldir%/bcj.pml %reldir%/fourcounter.pml %reldir%/cda.pml
check-long-model: %reldir%/replay
	MODEL_LEVEL=long top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
		$(SHELL) $(top_srcdir)/%reldir%/check.sh | tee %reldir%/check-long-model.log; \
		! grep -q '^not ok' %reldir%/check-long-model.log
.PHONY: check-long-model
clean-local: clean-local-model
clean-local-model:
	rm -rf %reldir%/runs-short %reldir%/runs-long %reldir%/check-long-model.log
.PHONY: clean-local-model
