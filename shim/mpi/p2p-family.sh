#!/bin/sh
# usage: p2p-family.sh LIBRARY...
# The point-to-point functions the MPI libraries export, by name: every
# MPI_* that sends, receives, probes, starts persistent requests, readies or
# tests partitions, or manages the buffer of buffered sends. configure
# compares them with p2p.list (its unknown.list: refused at first use) and
# tests/mpi/p2p-complete.sh asserts that the list has them all.
for lib in "$@"; do
    nm -D --defined-only "$lib" || exit 1
done | awk '{ print $NF }' | grep -E '^MPI_' |
    grep -iE 'send|recv|probe|pready|parrived|^MPI_Start|^MPI_Buffer_(at|de)tach' | LC_ALL=C sort -u
