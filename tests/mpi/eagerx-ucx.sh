#!/bin/sh
# tests/mpi/eagerx.sh at an eager limit no MPI publishes: UCX's rendezvous
# threshold set by the user, UCX_RNDV_THRESH=6000 (UCX sends fewer bytes
# eagerly: 5,999 to a peer and to the rank itself, measured under Open
# MPI's pml ucx and MPICH's ch4:ucx), which tdshim reads at MPI_Init
# (tds_init.c, eager_env). Open MPI goes through its pml ucx on any
# device (by default it takes only InfiniBand ones); MPICH over UCX reads
# the variable as it is. The native run must find that limit, or the
# variable did not reach UCX and the points would test nothing; where
# this Open MPI cannot select the pml (no UCX), every point is a visible
# skip. Before tdshim read the variable, the exchanges hung under every
# algorithm with a header (3 of 6 points failed by timeout).
export UCX_RNDV_THRESH=6000 EAGERX_LIMIT=5999
export OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any OMPI_MCA_osc=ucx
. "$top_srcdir/tests/mpi/eagerx.sh"
