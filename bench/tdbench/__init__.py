"""bench/run: tdshim's benchmarks, native and tdshim in the same invocation.

Every comparison runs its sides alternately, round by round (the order
rotating every round), because these hosts are shared and their per-run
times are often bimodal; tables give lower quartiles (times) or upper
quartiles (rates) over the rounds, the spread, and the ratios to native.

Sections (--only takes a comma-separated subset):
  cost      per-message cost: ping-pong latency 8 B .. 4 MiB and the 8-byte
            message rate, native, the hand-header floor (msgrate
            --hand-header 2), header-free (none, skr), a 1-byte header
            (skr with TDSHIM_PIGGYBACK=copy) and bcj's 2-byte header; on
            shared memory and on Open MPI's TCP transport (btl tcp,self);
            added nanoseconds per message beside the ratios
  table1    BCJ section 6 Table 1: five_cycle static (--native-stop)
            against dynamic (ended by tdshim's notification), per algorithm
            and number of ranks
  latency   detection latency per algorithm and ranks: from the last rank's
            last passive transition to the last rank's notification (the
            JSON reports' episodes), beside MPI_Allreduce and MPI_Ibarrier
            latency timed by the same program on the same ranks in the same
            run (--coll-reps); control messages per episode (cost vs scale)
  examples  the two programs that poll while busy (work_steal,
            aggregated_traversal) static against dynamic, per algorithm
  skr       SKR section 3 problems A-D (examples/skr_problems) at 2-16 ranks
            under skr (and bcj, fourcounter): control messages and Phase 1 +
            Phase 2 iterations (from the reports' counts by type), time from
            quiescence to detection, run time against --native-stop, beside
            tdsim's skrA-skrD and the paper's Tables 1 and 2
  scale     cost versus scale in tdsim: control messages per rank, detection
            delay, tdsim's time and memory for every algorithm from 4 to 2^20
            ranks (token ring), and control messages against the number of
            primary messages at 1024 ranks

It writes the markdown tables to --out (default bench/RESULTS.md), each
section between markers of its own ("<!-- bench/run:SECTION begin -->" and
"end", inside "<!-- bench/run: begin -->" ... "end", added if missing), so
that a run of some sections (--only) replaces only those, the plots into --plots
(default bench/plots), and prints the tables. --quick (a smoke test, under
5 minutes: every section runs and produces its table; CI runs it) uses
fewer sizes, ranks, algorithms and rounds; the figures are not asserted.

The package tdbench behind the command bench/run: common (launching,
rotation, statistics, the RESULTS markers), one module per section (cost,
table1, latency, examples, skr, scale) and cli (the command line). Reports
are read through scripts/tdshim_report's loader (every rank file checked
against schema.json) and its episodes.

usage: bench/run [--quick] [--builddir DIR] [--out FILE] [--plots DIR]
                 [--only SECTIONS] [--rounds N] [--strict]
"""
