# Integration tests of the example programs and the launcher under tdshim
# (mpirun --oversubscribe; see tests/mpi/test-examples-lib.sh). They need
# the examples, the launcher and the shim, all built by `make`.
TESTS += %reldir%/test-run.sh %reldir%/test-examples.sh \
	%reldir%/test-examples-measure.sh %reldir%/test-examples-algos.sh
EXTRA_DIST += %reldir%/test-examples-lib.sh %reldir%/test-run.sh %reldir%/test-examples.sh \
	%reldir%/test-examples-measure.sh %reldir%/test-examples-algos.sh
