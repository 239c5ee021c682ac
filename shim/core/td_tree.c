/* k-ary spanning tree over ranks 0..size-1, rooted at 0 (heap order). */
#include "td_core.h"

int td_tree_init(td_tree *t, int rank, int size, int arity)
{
    if (size < 1 || rank < 0 || rank >= size || arity < 1)
        return TD_EINVAL;
    t->rank = rank;
    t->size = size;
    t->arity = arity;
    t->parent = rank == 0 ? -1 : (rank - 1) / arity;
    /* first child = arity*rank + 1, computed in 64 bits: no overflow at 2^31 ranks */
    long long fc = (long long)arity * rank + 1;
    if (fc >= size) {
        t->first_child = -1;
        t->nchildren = 0;
    } else {
        t->first_child = (int)fc;
        long long n = size - fc;
        t->nchildren = (int)(n < arity ? n : arity);
    }
    return TD_OK;
}

int td_tree_depth(int size, int arity)
{
    if (size < 1 || arity < 1)
        return TD_EINVAL;
    if (arity == 1)
        return size - 1;
    int depth = 0;
    long long last = size - 1; /* deepest rank */
    while (last > 0) {
        last = (last - 1) / arity;
        depth++;
    }
    return depth;
}
