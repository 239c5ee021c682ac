#!/bin/sh
# tests/diff/diff.sh through Open MPI's pml ucx (the default on InfiniBand
# clusters; here on shared memory with UCX's any transport and device),
# every configuration, seeds 1 and 2, without truncated receives
# (DIFFGEN_NOTRUNC=1: Open MPI 4.1.4's pml ucx crashes natively in the error
# handler of a test or wait that completes a truncated MPI_Imrecv, user
# guide "MPI libraries"). Before tds_wire.c's tds_wire_type left a
# zero-size receive's part out of the header's struct type, every
# configuration with a header crashed here (SIGSEGV in
# ucp_eager_only_handler: diffgen's zero-size receives at NULL made a
# struct whose lower bound was address 0, which pml ucx took for a
# contiguous buffer there). Where this Open MPI cannot select the pml (no
# UCX), every point is a visible skip.
export OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any OMPI_MCA_osc=ucx
export DIFFGEN_NOTRUNC=1 DIFF_TCP=0
DIFF_UCX=1
. "$top_srcdir/tests/diff/diff.sh"
