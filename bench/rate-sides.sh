#!/bin/bash
# bench/rate-sides.sh [ROUNDS] — the 8-byte message rate and one-way
# latency of native, a PMPI tool that only counts (tests/mpi/pcount.c),
# tdshim header-free (skr) and tdshim with a header (bcj, the default), in
# one invocation, alternating round by round with the order rotating every
# round (these VMs are shared, per-run times bimodal: issue 18's rules).
# Prints each side's quartiles over the rounds and the ratios of the
# medians to native's, and for the rate also the median over the rounds of
# each round's ratio to native (both sides of a round share its load).
# Run from a build directory after `make check` (it uses bench/msgrate,
# bench/pingpong and tests/mpi/.libs/libpcount.so there). Used for
# bench/RESULTS.md "Message rate against native, issue 28".
#   MSGRATE_ARGS="--statuses 1": extra msgrate options, every side
#   HAND=1: a fifth side, native msgrate with --hand-header 2 (a 2-byte
#           header packed and stripped by hand: the floor of bcj's copy)
#   TLOOP=1: another side, tloop: native, its ping-pong receiving with
#           MPI_Irecv + an MPI_Test loop (pingpong --test-loop: how a
#           receive that must keep polling waits, as tdshim's blocking
#           receive does inside); its msgrate is native's again
#   RBYTES=1: another side, pcountb: the counting tool counting received
#           bytes too (PCOUNT_RECV_BYTES=1: statuses asked of MPI_Waitall,
#           MPI_Get_count of each), as tdshim's report does
set -u
rounds=${1:-31}
extra=${MSGRATE_ARGS:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
lib=$PWD/shim/.libs/libtdshim.so
pc=$PWD/tests/mpi/.libs/libpcount.so
for f in "$lib" "$pc" bench/msgrate bench/pingpong; do
    [ -e "$f" ] || { echo "rate-sides.sh: no $f (run from a build directory after make check)" >&2; exit 2; }
done
sides="native pcount skr bcj"
[ "${HAND:-0}" = 1 ] && sides="$sides hand2"
[ "${RBYTES:-0}" = 1 ] && sides="$sides pcountb"
[ "${TLOOP:-0}" = 1 ] && sides="$sides tloop"
nsides=$(echo $sides | wc -w)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for i in $(seq 1 "$rounds"); do
    k=$(( (i - 1) % nsides ))
    order=$(echo $sides $sides | cut -d' ' -f$((k + 1))-$((k + nsides)))
    for v in $order; do
        case $v in
        native) P="" ;;
        pcount) P="-x LD_PRELOAD=$pc" ;;
        pcountb) P="-x LD_PRELOAD=$pc -x PCOUNT_RECV_BYTES=1" ;;
        skr) P="-x LD_PRELOAD=$lib -x TDSHIM_ALGO=skr -x TDSHIM_REPORT=none" ;;
        bcj) P="-x LD_PRELOAD=$lib -x TDSHIM_ALGO=bcj -x TDSHIM_REPORT=none" ;;
        hand2 | tloop) P="" ;;
        esac
        h=""
        [ "$v" = hand2 ] && h="--hand-header 2"
        t=""
        [ "$v" = tloop ] && t="--test-loop"
        # shellcheck disable=SC2086
        m=$(timeout 60 mpirun -n 2 $P bench/msgrate --bytes 8 $h $extra 2>/dev/null | awk '/^msgrate/{print $3}')
        # shellcheck disable=SC2086
        p=$(timeout 60 mpirun -n 2 $P bench/pingpong --min 8 --max 8 $t 2>/dev/null | awk '/^pingpong/{print $3}')
        echo "$i $v ${m:-0} ${p:-0}" >>"$out"
    done
    echo "round $i/$rounds done" >&2
done
python3 - "$out" "$rounds" "$extra" <<'PY'
import statistics as S, sys
d, by_round = {}, {}
for l in open(sys.argv[1]):
    i, v, m, p = l.split()
    if float(m) > 0:
        d.setdefault(v, []).append((float(m), float(p)))
        by_round.setdefault(i, {})[v] = float(m)
def q(xs):
    xs = sorted(xs)
    return S.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
nat_m = S.median(x[0] for x in d["native"])
nat_p = S.median(x[1] for x in d["native"])
print("%d rounds (msgrate --bytes 8 %s: messages/s, best batch of each run; pingpong 8 B: one-way us)"
      % (int(sys.argv[2]), sys.argv[3]))
print("| side | rate Q1 | rate median | rate Q3 | median / native | median of per-round ratios | one-way Q1 | median | Q3 | added ns (medians) |")
print("|:--|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for v in ("native", "pcount", "pcountb", "skr", "bcj", "hand2", "tloop"):
    if v not in d:
        continue
    ms = [x[0] for x in d[v]]
    ps = [x[1] for x in d[v]]
    mq, pq = q(ms), q(ps)
    rr = [r[v] / r["native"] for r in by_round.values() if v in r and "native" in r and r["native"] > 0]
    print("| %s | %.3f M | %.3f M | %.3f M | %.3f | %.3f | %.3f | %.3f | %.3f | %+.0f |"
          % (v, mq[0] / 1e6, mq[1] / 1e6, mq[2] / 1e6, S.median(ms) / nat_m, S.median(rr),
             pq[0], pq[1], pq[2], (S.median(ps) - nat_p) * 1e3))
PY
