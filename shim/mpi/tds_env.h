/*
 * Every environment variable tdshim reads, in one place (Darshan-style:
 * one macro per name plus its documentation). tds_config.c parses them at
 * MPI_Init with one parser per value kind; the README table is generated
 * from the same strings (tds_env_doc).
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
    X(TDS_ENV_TREE, "TDSHIM_TREE", "binary", "binary, kary:K (2 <= K <= 64)")                  \
    X(TDS_ENV_PIGGYBACK, "TDSHIM_PIGGYBACK", "auto", "auto, copy, datatype, none")                   \
    X(TDS_ENV_REPORT, "TDSHIM_REPORT", "text,json", "none, or a comma-separated list of text, json") \
    X(TDS_ENV_REPORT_DIR, "TDSHIM_REPORT_DIR", ".", "an existing writable directory")          \
    X(TDS_ENV_CALLSITES, "TDSHIM_CALLSITES", "0", "0 (off), or N (1..100) top call sites")    \
    X(TDS_ENV_FINALIZE_TIMEOUT, "TDSHIM_FINALIZE_TIMEOUT", "10",                               \
      "seconds, a number > 0 and <= 86400")                                                    \
    X(TDS_ENV_VERBOSE, "TDSHIM_VERBOSE", "0", "0, 1, 2")                                       \
    X(TDS_ENV_CDA_INIT, "TDSHIM_CDA_INIT", "2147483648", "an integer 2..4294967295")                    \
    X(TDS_ENV_CDA_CON, "TDSHIM_CDA_CON", "64", "an integer >= 1")                              \
    X(TDS_ENV_CDA_WCON, "TDSHIM_CDA_WCON", "16", "an integer >= 1")                            \
    X(TDS_ENV_CDA_BORROW, "TDSHIM_CDA_BORROW", "1048576", "an integer >= 1")                   \
    X(TDS_ENV_XULAU_TOPO, "TDSHIM_XULAU_TOPO", "ring", "ring, mesh, torus, hypercube") \
    X(TDS_ENV_XULAU_DIMS, "TDSHIM_XULAU_DIMS", "",                                             \
      "empty (derived from the ranks), or A[,B[,C]] positive integers multiplying to the ranks")

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
