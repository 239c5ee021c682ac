/*
 * Every environment variable tdshim reads, in one place (Darshan-style:
 * one macro per name plus its documentation). tds_config.c parses them at
 * MPI_Init with one parser per value kind; the man page tdshim(7) is
 * generated from the same strings at build time (docs/gen-man.py).
 */
#ifndef TDS_ENV_H
#define TDS_ENV_H

/* X(macro, name, default, accepted values (shown in errors and the docs)) */
#define TDS_ENV_LIST(X)                                                                        \
    X(TDS_ENV_ALGO, "TDSHIM_ALGO", "bcj", "an algorithm name")                                 \
    X(TDS_ENV_NOTIFY, "TDSHIM_NOTIFY", "none", "none, tag:N (0 <= N <= MPI_TAG_UB), exit, exit:CODE (0..255)") \
    X(TDS_ENV_IDLE, "TDSHIM_IDLE", "probe",                                                    \
      "probe, probe:N (N >= 1), test, spin, spin:N (N >= 1), blocking, pcontrol, api")          \
    X(TDS_ENV_SPIN_GAP, "TDSHIM_SPIN_GAP", "20",                                               \
      "microseconds, a number > 0 and <= 1000000")                                             \
    X(TDS_ENV_THREADS, "TDSHIM_THREADS", "1", "an integer 1..1024")                          \
    X(TDS_ENV_CONFIRM, "TDSHIM_CONFIRM", "auto", "auto (on with TDSHIM_IDLE=spin), on, off")  \
    X(TDS_ENV_IGNORE_TAGS, "TDSHIM_IGNORE_TAGS", "",                                           \
      "a comma-separated list of tags or ranges A-B (0 <= tag <= MPI_TAG_UB), or empty")       \
    X(TDS_ENV_IGNORE_EMPTY, "TDSHIM_IGNORE_EMPTY", "0", "0, 1")                                  \
    X(TDS_ENV_IGNORE_SHORT, "TDSHIM_IGNORE_SHORT", "",                                         \
      "a comma-separated list of TAG:BYTES (0 <= tag <= MPI_TAG_UB, 0 <= BYTES <= 65536), or empty") \
    X(TDS_ENV_TREE, "TDSHIM_TREE", "binary", "binary, kary:K (2 <= K <= 64)")                  \
    X(TDS_ENV_PIGGYBACK, "TDSHIM_PIGGYBACK", "auto", "auto, copy, datatype, none")                   \
    X(TDS_ENV_REPORT, "TDSHIM_REPORT", "text,json", "none, or a comma-separated list of text, json") \
    X(TDS_ENV_REPORT_DIR, "TDSHIM_REPORT_DIR", ".", "an existing writable directory")          \
    X(TDS_ENV_REPORT_MODE, "TDSHIM_REPORT_MODE", "private",                                    \
      "private (files 0600, directories 0700), group (0640, 0750)")                          \
    X(TDS_ENV_CALLSITES, "TDSHIM_CALLSITES", "0", "0 (off), or N (1..100) top call sites")    \
    X(TDS_ENV_FINALIZE_TIMEOUT, "TDSHIM_FINALIZE_TIMEOUT", "10",                               \
      "seconds, a number > 0 and <= 86400")                                                    \
    X(TDS_ENV_VERBOSE, "TDSHIM_VERBOSE", "0", "0, 1, 2")                                       \
    X(TDS_ENV_MIXED, "TDSHIM_MIXED", "stop", "stop, native")                                   \
    X(TDS_ENV_MIXED_TIMEOUT, "TDSHIM_MIXED_TIMEOUT", "3",                                      \
      "seconds, 0 (no check) or a number > 0 and <= 3600")                                      \
    X(TDS_ENV_CDA_INIT, "TDSHIM_CDA_INIT", "2147483648", "an integer 2..4294967295")                    \
    X(TDS_ENV_CDA_CON, "TDSHIM_CDA_CON", "64", "an integer >= 1")                              \
    X(TDS_ENV_CDA_WCON, "TDSHIM_CDA_WCON", "16", "an integer >= 1")                            \
    X(TDS_ENV_CDA_BORROW, "TDSHIM_CDA_BORROW", "1048576", "an integer >= 1")                   \
    X(TDS_ENV_XULAU_TOPO, "TDSHIM_XULAU_TOPO", "ring", "ring, mesh, torus, hypercube") \
    X(TDS_ENV_XULAU_DIMS, "TDSHIM_XULAU_DIMS", "",                                             \
      "empty (derived from the ranks), or A[,B[,C]] positive integers multiplying to the ranks")

