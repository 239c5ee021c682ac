/*
 * passthru.so: an interposer preloaded before libtdshim that sends the
 * calls named in PASSTHRU straight to the MPI library, past tdshim's
 * wrappers, and every other call on to tdshim. It attributes a program's
 * cost under tdshim to the calls it wraps (bench/ab-example.sh PASSTHRU=):
 * with every call of a loop passed through, what remains is tdshim's
 * presence alone (its private communicator, its standing control receive,
 * its MPI_Init), which costs nothing measurable.
 *
 *   mpicc -O2 -shared -fPIC -o passthru.so bench/passthru.c -ldl
 *   mpirun -x LD_PRELOAD=passthru.so:libtdshim.so -x PASSTHRU=all ...
 *
 * PASSTHRU: "all" or a comma-separated list of names without "MPI_"
 * (Test,Testany,...). A call passed through is none of tdshim's business:
 * its messages are not counted and its requests not known, so tdshim's
 * notification cannot be trusted, and passing only some of the calls on
 * one request (its MPI_Irecv but not its MPI_Test, or MPI_Cancel alone)
 * leaves tdshim's bookkeeping inconsistent and slow. Meant for a program
 * that stops by its own count (--native-stop), with a set of calls that
 * covers its loop. Open MPI (libmpi.so.40) only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int chosen(const char *name)
{
    const char *l = getenv("PASSTHRU");
    size_t n = strlen(name);
    if (!l)
        return 0;
    if (!strcmp(l, "all"))
        return 1;
    for (const char *p = l; *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncmp(p, name, n))
            return 1;
        p += k + (e != NULL);
    }
    return 0;
}

/* the MPI library's PMPI_NAME if NAME is chosen, else the next MPI_NAME
 * (tdshim's): resolved once, at the first call */
static void *target(const char *name)
{
    char sym[64];
    void *f;
    if (chosen(name)) {
        void *h = dlopen("libmpi.so.40", RTLD_NOW | RTLD_NOLOAD);
        snprintf(sym, sizeof sym, "PMPI_%s", name);
        f = h ? dlsym(h, sym) : NULL;
    } else {
        snprintf(sym, sizeof sym, "MPI_%s", name);
        f = dlsym(RTLD_NEXT, sym);
    }
    if (!f) {
        fprintf(stderr, "passthru: no %s\n", sym);
        abort();
    }
    return f;
}

#define PASS(name, params, args)                                                                                       \
    int MPI_##name params                                                                                              \
    {                                                                                                                  \
        static int(*fn_) params;                                                                                       \
        if (!fn_)                                                                                                      \
            fn_ = (int(*) params)target(#name);                                                                        \
        return fn_ args;                                                                                               \
    }

PASS(Send, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))
PASS(Isend, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r), (b, c, d, p, t, m, r))
PASS(Recv, (void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status *s), (b, c, d, p, t, m, s))
PASS(Irecv, (void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r), (b, c, d, p, t, m, r))
PASS(Iprobe, (int p, int t, MPI_Comm m, int *f, MPI_Status *s), (p, t, m, f, s))
PASS(Test, (MPI_Request * r, int *f, MPI_Status *s), (r, f, s))
PASS(Testany, (int n, MPI_Request r[], int *i, int *f, MPI_Status *s), (n, r, i, f, s))
PASS(Wait, (MPI_Request * r, MPI_Status *s), (r, s))
PASS(Cancel, (MPI_Request * r), (r))
PASS(Get_count, (const MPI_Status *s, MPI_Datatype d, int *c), (s, d, c))
PASS(Allreduce, (const void *a, void *b, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m), (a, b, c, d, o, m))
PASS(Barrier, (MPI_Comm m), (m))
