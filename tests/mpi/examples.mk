# Integration tests of the example programs and the launcher under tdshim
# (mpirun --oversubscribe; see tests/mpi/test-examples-lib.sh). They need
# the examples, the launcher and the shim, all built by `make`.
TESTS += %reldir%/test-run.sh %reldir%/test-examples.sh \
	%reldir%/test-examples-measure.sh %reldir%/test-examples-algos.sh \
	%reldir%/test-examples-async.sh
EXTRA_DIST += %reldir%/test-examples-lib.sh %reldir%/test-run.sh %reldir%/test-examples.sh \
	%reldir%/test-examples-measure.sh %reldir%/test-examples-algos.sh \
	%reldir%/test-examples-async.sh

# The full sweep of the issue-11 examples: 20 seeds at 8 ranks too,
# and the runs known to fail today (test-examples-async.sh says which).
check-long-async: all
	ASYNC_FULL=1 ASYNC_SEEDS=20 ASYNC_SEEDS8=20 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/test-examples-async.sh
.PHONY: check-long-async