/* The manual of each variable, for tdshim(7) (docs/gen-man.py writes the page
 * at build time from both lists, so the page cannot disagree with the parser):
 * D(macro, ranks, what it does). ranks: which ranks must set the same value
 * (MPI_Init checks it): "all", "cda" (under cda and hcda), "xulau", "header-free"
 * (when no header is sent), or "" (may differ). Every TDS_ENV_LIST entry needs
 * one line here (tds_config.c counts them; gen-man.py names a missing one). */
#define TDS_ENV_MAN(D)                                                                          \
    D(TDS_ENV_ALGO, "all", "The termination-detection algorithm.")                             \
    D(TDS_ENV_NOTIFY, "header-free",                                                           \
      "What happens at each detection: none detects and reports only (measure mode); tag:N "   \
      "delivers a zero-byte message with tag N on MPI_COMM_WORLD to every rank, sent by the "  \
      "rank itself; exit finalizes and exits with status 0, exit:CODE with CODE.")             \
    D(TDS_ENV_IDLE, "",                                                                        \
      "When a rank counts as passive: probe, when an MPI_Iprobe or MPI_Improbe finds nothing " \
      "or a blocking receive, probe or wait waits; probe:N, after N empty polls in a row "     \
      "with no send between them; test, as probe and when an MPI_Test* on receive requests "  \
      "completes none; spin or spin:N, after N (default 16) empty polls in a row, each less "  \
      "than TDSHIM_SPIN_GAP of program time after the previous one; blocking, only in "       \
      "blocking calls; pcontrol, when the program calls MPI_Pcontrol; api, when it calls "     \
      "tdshim_set_passive(). Under every notion only a poll that could deliver work counts: "  \
      "not one on a tag of TDSHIM_IGNORE_TAGS, nor, under TDSHIM_NOTIFY=tag:N, one that cannot " \
      "receive tag N on MPI_COMM_WORLD.")                                                      \
    D(TDS_ENV_SPIN_GAP, "",                                                                    \
      "Under TDSHIM_IDLE=spin: the longest program time between two empty polls of a "         \
      "spinning rank, in microseconds (time inside MPI and tdshim does not count).")          \
    D(TDS_ENV_THREADS, "",                                                                     \
      "Under MPI_THREAD_MULTIPLE: how many threads of a rank call MPI; a rank cannot be "      \
      "passive before that many have made their first call.")                                 \
    D(TDS_ENV_CONFIRM, "",                                                                     \
      "Confirm every proof of quiescence with two count waves down the spanning tree before "  \
      "announcing, which refutes proofs a misjudged rank made (xulau: its idle window grows "  \
      "instead).")                                                                             \
    D(TDS_ENV_IGNORE_TAGS, "header-free",                                                      \
      "Tags whose messages are not primary (neither counted nor checked): work-stealing "      \
      "requests, \"no work\" replies, the program's own termination tokens.")                  \
    D(TDS_ENV_IGNORE_EMPTY, "header-free",                                                     \
      "1: messages with zero bytes of data are not primary, for programs whose \"no work\" "   \
      "reply is an empty message on the work tag. Risk: an empty message that does carry "    \
      "meaning then activates its receiver unseen, and a notification can come early.")        \
    D(TDS_ENV_IGNORE_SHORT, "header-free",                                                     \
      "TAG:BYTES: messages on TAG with at most BYTES bytes of data are not primary, for "       \
      "programs whose \"no work\" reply is a short non-empty message on the work tag (a "       \
      "libcircle-style queue: 2:4). Same risk as TDSHIM_IGNORE_EMPTY for such a message that "  \
      "does carry work.")                                                                      \
    D(TDS_ENV_TREE, "all", "The control spanning tree, rooted at rank 0.")                     \
    D(TDS_ENV_PIGGYBACK, "header-free",                                                        \
      "How tdshim's header travels: copy, with the data in a bounce buffer; datatype, in an "  \
      "MPI_Type_create_struct over MPI_BOTTOM; auto, copy up to 2 KiB, and no header at all "  \
      "under an algorithm that piggybacks nothing (skr, fourcounter, termdetect, none); "      \
      "none, no header (an error with any other algorithm).")                                  \
    D(TDS_ENV_REPORT, "",                                                                      \
      "Which report files to write at MPI_Finalize: rank-NNNN.json on every rank, "            \
      "summary.txt on rank 0.")                                                                \
    D(TDS_ENV_REPORT_DIR, "",                                                                  \
      "Parent of the report directory of each run, tdshim-report-JOBID (or a timestamp), "     \
      "never overwritten; checked at MPI_Init when reports are on.")                           \
    D(TDS_ENV_REPORT_MODE, "",                                                                 \
      "Who may read the reports: private, files 0600 and directories 0700; group, 0640 and "   \
      "0750 for a project group (the umask can only narrow it).")                              \
    D(TDS_ENV_CALLSITES, "",                                                                   \
      "The top N call sites of the program's polls and sends in the report (needs libunwind " \
      "at build time).")                                                                       \
    D(TDS_ENV_FINALIZE_TIMEOUT, "",                                                            \
      "Bound in seconds on proving the last episode in MPI_Finalize when every primary "       \
      "message was received (messages left unreceived close it at once); a guard against a "  \
      "bug.")                                                                                  \
    D(TDS_ENV_VERBOSE, "",                                                                     \
      "1: start-up and detection lines, and once a second while an episode is pending, rank "  \
      "0's detection state (what it waits for); 2: that line from every rank.")                \
    D(TDS_ENV_CDA_INIT, "cda", "cda and hcda: the initial credit of each rank.")               \
    D(TDS_ENV_CDA_CON, "cda", "cda: C_con, below which the W_con regime applies.")             \
    D(TDS_ENV_CDA_WCON, "cda", "cda: W_con, the credit per emission in the low regime.")       \
    D(TDS_ENV_CDA_BORROW, "cda", "cda and hcda: C_borrow, the prefetch threshold.")            \
    D(TDS_ENV_XULAU_TOPO, "xulau",                                                             \
      "xulau: the overlay graph (mesh and torus: the most square k1 x k2 = P).")               \
    D(TDS_ENV_XULAU_DIMS, "xulau",                                                             \
      "xulau with mesh or torus: the dimensions; a product that is not the number of ranks "   \
      "stops the job at MPI_Init.")                                                            \
    D(TDS_ENV_MIXED, "all",                                                                    \
      "What a job does when some of its ranks are not under tdshim (LD_PRELOAD missing on "    \
      "them): stop, one line naming the ranks and exit status 2; native, tdshim steps aside "  \
      "on every rank (no headers, no detection, no report). Found at MPI_Init through the "    \
      "launcher's name service, never a message the program could receive.")                   \
    D(TDS_ENV_MIXED_TIMEOUT, "all",                                                            \
      "How long MPI_Init looks for the other ranks under tdshim, in seconds (0: no check); a " \
      "job with a rank missing ends within twice this time.")
/* TDSHIM_* variables of tdshim's own tools and tests, never read by the
 * library: MPI_Init's unknown-variable warning (tds_config_unknown) passes
 * them over, so they reach the ranks without a word. X(name, who reads it) */
#define TDS_ENV_TOOLS(X)                                                                       \
    X("TDSHIM_LIB", "tdshim-run: the library to preload")                                     \
    X("TDSHIM_REPORT_NO_REEXEC", "tdshim-report: set when it re-executes itself")              \
    X("TDSHIM_BENCH_REEXEC", "bench/run: set when it re-executes itself")                      \
    X("TDSHIM_TEST_BTL", "tests: Open MPI's BTLs for the MPI tests (scripts/check: tcp,self)") \
    X("TDSHIM_TEST_TIMEOUT", "tests: seconds a test run may take")

#define TDS_ENV_ENUM(m, name, def, acc) m,
enum { TDS_ENV_LIST(TDS_ENV_ENUM) TDS_ENV_N };
#undef TDS_ENV_ENUM

typedef struct tds_env_doc {
    const char *name, *def, *accepted;
} tds_env_doc;

/* indexed by TDS_ENV_* */
extern const tds_env_doc tds_env_docs[TDS_ENV_N];

#endif
