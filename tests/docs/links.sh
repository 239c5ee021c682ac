#!/bin/sh
# The docs cannot drift (issue 30): relative links and #anchors of README.md
# and docs/*.md resolve, README.md names every TDSHIM_* the code reads
# (shim/, include/), and the user guide's variable table names every
# variable of shim/mpi/tds_env.h with its default (tests/docs/docs.py links).
: "${top_srcdir:?run through make check}"
exec "${PYTHON3:-python3}" "$top_srcdir/tests/docs/docs.py" links "$top_srcdir"
