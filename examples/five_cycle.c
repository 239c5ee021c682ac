/*
 * BCJ's worst case (bcj-sweep-termination.txt §6): every rank completes one
 * short task; then the root sends work to one leaf and goes passive, the
 * leaf works and sends work back, and this root->leaf->root cycle repeats
 * --cycles times (5 in the paper). Run time is dominated by the cycles
 * while every other rank sits idle, so a detector that disturbs the
 * computation shows up directly in the run time.
 *
 * Ground truth: P preliminary tasks + cycles leaf tasks + (cycles - 1) root
 * tasks; the cycle numbers must arrive in order.
 */
#include "ex_common.h"

#include <stdio.h>

#define TAG_TO_LEAF 1
#define TAG_TO_ROOT 2

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ex_ctx x;
    int cycles = 5, leaf = -1;
    const ex_opt opts[] = {
        {"cycles", EX_INT, &cycles, 1, 1 << 30, "root->leaf->root cycles (default 5)"},
        {"leaf", EX_INT, &leaf, -1, 1 << 30, "the leaf rank (default: the last rank)"},
    };
    int rc = ex_init(&x, "five_cycle",
                     "BCJ section 6 root<->leaf cycle program (the demo: 4 ranks, ~1 s at the default\n"
                     "--work-us 100000).",
                     argc, argv, opts, sizeof opts / sizeof opts[0], 0, 100000);
    if (rc == 0 && leaf >= x.size) {
        if (x.rank == 0)
            fprintf(stderr, "five_cycle: --leaf %d: no such rank (job has %d)\n", leaf, x.size);
        rc = -1;
    }
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }
    if (leaf < 0)
        leaf = x.size - 1;

    uint64_t my_recv = (x.rank == leaf ? (uint64_t)cycles : 0) + (x.rank == 0 ? (uint64_t)cycles : 0);
    int ok = 1, ev;
    int64_t last_seen[3] = {0, 0, 0};
    ex_phase_begin(&x, my_recv);
    ex_work(&x); /* the preliminary task */
    x.tasks++;
    if (x.rank == 0) {
        int64_t c = 1;
        ok &= ex_send(&x, &c, 1, leaf, TAG_TO_LEAF) == 0;
    }
    MPI_Status st;
    while (ok && (ev = ex_next(&x, &st)) == EX_WORK) {
        int64_t m[EX_MSG_WORDS];
        int n;
        if (ex_recv(&x, &st, m, &n) != 0 || n != 1 || (st.MPI_TAG != TAG_TO_LEAF && st.MPI_TAG != TAG_TO_ROOT)) {
            ok = 0;
            break;
        }
        if (m[0] != last_seen[st.MPI_TAG] + 1) {
            fprintf(stderr, "five_cycle: rank %d: cycle %lld arrived after %lld\n", x.rank,
                    (long long)m[0], (long long)last_seen[st.MPI_TAG]);
            ok = 0;
        }
        last_seen[st.MPI_TAG] = m[0];
        if (st.MPI_TAG == TAG_TO_LEAF) {
            ex_work(&x);
            x.tasks++;
            ok &= ex_send(&x, m, 1, 0, TAG_TO_ROOT) == 0;
        } else if (m[0] < cycles) {
            ex_work(&x);
            x.tasks++;
            m[0]++;
            ok &= ex_send(&x, m, 1, leaf, TAG_TO_LEAF) == 0;
        }
    }
    uint64_t my_tasks = 1 + (x.rank == leaf ? (uint64_t)cycles : 0) + (x.rank == 0 ? (uint64_t)cycles - 1 : 0);
    if (!ex_phase_check(&x, my_tasks, my_recv))
        ok = 0;
    char extra[48];
    snprintf(extra, sizeof extra, "cycles=%d leaf=%d", cycles, leaf);
    rc = ex_result(&x, ok, (uint64_t)x.size + 2 * (uint64_t)cycles - 1, extra);
    ex_fini(&x);
    MPI_Finalize();
    return rc;
}
