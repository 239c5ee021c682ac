#!/bin/sh
# Every command of the documentation runs (issue 30): each ```sh block marked
# <!-- runnable --> in README.md and docs/*.md (tests/docs/docs.py blocks)
# runs with bash -e in a fresh directory of its own, against this build:
# tdshim-run and tdshim-report of the build on PATH, examples/ of the build,
# mpirun = the configured MPIRUN, the installed library's path
# (/usr/local/lib/libtdshim.so) and the build directory's name in the docs
# (_build/check/) replaced by this build's. One TAP point per block: it
# must exit 0 and, when the docs show its output (an <!-- output --> fence
# after the block: tests/docs/docs.py), print those lines in that order; a
# failing block shows its output. At least 4 blocks must show their output.
# Blocks that need a cluster (sbatch, srun) or the reader's own program are
# not marked.
: "${top_srcdir:?run through make check}" "${top_builddir:?run through make check}"
. "$top_srcdir/tests/tap.sh"
PY="${PYTHON3:-python3}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
for v in $(env | sed -n 's/^\(TDSHIM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
top_builddir=$(cd "$top_builddir" && pwd)
top_srcdir=$(cd "$top_srcdir" && pwd)
LIB="$top_builddir/shim/.libs/libtdshim.so"
if [ ! -f "$LIB" ] || [ ! -x "$top_builddir/scripts/tdshim-run" ]; then
    echo "1..0 # SKIP no MPI build (libtdshim.so, tdshim-run)"
    exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tdshim-docs.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
# mpirun in the docs is the launcher the tests are configured with (by its
# full path: the stand-in below comes first on PATH)
MPIRUN=$(command -v "${MPIRUN:-mpirun}") || { echo "1..0 # SKIP no launcher ${MPIRUN:-mpirun}"; exit 0; }
export MPIRUN
printf '#!/bin/sh\nexec %s "$@"\n' "$MPIRUN" >"$work/bin/mpirun"
chmod +x "$work/bin/mpirun"
PATH="$work/bin:$top_builddir/scripts:$top_srcdir/scripts:$PATH"
export PATH

"$PY" "$top_srcdir/tests/docs/docs.py" blocks "$top_srcdir" >"$work/blocks" || exit 99
n=$(tr -cd '\0' <"$work/blocks" | wc -c)
shown=$(cd "$top_srcdir" && grep -A 1 -h '^<!-- output -->$' README.md docs/*.md | grep -c '^```')
plan $((n + 1))
[ "$n" -ge 8 ] && [ "$shown" -ge 4 ]
ok $? "the docs have runnable blocks ($n), $shown with the output they print"
i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    d="$work/b$i"
    mkdir "$d"
    ln -s "$top_builddir/examples" "$d/examples"
    # block i: its file:line, then its commands with this build's paths
    "$PY" - "$work/blocks" $i "$LIB" "$top_builddir/" >"$d/block.sh" <<'PY'
import re, sys
blocks = open(sys.argv[1], encoding="utf-8").read().split("\0")
where, _, text = blocks[int(sys.argv[2]) - 1].partition("\n")
subst = {"/usr/local/lib/libtdshim.so": sys.argv[3], "_build/check/": sys.argv[4]}
text = re.sub("|".join(map(re.escape, subst)), lambda m: subst[m.group(0)], text)
print("# " + where + "\n" + text)
PY
    where=$(sed -n '1s/^# //p' "$d/block.sh")
    (cd "$d" && timeout 120 bash -e -o pipefail ./block.sh) >"$d/out" 2>&1
    rc=$?
    shows=$("$PY" "$top_srcdir/tests/docs/docs.py" expect "$top_srcdir" "$where" "$d/out")
    ex=$?
    [ $rc -eq 0 ] && [ $ex -eq 0 ]
    st=$?
    [ $st -eq 0 ] || diag "exit $rc, $shows:" "$(cat "$d/block.sh")" "--- output:" "$(tail -30 "$d/out")"
    ok $st "$where runs ($shows)"
done
done_testing
