/*
 * libponly.so: a layer that defines PMPI_ names only (a profiler built that
 * way, or a library interposing on the MPI library's entry points), for
 * tests/mpi/stack.sh. It counts PMPI_Send and passes it on to the next
 * object's PMPI_Send; PMPI_Finalize writes "Send=N" to
 * $PCOUNT_DIR/ponly-RANK.txt. Preloaded after tdshim, it is the next layer
 * of tdshim's own PMPI calls, while the program's MPI_Send must still reach
 * tdshim (gen_wrappers.py, next_tool: the MPI library's MPI_Send, an alias
 * of its PMPI_Send, is no tool of its own).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long sends;

int PMPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    static int (*next)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    if (!next)
        next = (int (*)(const void *, int, MPI_Datatype, int, int, MPI_Comm))dlsym(RTLD_NEXT, "PMPI_Send");
    sends++;
    return next(b, n, t, d, tag, c);
}

int PMPI_Finalize(void)
{
    static int (*next)(void);
    if (!next)
        next = (int (*)(void))dlsym(RTLD_NEXT, "PMPI_Finalize");
    const char *dir = getenv("PCOUNT_DIR");
    char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r)
        r = getenv("PMI_RANK");
    if (dir && r) {
        char path[4096];
        snprintf(path, sizeof path, "%s/ponly-%s.txt", dir, r);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "Send=%ld\n", sends);
            fclose(f);
        }
    }
    return next();
}
