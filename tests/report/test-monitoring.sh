#!/bin/sh
# Cross-check with Open MPI's own pml monitoring component: the
# point-to-point messages it saw leaving each rank must equal the report's
# primary messages plus the tdshim traffic the report declares (control
# messages and clock ping-pongs), and so must the bytes. Skipped when this MPI has no pml
# monitoring (MPICH, or an Open MPI built without it).
. "$top_srcdir/tests/tap.sh"
. "$top_srcdir/tests/report/report_lib.sh"
[ -n "$SHIMLIB" ] || bail_all 2 "shim/.libs/libtdshim.so not built"
[ -n "$PY" ] || bail_all 2 "python3 with jsonschema (Debian: python3-jsonschema) not found"
command -v ompi_info >/dev/null 2>&1 && ompi_info 2>/dev/null | grep -q "MCA pml: monitoring" ||
    bail_all 2 "this MPI has no pml monitoring component (Open MPI's ompi_info lists none)"
# an Open MPI installed beside the MPI under test (MPICH: MPIRUN=hydra-mpirun)
case $(${MPIRUN:-mpirun} --version 2>&1 | head -n 3) in *"Open MPI"* | *OpenRTE*) ;;
*) bail_all 2 "the MPI under test (${MPIRUN:-mpirun}) is not Open MPI: pml monitoring does not apply" ;;
esac
plan 4
# the monitoring component sits on top of the selected pml: a pml list
# chosen in the environment (OMPI_MCA_pml=ob1) would leave it out
unset OMPI_MCA_pml
P=$REPORT_DIR_T/report-prog
# enable=2 separates the program's point-to-point messages (E lines) from
# those of collectives (I lines); output=3 writes PREFIX.<rank>.prof.
# skr runs header-free: the wire bytes are the program's exactly (its
# report's piggyback bytes are 0, and the check adds them like bcj's)
for a in bcj skr; do
    mkdir -p "$WORK/r$a"
    $RUN -np 3 --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 \
        --mca pml_monitoring_filename "$WORK/mon$a" \
        -x LD_PRELOAD="$SHIMLIB" -x TDSHIM_NOTIFY=none -x TDSHIM_ALGO=$a -x TDSHIM_REPORT_DIR="$WORK/r$a" \
        "$P" 30 2 >"$WORK/prog.out" 2>"$WORK/prog.err"
    st=$?
    D=$(ls -d "$WORK"/r$a/tdshim-report-*/ 2>/dev/null)
    [ $st -eq 0 ] && [ -n "$D" ] && [ -f "$WORK/mon$a.0.prof" ]
    ok $? "$a: report-prog under the shim and pml monitoring (exit $st)"
    $PY "$top_srcdir/tests/report/check_counts.py" "$SCHEMA" "$D" "$WORK/prog.out" "$WORK/mon$a" >"$WORK/check.out" 2>&1
    st=$?; diag "$(cat "$WORK/check.out")"
    ok $st "$a: pml monitoring's message and byte counts agree with the report (primary + piggyback + control + clock sync)"
done
done_testing
