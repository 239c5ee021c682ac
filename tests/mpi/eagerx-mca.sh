#!/bin/sh
# tests/mpi/eagerx.sh at an eager limit Open MPI publishes that is near no
# power of two: btl_vader_eager_limit=6000 (btl_tcp_eager_limit under make
# check-tcp; ob1 sends 5,944 bytes eagerly to a peer, 6,000 less its
# 56-byte header). tdshim reads the limit at
# MPI_Init from Open MPI's MCA variables (tds_init.c, eager_ompi), no
# longer through MPI_T, whose initialisation dlopened every component of
# every framework and added 0.21 s to each rank's MPI_Init here. The
# native run must find that limit, or the setting did not reach Open MPI
# and the points would test nothing. Without the limit read, sends of
# 5,943-5,944 bytes under a 2-byte header go by rendezvous and the
# exchanges hang. Open MPI only (the variable is its own): a visible skip
# elsewhere.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
if [ "$MPI_FLAVOUR" != ompi ]; then
    plan 6
    for i in 1 2 3 4 5 6; do skip "not Open MPI: btl_vader_eager_limit is Open MPI's"; done
    exit 0
fi
# the BTL between the two ranks: shared memory, or TCP (make check-tcp)
case ${TDSHIM_TEST_BTL:-self,vader} in
*tcp*) export OMPI_MCA_btl_tcp_eager_limit=6000 EAGERX_WHY="btl_tcp_eager_limit=6000" ;;
*) export OMPI_MCA_btl_vader_eager_limit=6000 EAGERX_WHY="btl_vader_eager_limit=6000" ;;
esac
export EAGERX_PEER=5944
. "$top_srcdir/tests/mpi/eagerx.sh"
