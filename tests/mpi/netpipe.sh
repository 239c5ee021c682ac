#!/bin/sh
# A third-party MPI program under tdshim: NetPIPE (Debian's netpipe-openmpi
# and netpipe-mpich2, installed by scripts/deps), in its integrity-check
# mode (-i): rank 0 and rank 1 exchange messages of 79 sizes from 1 byte to
# 69,632, each a power of two or 1.5 times one, and 3 bytes either side
# (-p 3), and the receiver checks every byte of each. The sizes cross
# every eager limit of the libraries (Open MPI's 4,040 and 968 over shared
# memory, MPICH's 8,255) and their rendezvous; with -p 56 the sizes
# 4,040 and 4,152 sit on Open MPI's limit and 56 bytes over it.
# NetPIPE's own ways of taking a message, each a point per configuration:
#   (none)   MPI_Send / MPI_Recv ping-pong
#   -a       the receive posted before the partner sends (MPI_Irecv + MPI_Wait)
#   -z       MPI_Recv from MPI_ANY_SOURCE
#   -S       synchronous sends (MPI_Ssend)
#   -s       streaming: one side sends every repetition, the other receives
#   -2 -a    both sides send at once (MPI_Isend/MPI_Irecv both ways)
#   -a -O 1,3  send and receive buffers at odd offsets from their alignment
# Every run must end (exit 0) with every size's integrity check passed and
# the same sizes as the native run of that mode; under tdshim the run's
# reports must balance (every primary sent received, bytes too).
# NETPIPE_CFG (ALGO[:PIGGYBACK] words) replaces the configurations every
# mode runs under (scripts/check's sanitizer step runs fewer).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/mpi/mpi-env.sh"
. "$top_srcdir/tests/mpi/thirdparty.sh"
CFG=${NETPIPE_CFG:-"bcj skr:none cda"}
# the default mode under every other algorithm too, and bcj's general entries
CFG_MORE=${NETPIPE_CFG_MORE:-"bcjrd fourcounter termdetect hcda edod xulau bcj:datatype"}
MODES="plain a z S s 2a aO p56"
# MPICH 4.0's NetPIPE (NPmpich2) hangs natively at its first size with -z
[ "$MPI_FLAVOUR" = hydra ] && MODES="plain a S s 2a aO p56"
nmodes=$(echo $MODES | wc -w) ncfg=$(echo $CFG | wc -w) nmore=$(echo $CFG_MORE | wc -w)
npoints=$((nmodes + 2 * nmodes * ncfg + 2 * nmore))
plan $npoints
# the NetPIPE build for the library tdshim is built against
if ldd "$top_builddir/shim/.libs/libtdshim.so" 2>/dev/null | grep -q 'libmpich\.so'; then
    NP=${NETPIPE:-$(command -v NPmpich2)} soname='libmpich\.so'
else
    NP=${NETPIPE:-$(command -v NPopenmpi)} soname='libmpi\.so\.40'
fi
[ -n "$NP" ] || tp_skip_all $npoints "NetPIPE for this MPI is not installed (scripts/deps installs Debian's netpipe-openmpi and netpipe-mpich2)"
ldd "$NP" 2>/dev/null | grep -q "$soname" || tp_skip_all $npoints "$NP is not linked with the MPI library tdshim is built against"

# the mode's NetPIPE options
opts() {
    case $1 in
    plain) echo "-p 3" ;; a) echo "-a -p 3" ;; z) echo "-z -p 3" ;; S) echo "-S -p 3" ;;
    s) echo "-s -p 3" ;; 2a) echo "-2 -a -p 3" ;; aO) echo "-a -O 1,3 -p 3" ;; p56) echo "-p 56" ;;
    esac
}
# rank 0's output alone, its standard error apart: both ranks write to a
# pipe in blocks, and rank 1's lines (written at its exit) landed in the
# middle of rank 0's
cat >"$TMPD/np0" <<EOF
#!/bin/sh
case \${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-0}} in
0) exec "$NP" "\$@" ;;
*) exec "$NP" "\$@" >/dev/null 2>&1 ;;
esac
EOF
chmod +x "$TMPD/np0"
# netpipe MODE NAME [VAR=value...]: one run in $TMPD/NAME; its sizes and
# verdicts, which NetPIPE writes to its standard error, in $TMPD/NAME/facts
# ("N: BYTES bytes ... Integrity check passed")
netpipe() {
    nm=$1 d="$TMPD/$2"
    shift 2
    mkdir -p "$d"
    # shellcheck disable=SC2046
    (cd "$d" && RUN_MPI_TIMEOUT=60 run_mpi 2 "$@" -- "$TMPD/np0" -i -u 70000 -n 3 $(opts "$nm") -o "$d/np.out" \
        >"$d/out" 2>"$d/err")
    n_rc=$?
    grep -E '^ *[0-9]+: +[0-9]+ bytes' "$d/err" | sed 's/  */ /g' >"$d/facts"
    return $n_rc
}
# passed FACTS: how many sizes passed; fails when one did not, or none ran
passed() {
    np_all=$(grep -c . "$1") np_ok=$(grep -c 'Integrity check passed' "$1")
    echo "$np_ok"
    [ "$np_all" -gt 0 ] && [ "$np_all" = "$np_ok" ]
}
one() { # MODE CFG: a run under tdshim, compared with the mode's native run
    cfg_parse "$2"
    name="$1-$a-$pb"
    netpipe "$1" "$name" LD_PRELOAD="$LIB" TDSHIM_ALGO="$a" TDSHIM_PIGGYBACK="$pb" TDSHIM_REPORT=json \
        TDSHIM_REPORT_DIR="$TMPD/$name"
    rc=$?
    n=$(passed "$TMPD/$name/facts")
    tp_points "$1 ($(opts "$1")), $a, piggyback $pb" "ends, $n sizes, every one's integrity check passed, as natively" \
        "$TMPD/native-$1" "$TMPD/$name" $rc 2
}
for m in $MODES; do
    netpipe "$m" "native-$m"
    rc=$?
    n=$(passed "$TMPD/native-$m/facts") || rc=1
    [ "$n" -ge 60 ] || rc=1
    ok $rc "native, $m ($(opts "$m")): ends, $n sizes, every one's integrity check passed"
    [ $rc -eq 0 ] || cat "$TMPD/native-$m/out" "$TMPD/native-$m/err" | tail -n 5 | sed 's/^/# /'
    for cfg in $CFG; do one "$m" "$cfg"; done
done
for cfg in $CFG_MORE; do one plain "$cfg"; done
