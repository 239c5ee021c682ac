# Shared by tests/report/test-*.sh. Source after tests/tap.sh.
# Sets: RUN (mpirun with the flags this machine needs), PY (a python3 that
# has jsonschema, else empty), SHIMLIB (libtdshim.so or empty), WORK (a
# fresh scratch directory under the build tree, kept on failure).
: "${top_srcdir:?run through make check}" "${top_builddir:?run through make check}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no inherited TDSHIM_* setting may change what a test measures
for v in $(env | sed -n 's/^\(TDSHIM_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# a hung run must fail the test, not the whole suite's time budget
RUN="timeout -k 5 120 ${MPIRUN:-mpirun} --oversubscribe --bind-to none"
PY=
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import jsonschema' 2>/dev/null; then PY=$p; break; fi
done
SHIMLIB=$top_builddir/shim/.libs/libtdshim.so
[ -f "$SHIMLIB" ] || SHIMLIB=
REPORT_DIR_T=$top_builddir/tests/report
WORK=$REPORT_DIR_T/work-$(basename "$0" .sh)
rm -rf "$WORK" && mkdir -p "$WORK"
SCHEMA=$top_srcdir/shim/report/schema.json

# bail_all N REASON: skip a whole plan of N tests
bail_all() { plan "$1"; i=0; while [ $i -lt "$1" ]; do skip "$2"; i=$((i + 1)); done; exit 0; }
