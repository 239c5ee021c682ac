# Integration tests of the example programs and the launcher under tdshim
# (mpirun --oversubscribe; see tests/mpi/test-examples-lib.sh). They need
# the examples, the launcher and the shim, all built by `make`.
TDS_EXAMPLE_TESTS = %reldir%/test-run.sh %reldir%/test-examples.sh \
	%reldir%/test-examples-measure.sh %reldir%/test-examples-algos.sh \
	%reldir%/test-examples-async.sh %reldir%/test-examples-skr.sh %reldir%/test-grain.sh \
	%reldir%/test-examples-unsafe.sh %reldir%/test-examples-queue.sh %reldir%/test-tsample.sh
# work_queue (issue 41): every algorithm at 2 ranks in make check, 2 to 8
# ranks and both workloads in make check-long-queue
TESTS += $(TDS_EXAMPLE_TESTS)
EXTRA_DIST += %reldir%/test-examples-lib.sh %reldir%/test-run.sh %reldir%/test-examples.sh \
	%reldir%/test-examples-measure.sh %reldir%/test-examples-algos.sh \
	%reldir%/test-examples-async.sh %reldir%/test-examples-skr.sh %reldir%/test-grain.sh \
	%reldir%/test-examples-unsafe.sh %reldir%/test-examples-queue.sh %reldir%/test-tsample.sh

# The full sweep of the issue-11 examples: every run, the forced-violation
# case included where 4 ranks oversubscribe the cores.
check-long-async: all
	ASYNC_FULL=1 ASYNC_SEEDS=20 ASYNC_SEEDS8=20 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/test-examples-async.sh
.PHONY: check-long-async

# issue 37's grain sweep in full: every algorithm, grain and rank count
check-long-grain: all
	GRAIN_FULL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/test-grain.sh
.PHONY: check-long-grain

check-long-progress: all
	PROGRESS_FULL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS=tests/mpi/progress.sh
.PHONY: check-long-progress

check-long-queue: all
	QUEUE_FULL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS=%reldir%/test-examples-queue.sh
.PHONY: check-long-queue

# Every MPI test again over Open MPI's TCP transport (the inter-node path, on
# the loopback: other eager/rendezvous thresholds and completion order);
# results in test-suite-tcp.log. scripts/check runs a part of it.
check-tcp: all
	TDSHIM_TEST_BTL=tcp,self $(MAKE) $(AM_MAKEFLAGS) check TEST_SUITE_LOG=test-suite-tcp.log \
	    TESTS="$(TDS_MPI_TESTS) $(TDS_EXAMPLE_TESTS)"
.PHONY: check-tcp
