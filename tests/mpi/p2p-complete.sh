#!/bin/sh
# Every point-to-point function the MPI library exports is wrapped or
# refused (DESIGN.md section 7, "Do no harm": no message reaches the wire
# without tdshim). The library libtdshim was linked against is asked for its
# point-to-point functions (shim/mpi/p2p-family.sh, as configure does):
#  1. each is in shim/mpi/p2p.list (wrapped, a large-count form, or refused;
#     configure refuses the others at first use, unknown.list, and warns);
#  2. libtdshim defines MPI_<Name> and PMPI_<Name> for each, so neither a C
#     call nor a Fortran binding's PMPI call reaches the library unseen.
# Under MPICH 4.0 that is 58 functions (the MPI-4.0 _c forms, MPI_Isendrecv*,
# partitioned communication); under Open MPI 4.1, 27.
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
SHIM="$top_builddir/shim/.libs/libtdshim.so"
plan 2
libs=$(ldd "$SHIM" | awk '$1 ~ /^libmpi/ && $3 ~ /^\// { print $3 }')
"$top_srcdir/shim/mpi/p2p-family.sh" $libs >"$TMPD/family"
python3 "$top_srcdir/shim/mpi/gen_wrappers.py" --names "$top_srcdir/shim/mpi/p2p.list" | LC_ALL=C sort -u >"$TMPD/listed"
LC_ALL=C comm -23 "$TMPD/family" "$TMPD/listed" >"$TMPD/missing"
n=$(grep -c . "$TMPD/family")
[ "$n" -gt 20 ] && [ ! -s "$TMPD/missing" ]
ok $? "the $n point-to-point functions of $(echo $libs | tr '\n' ' ')are all in p2p.list"
[ -s "$TMPD/missing" ] && diag "not in p2p.list: $(tr '\n' ' ' <"$TMPD/missing")"
nm -D --defined-only "$SHIM" | awk '{ print $NF }' | LC_ALL=C sort -u >"$TMPD/defined"
for f in $(cat "$TMPD/family"); do echo "$f"; echo "P$f"; done | LC_ALL=C sort -u |
    LC_ALL=C comm -23 - "$TMPD/defined" >"$TMPD/undefined"
[ ! -s "$TMPD/undefined" ]
ok $? "libtdshim defines MPI_ and PMPI_ entries for each of them"
[ -s "$TMPD/undefined" ] && diag "not defined by libtdshim: $(tr '\n' ' ' <"$TMPD/undefined" | cut -c1-400)"
done_testing
