/* Spanning trees: shape, parent/child consistency, depth, bad input. */
#include "tap.h"
#include "td_core.h"

#include <stdlib.h>

/* every rank but 0 is exactly one child of its parent; the tree is connected */
static int consistent(int size, int arity)
{
    int *seen = calloc((size_t)size, sizeof *seen);
    int ok = 1, maxd = 0;
    for (int r = 0; r < size && ok; r++) {
        td_tree t;
        if (td_tree_init(&t, r, size, arity) != TD_OK)
            ok = 0;
        for (int i = 0; ok && i < t.nchildren; i++) {
            int ch = t.first_child + i;
            td_tree tc;
            td_tree_init(&tc, ch, size, arity);
            ok = tc.parent == r && ch < size;
            seen[ch]++;
        }
        int d = 0;
        for (int x = r; x; x = (x - 1) / arity)
            d++;
        if (d > maxd)
            maxd = d;
    }
    for (int r = 1; r < size && ok; r++)
        ok = seen[r] == 1;
    ok = ok && seen[0] == 0 && td_tree_depth(size, arity) == maxd;
    free(seen);
    return ok;
}

int main(void)
{
    tap_plan(11);
    td_tree t;
    tap_ok(td_tree_init(&t, 0, 1, 2) == TD_OK && t.parent == -1 && t.nchildren == 0, "single rank: root with no children");
    td_tree_init(&t, 0, 7, 2);
    tap_ok(t.parent == -1 && t.first_child == 1 && t.nchildren == 2, "binary root has children 1,2");
    td_tree_init(&t, 2, 7, 2);
    tap_ok(t.parent == 0 && t.first_child == 5 && t.nchildren == 2, "binary rank 2 has parent 0, children 5,6");
    td_tree_init(&t, 3, 8, 2);
    tap_ok(t.first_child == 7 && t.nchildren == 1, "binary rank 3 of 8 has the one child 7");
    td_tree_init(&t, 1, 10, 4);
    tap_ok(t.parent == 0 && t.first_child == 5 && t.nchildren == 4, "4-ary rank 1 of 10 has children 5..8");
    int ok = 1;
    for (int k = 1; k <= 5; k++)
        for (int p = 1; p <= 70; p++)
            ok = ok && consistent(p, k);
    tap_ok(ok, "k-ary trees for k=1..5, P=1..70 are consistent and td_tree_depth matches");
    tap_ok(td_tree_depth(1048576, 2) == 20, "binary depth at 2^20 ranks is 20");
    tap_ok(td_tree_depth(5, 1) == 4, "1-ary tree is a chain");
    tap_ok(td_tree_init(&t, 3, 3, 2) == TD_EINVAL, "rank outside the job rejected");
    tap_ok(td_tree_init(&t, 0, 4, 0) == TD_EINVAL, "arity 0 rejected");
    td_tree_init(&t, 1073741823, 2147483647, 2);
    tap_ok(t.nchildren == 0 && t.parent == 536870911, "no overflow near INT_MAX ranks");
    return tap_done();
}
