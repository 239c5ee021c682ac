/*
 * Xu-Lau symmetric termination detection on an edge-coloured graph
 * (papers/xu-lau-edge-coloring.txt §3-4), made safe for asynchronous
 * programs.
 *
 * The overlay (td_cfg.xulau_topo: ring, mesh, torus, hypercube) is edge
 * coloured with the minimum number of colours κ (§3; the "alternate"
 * colouring of Theorems 5.2-5.5 for meshes and tori). An iteration exchanges
 * the counter S with the neighbour of each colour in increasing colour order,
 * taking S = min(S, InputS) after each exchange (Gauss-Seidel, §4), then
 * S = 0 if the rank was busy during the iteration, else S + 1. Every rank
 * reaches S = PredefinedValue in the same iteration (Theorem 4.1) and
 * announces locally (TD_ALGO_SYMMETRIC).
 *
 * Choosing the overlay for P ranks (the "clear rule"):
 *   ring       P nodes; 2 colours if P is even, 3 if odd (one edge gets the third).
 *   mesh/torus xulau_dims k1[,k2[,k3]] must multiply to P; without dims the
 *              most square k1 x k2 = P (k1 the largest divisor <= sqrt P), so a
 *              prime P gives a chain (mesh) or ring (torus). Dimension j, in
 *              decreasing length, has colours j and n+j alternating (Theorem
 *              5.3, "...1313..." on the longest dimension); a torus dimension
 *              of odd length gives its wrap-around edges colour 2n+j.
 *   hypercube  dimension d edges have colour d; if P is not a power of two,
 *              the ranks >= P are absent (incomplete hypercube, connected
 *              because every rank has a neighbour below it).
 *   Colours no edge uses are dropped.
 * Every rank computes the same plan at init, nothing approximated: the
 * colour diameter D~ exactly, in closed form (see "Colour diameter" below):
 * 1 for a complete hypercube, 2 for an incomplete one (P >= 3), and for
 * ring, mesh and torus the largest D~ of one dimension, a path or cycle
 * (about k/4 for a cycle of k, k/2 for a path: a ring of P has D~ ~ P/4, a
 * 1024 x 1024 torus 256); the count tree's lag L by a BFS over the implicit
 * overlay (in closed form for the hypercube: L = 0). Cost per rank: O(log P)
 * for the hypercube (microseconds at 2^20 ranks), O(P) time and memory for
 * ring, mesh and torus (about 30 ms and 13 MB at 2^20 ranks), O(k log k) more
 * for an odd cycle of k (about 65 ms for an odd ring of 2^20). (It used to
 * simulate the schedule from every source, O(P/64 x D~ x E), and build the
 * tree scanning every edge at each rank, O(P x E): 6 ms at 1024 ranks, 23 s
 * for a hypercube of 65,536.)
 *
 * Asynchronous safety. §2 assumes instantaneous messages ("there won't be
 * false detection due to messages in transit"); tdshim's primaries can be in
 * transit for a long time, so the paper's rule alone announces while a
 * message sent long ago is still travelling (variant xulau-paper, caught by
 * tdsim). The fix piggybacks a count confirmation on the same exchanges:
 *   - a spanning tree of the overlay rooted at rank 0 is fixed at init; each
 *     exchange message carries the sender's subtree totals of primaries sent
 *     and received (its own counts read at that moment + the latest totals
 *     of its children), Gauss-Seidel too, so rank 0 holds, at the end of
 *     iteration t, every rank's counts as read in iteration t - lag_i, with
 *     lag_i <= L (the descents of colour along the tree path, computed here);
 *   - rank 0 counts as busy in an iteration whose totals differ (sent !=
 *     received), so the S counter itself carries the confirmation to every
 *     rank and detection stays symmetric;
 *   - PredefinedValue = D~ + 1 + X with X = max(D~ - 1, L), D~ the colour
 *     diameter: the paper's D~ + 1, plus a window in which every rank is
 *     idle at the same iterations, long enough to hold the totals' lag.
 * Argument. Proposition 1 still holds (it is about the exchange schedule,
 * not about message delays): S_i(T) <= S_j(T-k) + k for k >= D~(i,j). So
 * when rank i reaches S_i(T) = PV, every rank j had S_j > 0, i.e. was idle
 * (no primary sent or received, no activity), in each iteration of
 * W = [A, B] = [T-D~-X, T-D~]: its counts were constant there. Rank 0 was not
 * busy at B, so the totals it held then, each read in iteration B-lag_j >=
 * B-X = A, were equal. Take as cut the moment each rank's counts were read:
 * (a) a primary sent after its sender's W cannot have been received before
 * its receiver's W: the sender starts iteration B+1 only after its S(B)
 * took in the receiver's S(B-D~) >= S(A-1), so the receiver had finished
 * A-1, and it is idle in W; (b) a primary sent before the cut and received
 * after it would be counted as sent and not as received: equal totals
 * exclude it. So the cut is a consistent global state with every rank
 * passive and nothing in transit: the job was terminated there, and stays
 * so. Then every rank is idle in every iteration from A on, S_j(T) >=
 * T-A+1 = PV at every j, and the first rank to reach PV reaches it in the
 * same iteration as all the others (the symmetry of Theorem 4.1, which the
 * paper derives from instantaneous messages). With PV = D~+1 alone a rank
 * can be activated in iteration T by a primary sent long before, and some
 * ranks detect at T while it does not (found by test-xulau).
 *
 * Episodes. The dirty bit spreads by the same exchanges as a second counter
 * Q (0 at a dirty rank, min over exchanges + 1, saturating at QINF): dirty
 * bits are constant during the PV-iteration window, so at detection every
 * rank sees Q < QINF iff some rank is dirty, and they all decide alike:
 * announce (td_announce_local), or, if clean, not. Either way every rank
 * then goes dormant after iteration T, with S = 0 (as if every rank had been
 * busy at T: conservative), and exchanges nothing while the program keeps
 * polling. A rank that becomes dirty wakes and starts iteration T+1; its
 * exchange message wakes its neighbours, and so on, so all ranks resume the
 * same iteration. No engine change is needed.
 */
#include "td_algo.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>

enum { XL_EXCH = 0, XL_NTYPES };
static const char *const xl_types[XL_NTYPES] = {"exchange"};

#define XL_MAXC 32          /* colours: hypercube dimensions, 3 dims x 3 */
#define XL_QINF 0xfffffu    /* "no dirty rank seen"; S and Q fit 20 bits */

typedef struct xl_pend {
    uint8_t valid;
    uint64_t iter;
    uint32_t S, Q;
    int64_t sent, recvd;
} xl_pend;

typedef struct xulau {
    int kappa;               /* colours of the overlay */
    int nb[XL_MAXC];         /* neighbour on each colour, -1 if none */
    uint8_t child[XL_MAXC];  /* that neighbour is my child in the count tree */
    int pcol;                /* colour of the edge to my tree parent, -1 at the root */
    int cdiam, lag;          /* colour diameter D~, tree lag L */
    uint32_t pv;             /* PredefinedValue: D~ + 1 + max(D~ - 1, L) */

    uint64_t cur;            /* iteration in progress (or last done, dormant) */
    int pos;                 /* next colour to exchange in cur */
    uint8_t sent_pos;        /* EXCH for pos sent, waiting for the neighbour's */
    uint8_t dormant, first;
    uint8_t broken_paper;    /* test-only: no count confirmation */
    uint8_t ahead;           /* got a primary of the next episode: this one is over */
    uint64_t next_sent, next_recvd; /* primaries of the next episode, kept out of the totals */
    uint32_t S, Q;
    xl_pend pend[XL_MAXC][2]; /* by iteration parity: a neighbour can be one iteration ahead */
    int64_t csent[XL_MAXC], crecvd[XL_MAXC]; /* children's latest subtree totals */
    uint64_t snap_i2b, snap_sent, snap_recvd;  /* at the end of the last iteration */
    uint32_t told;           /* the last episode whose announcement xl_on_block told the neighbours */
} xulau;

/* ---------------------------------------------------------------- overlay */

/* The overlay, implicit: every rank derives its edges and their colours
 * from P and the dimensions (test-xulau also builds it as a list of edges,
 * the way it used to be, and compares). */
typedef struct xl_graph {
    int P, kappa;
    int n, k[3], stride[3], wrap; /* ring (a torus of one dimension), mesh, torus; n = -1: hypercube */
    int map[9];                   /* grid colour (j, n + j, 2n + j) -> colour in the schedule, -1 if unused */
} xl_graph;

/* Dimensions for a mesh or torus: the configured ones or the most square
 * factorisation of P; dimensions of length 1 are dropped. Returns n or -1. */
static int grid_dims(const td_cfg *cfg, int P, int k[3])
{
    int n = 0;
    if (cfg->xulau_dims[0] > 0) {
        long prod = 1;
        for (int i = 0; i < 3 && cfg->xulau_dims[i] > 0; i++) {
            prod *= cfg->xulau_dims[i];
            if (cfg->xulau_dims[i] > 1)
                k[n++] = cfg->xulau_dims[i];
        }
        if (prod != P)
            return -1;
    } else {
        int a = 1;
        for (int d = 1; (long)d * d <= P; d++)
            if (P % d == 0)
                a = d;
        if (P / a > 1)
            k[n++] = P / a;
        if (a > 1)
            k[n++] = a;
    }
    /* longest dimension first: it gets the earlier colours (Theorem 5.2) */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (k[j] > k[i]) {
                int t = k[i];
                k[i] = k[j];
                k[j] = t;
            }
    return n;
}

/* The overlay's shape: dimensions, colours used, or a configuration error. */
static int overlay_shape(td_ctx *c, xl_graph *g)
{
    int P = c->size;
    memset(g, 0, sizeof *g);
    g->P = P;
    switch (c->cfg.xulau_topo) {
    case TD_TOPO_RING:
        g->n = P > 1;
        g->k[0] = P;
        g->wrap = 1;
        break;
    case TD_TOPO_MESH:
    case TD_TOPO_TORUS:
        g->n = grid_dims(&c->cfg, P, g->k);
        if (g->n < 0) {
            const int *d = c->cfg.xulau_dims;
            int nd = d[2] > 0 ? 3 : d[1] > 0 ? 2 : 1;
            return td_fail(c, "xulau: dimensions %d%s%.0d%s%.0d do not multiply to %d ranks", d[0],
                           nd > 1 ? "x" : "", nd > 1 ? d[1] : 0, nd > 2 ? "x" : "", nd > 2 ? d[2] : 0, P);
        }
        g->wrap = c->cfg.xulau_topo == TD_TOPO_TORUS;
        break;
    case TD_TOPO_HYPERCUBE:
        g->n = -1;
        while ((1L << g->kappa) < P)
            g->kappa++;
        return TD_OK;
    default:
        return td_fail(c, "xulau: unknown topology %d", c->cfg.xulau_topo);
    }
    g->stride[0] = 1;
    for (int j = 1; j < g->n; j++)
        g->stride[j] = g->stride[j - 1] * g->k[j - 1];
    /* dimension j: colour j on the edges from even coordinates, n + j from
     * odd ones (and an even cycle's closing edge), 2n + j on an odd cycle's
     * closing edge (k = 2: no closing edge, the edge is there already);
     * colours no edge uses are dropped, keeping their order (the order is
     * the schedule) */
    for (int i = 0; i < 3 * g->n; i++) {
        int kj = g->k[i % g->n];
        int used = i < g->n || (i < 2 * g->n ? kj > 2 : g->wrap && kj > 2 && kj % 2);
        g->map[i] = used ? g->kappa++ : -1;
    }
    return TD_OK;
}

/* Rank p's edges in a ring, mesh or torus, in the order of the edge list
 * (test-xulau's build_edges: each rank r adds its edge of each dimension in
 * turn, to r + stride_j or closing the cycle back to coordinate 0; the
 * count tree breaks ties in that order): the edges from p - stride_j
 * (largest stride first), p's own, the closing edges from
 * p + (k_j - 1) stride_j. Fills neighbours and colours; returns how many. */
static int grid_adj(const void *graph, int p, int *nbr, int *col)
{
    const xl_graph *g = graph;
    int n = g->n, x[3], m = 0;
    for (int j = 0; j < n; j++)
        x[j] = p / g->stride[j] % g->k[j];
    for (int j = n - 1; j >= 0; j--)
        if (x[j] > 0) {
            nbr[m] = p - g->stride[j];
            col[m++] = g->map[(x[j] - 1) % 2 ? n + j : j];
        }
    for (int j = 0; j < n; j++)
        if (x[j] + 1 < g->k[j]) {
            nbr[m] = p + g->stride[j];
            col[m++] = g->map[x[j] % 2 ? n + j : j];
        } else if (g->wrap && g->k[j] > 2) {
            nbr[m] = p - x[j] * g->stride[j];
            col[m++] = g->map[g->k[j] % 2 ? 2 * n + j : n + j];
        }
    for (int j = 0; j < n; j++)
        if (x[j] == 0 && g->wrap && g->k[j] > 2) {
            nbr[m] = p + (g->k[j] - 1) * g->stride[j];
            col[m++] = g->map[g->k[j] % 2 ? 2 * n + j : n + j];
        }
    return m;
}

/* Colour diameter (Definition 3.2): the iterations of the schedule (colours
 * in increasing order, each edge exchanging once, both ends taking the
 * union) after which every rank's information has reached every rank.
 * Information from s reaches v by a path s = v0 ... vm = v crossed in
 * schedule order: its first edge in iteration 1, each next edge in the same
 * iteration if its colour comes later, else in the next iteration, so the
 * path delivers in iteration 1 + (descents of its colour sequence): crossing
 * each edge at its first exchange after the previous one is the earliest,
 * as every edge exchanges in every iteration. A colour class is a matching,
 * so two edges of one colour are never crossed in one step. It is computed exactly, in closed form, per
 * topology (test-xulau compares it with the simulation of the schedule from
 * every source, td_xulau_plan_ref, for every topology up to 600 ranks):
 *
 * Ring, mesh, torus: the largest colour diameter of one dimension.
 * Dimension j has colours of its own (j, n + j, 2n + j), and whether an edge
 * exists and its colour depend only on the coordinate along it, so a path
 * moves in each dimension independently: the delivery to v is the latest of
 * the fastest deliveries along each dimension (project a path on each
 * dimension; conversely merge the dimensions' fastest paths in schedule
 * order, which is possible as their colours differ). A dimension is a path
 * or a cycle, where a target is reached one way or the other; the descents
 * along either way are differences of prefix sums over the edges, and on a
 * cycle the farthest target of a source is where the two ways cross (one
 * gets later, the other earlier as the target moves along), found by a
 * binary search. An even cycle (colours alternating all round) is invariant
 * under the rotation by 2: two sources suffice. Odd cycles (the third colour
 * on the closing edge) and paths take every source: O(k log k) at most for
 * k ranks along the dimension.
 *
 * Hypercube (colour = dimension; one iteration crosses the dimensions in
 * increasing order): complete (P = 2^d >= 2), the path flipping the
 * differing bits from the lowest up always exists, D~ = 1. Incomplete
 * (2^(d-1) < P < 2^d, d >= 2): every rank below 2^(d-1) exists, so a rank
 * below it reaches every rank in iteration 1 that way (the top bit, the last
 * colour, flipped last), and a rank at or above it crosses the top
 * dimension at the end of iteration 1 and does the same in iteration 2:
 * D~ <= 2. In one iteration rank 2^(d-1) has only one candidate path to rank
 * 2^(d-1) - 1 (each dimension at most once, in increasing order), through
 * 2^d - 1 >= P: D~ = 2. */

/* Dimension of k >= 2 ranks (build_grid; the ring is built alike): edge x
 * joins x and x + 1 (mod k) with the dimension's first colour if x is even,
 * the second if odd; a cycle's closing edge k - 1 has the second if k is
 * even, the third if odd. Colours as their order in the schedule: 0, 1, 2. */
static int dim_colour(int k, int x)
{
    return x < k - 1 ? x % 2 : k % 2 ? 2 : 1;
}

/* Iteration in which source s reaches s + d (mod) going up, s - d going
 * down (d >= 1 hops), from C, the prefix sums of the descents going up. */
static int dim_up(const int *C, int s, int d)
{
    return 1 + C[s + d - 1] - C[s];
}

static int dim_down(const int *C, int m, int s, int d)
{
    /* going down from edge i + 1 to edge i is a descent iff going up is not
     * (adjacent edges have different colours) */
    return d - (C[s - 1 + m] - C[s - d + m]);
}

static int dim_cdiam(int k, int cycle)
{
    int m = cycle ? k : k - 1; /* edges */
    int *C = malloc((size_t)(2 * m + 1) * sizeof *C);
    if (!C)
        return -1;
    /* C[j]: descents from edge i to edge i + 1 (mod m) for i < j (on a path
     * the step from edge m - 1 to edge 0 is summed but never used) */
    C[0] = 0;
    for (int j = 0; j < 2 * m; j++)
        C[j + 1] = C[j] + (dim_colour(k, (j + 1) % m) < dim_colour(k, j % m));
    int diam = 0;
    for (int s = 0; s < (cycle && k % 2 == 0 ? 2 : k); s++) {
        int ecc = 0;
        if (!cycle) {
            ecc = s < k - 1 ? dim_up(C, s, k - 1 - s) : 0;
            if (s > 0 && dim_down(C, m, s, s) > ecc)
                ecc = dim_down(C, m, s, s);
        } else {
            /* lo: the farthest target up reached no later than down */
            int lo = 0, hi = k - 1;
            while (lo < hi) {
                int mid = (lo + hi + 1) / 2;
                if (dim_up(C, s, mid) <= dim_down(C, m, s, k - mid))
                    lo = mid;
                else
                    hi = mid - 1;
            }
            ecc = lo > 0 ? dim_up(C, s, lo) : 0;
            if (lo + 1 < k && dim_down(C, m, s, k - lo - 1) > ecc)
                ecc = dim_down(C, m, s, k - lo - 1);
        }
        if (ecc > diam)
            diam = ecc;
    }
    free(C);
    return diam;
}

typedef int (*xl_adj_fn)(const void *graph, int p, int *nbr, int *col);

/* Count tree: BFS from rank 0; among the candidate parents one hop closer,
 * the one whose path to the root has the fewest colour descents (each costs
 * the totals one iteration of lag), the first in BFS order on a tie. Fills
 * each rank's parent colour (its parent is its neighbour on that colour)
 * and lag. O(P + E). */
static int count_tree(const void *graph, int P, xl_adj_fn adj, signed char *pcol_of, int *lag)
{
    int *dist = malloc((size_t)P * sizeof *dist), *queue = malloc((size_t)P * sizeof *queue);
    if (!dist || !queue) {
        free(dist);
        free(queue);
        return TD_ENOMEM;
    }
    for (int r = 0; r < P; r++) {
        dist[r] = -1;
        pcol_of[r] = -1;
        lag[r] = 0;
    }
    int head = 0, tail = 0;
    dist[0] = 0;
    queue[tail++] = 0;
    while (head < tail) {
        int p = queue[head++], nbr[XL_MAXC], col[XL_MAXC];
        int deg = adj(graph, p, nbr, col);
        for (int a = 0; a < deg; a++) {
            int i = nbr[a];
            int l = lag[p] + (p != 0 && pcol_of[p] <= col[a]);
            if (dist[i] < 0) {
                dist[i] = dist[p] + 1;
                queue[tail++] = i;
            } else if (dist[i] != dist[p] + 1 || l >= lag[i]) {
                continue;
            }
            pcol_of[i] = (signed char)col[a];
            lag[i] = l;
        }
    }
    free(dist);
    free(queue);
    return TD_OK;
}
/* The hypercube's plan without building it: colours = dimensions, D~ above,
 * and the count tree of count_tree in closed form: the binomial tree, the
 * parent of r is r & (r - 1), across the dimension of r's lowest bit. By
 * induction on the distance (the popcount; every rank below r exists):
 * that parent gives lag 0, the colours rising all the way to the root, and
 * any other candidate parent r ^ 2^b (b above r's lowest bit) has r's lowest
 * bit as its own parent colour, below b: a descent, lag >= 1. So L = 0
 * (test-xulau compares every rank's links with count_tree's). */
static void plan_hypercube(const td_ctx *c, xulau *s, int kappa)
{
    int P = c->size, r = c->rank, low = 0;
    s->kappa = kappa;
    s->cdiam = P == 1 ? 0 : (P & (P - 1)) == 0 ? 1 : 2;
    s->lag = 0;
    while (r && !(r >> low & 1))
        low++;
    s->pcol = r ? low : -1;
    for (int col = 0; col < XL_MAXC; col++) {
        int o = col < s->kappa ? r ^ 1 << col : P;
        s->nb[col] = o < P ? o : -1;
        s->child[col] = o < P && (r == 0 || col < low);
    }
}

/* The plan every rank computes alike: colours, colour diameter, tree lag.
 * O(P) time and memory for ring, mesh, torus (O(k log k) more for an odd
 * cycle of k ranks), O(log P) for the hypercube. */
static int plan(td_ctx *c, xulau *s)
{
    xl_graph g;
    int rc = overlay_shape(c, &g);
    if (rc != TD_OK)
        return rc;
    if (g.n < 0) {
        plan_hypercube(c, s, g.kappa);
    } else {
        signed char *pcol = malloc((size_t)g.P);
        int *lag = malloc((size_t)g.P * sizeof *lag);
        rc = !pcol || !lag ? TD_ENOMEM : count_tree(&g, g.P, grid_adj, pcol, lag);
        s->cdiam = 0;
        for (int j = 0; j < g.n && rc == TD_OK; j++) {
            int d = dim_cdiam(g.k[j], g.wrap && g.k[j] > 2);
            rc = d < 0 ? TD_ENOMEM : rc;
            s->cdiam = d > s->cdiam ? d : s->cdiam;
        }
        if (rc == TD_OK) {
            s->kappa = g.kappa;
            s->lag = 0;
            for (int r = 0; r < g.P; r++)
                s->lag = lag[r] > s->lag ? lag[r] : s->lag;
            int nbr[XL_MAXC], col[XL_MAXC], deg = grid_adj(&g, c->rank, nbr, col);
            for (int i = 0; i < XL_MAXC; i++)
                s->nb[i] = -1;
            for (int a = 0; a < deg; a++) {
                s->nb[col[a]] = nbr[a];
                s->child[col[a]] = pcol[nbr[a]] == col[a];
            }
            s->pcol = pcol[c->rank];
        }
        free(pcol);
        free(lag);
        if (rc != TD_OK)
            return rc;
    }
    int x = s->cdiam - 1 > s->lag ? s->cdiam - 1 : s->lag;
    s->pv = (uint32_t)(s->cdiam + 1 + (s->broken_paper ? 0 : x));
    return TD_OK;
}

/* ---------------------------------------------------------------- protocol */

static int xl_init(td_ctx *c, void *st)
{
    xulau *s = st;
    int rc = plan(c, s);
    if (rc != TD_OK)
        return rc == TD_EPROTO ? TD_EINVAL : rc;
    /* Confirmation (cfg.confirm, TDSHIM_CONFIRM; on with TDSHIM_IDLE=spin):
     * there is no root to send the engine's two waves, so the idle window
     * grows by one colour diameter more (D~ + 1 iterations: the time for a
     * wave to reach every rank and return, as the waves add). A misjudged
     * rank that turns active in it (td_busy) resets S as in every other
     * iteration. Safety does not depend on it (PV only grows), and a rank
     * that disagrees announces at its own PV: a laggard is told
     * (td_tell_announced). tdsim --misjudge 4 (test-sim-misjudge.sh's
     * settings, 4,000 runs): false announcements 495 -> 265 */
    if (c->cfg.confirm && !s->broken_paper)
        s->pv += (uint32_t)s->cdiam + 1;
    s->cur = 1;
    s->first = 1; /* the start of the program is activity: iteration 1 is busy */
    s->Q = XL_QINF;
    return TD_OK;
}

/* This rank's primaries of the current episode plus its children's
 * subtree totals, as last received (the count confirmation's partial sums). */
static void subtree_totals(const td_ctx *c, const xulau *s, int64_t *sent, int64_t *recvd)
{
    *sent = (int64_t)(c->sent - s->next_sent);
    *recvd = (int64_t)(c->recvd - s->next_recvd);
    for (int col = 0; col < s->kappa; col++)
        if (s->nb[col] >= 0 && s->child[col]) {
            *sent += s->csent[col];
            *recvd += s->crecvd[col];
        }
}

static void send_exch(td_ctx *c, xulau *s)
{
    int64_t sent, recvd;
    subtree_totals(c, s, &sent, &recvd);
    td_msg m = {.type = XL_EXCH, .seq = s->cur, .b = sent, .c = recvd,
                .a = (int64_t)s->S | (int64_t)s->Q << 20 | (int64_t)s->pos << 40};
    td_send(c, s->nb[s->pos], &m);
    s->sent_pos = 1;
}

/* Primaries carry the episode the sender works in. A rank still finishing
 * iteration T of episode k can receive work from a rank that already
 * announced k at T (and was notified): that activity belongs to episode k+1
 * and must not make this rank busy, or it would miss the detection at T
 * that every other rank made (found by test-xulau). Episode k is proven
 * terminated, so the rank is idle for k from then on, and what it sends
 * until it announces is stamped k+1 too. Such primaries stay out of the
 * count confirmation of episode k on both sides (their sender counts them
 * only after announcing k). */
static void xl_on_send(td_ctx *c, void *st, int dest, uint8_t *pb)
{
    xulau *s = st;
    (void)dest;
    td_put32(pb, c->episode + s->ahead);
    s->next_sent += s->ahead;
}

static void xl_on_recv(td_ctx *c, void *st, int src, const uint8_t *pb)
{
    xulau *s = st;
    (void)src;
    if (td_get32(pb) > c->episode) {
        s->ahead = 1;
        s->next_recvd++;
    }
}

static int xl_on_control(td_ctx *c, void *st, int src, const td_msg *m)
{
    xulau *s = st;
    int col = (int)(m->a >> 40);
    uint32_t S = (uint32_t)(m->a & XL_QINF), Q = (uint32_t)(m->a >> 20 & XL_QINF);
    /* a neighbour is at most one exchange ahead on our common edge: in our
     * iteration at a colour we have not consumed, or in the next one once
     * it has our message for this colour (or we are dormant after cur) */
    int ok = m->a >= 0 && td_count_ok(m->b) && td_count_ok(m->c) && col < s->kappa && s->nb[col] == src &&
             !s->pend[col][m->seq & 1].valid &&
             ((m->seq == s->cur && !s->dormant && col >= s->pos) ||
              (m->seq == s->cur + 1 && (s->dormant || col < s->pos || (col == s->pos && s->sent_pos))));
    if (!ok)
        return td_fail(c, "xulau: exchange of iteration %llu colour %d from rank %d, at iteration %llu colour %d%s",
                       (unsigned long long)m->seq, col, src, (unsigned long long)s->cur, s->pos,
                       s->dormant ? " (dormant)" : "");
    s->pend[col][m->seq & 1] = (xl_pend){.valid = 1, .iter = m->seq, .S = S, .Q = Q, .sent = m->b, .recvd = m->c};
    return TD_OK;
}

/* Proposition 1's step at the end of an iteration; 1 if detection. */
static int end_iteration(td_ctx *c, xulau *s)
{
    /* unsure (td_unsure: TDSHIM_IDLE=spin saw one long gap) counts as busy,
     * as it answers the root algorithms' confirmation waves */
    int busy = s->first || c->unsure || c->stats.idle_to_busy != s->snap_i2b || c->sent != s->snap_sent ||
               c->recvd != s->snap_recvd;
    s->first = 0;
    s->snap_i2b = c->stats.idle_to_busy;
    s->snap_sent = c->sent;
    s->snap_recvd = c->recvd;
    if (s->ahead)
        busy = 0; /* next episode's activity: see xl_on_recv */
    if (s->pcol < 0 && !s->broken_paper && !s->ahead) {
        /* rank 0: the count confirmation (see the argument at the top) */
        int64_t sent, recvd;
        subtree_totals(c, s, &sent, &recvd);
        if (sent != recvd)
            busy = 1;
    }
    s->S = busy ? 0 : (s->S + 1 < XL_QINF ? s->S + 1 : XL_QINF);
    s->Q = c->dirty && !s->ahead ? 0 : (s->Q + 1 < XL_QINF ? s->Q + 1 : XL_QINF);
    c->stats.waves++;
    return s->S >= s->pv;
}

static void xl_on_passive(td_ctx *c, void *st)
{
    xulau *s = st;
    /* Iterations whose exchanges are all in hand run here at once; a rank
     * without neighbours (P = 1) has every iteration in hand, and while its
     * counts differ (a message to itself not received yet) none detects:
     * pv + 2 per call, enough to detect, the next ones at the next poll
     * (an unbounded loop here was found by tests/fuzz). */
    for (uint32_t iters = 0; iters < s->pv + 2; iters++) {
        if (s->dormant) {
            int woken = c->dirty;
            for (int col = 0; col < s->kappa && !woken; col++)
                woken = s->pend[col][(s->cur + 1) & 1].valid;
            if (!woken)
                return; /* quiescent and clean: no control traffic while polling */
            s->dormant = 0;
            s->cur++;
            s->pos = 0;
        }
        while (s->pos < s->kappa) {
            if (s->nb[s->pos] < 0) {
                s->pos++;
                continue;
            }
            if (!s->sent_pos)
                send_exch(c, s);
            xl_pend *p = &s->pend[s->pos][s->cur & 1];
            if (!p->valid || p->iter != s->cur)
                return; /* wait for the neighbour */
            /* §4, Gauss-Seidel: S = min{S, InputS} at once */
            if (p->S < s->S)
                s->S = p->S;
            if (p->Q < s->Q)
                s->Q = p->Q;
            if (s->child[s->pos]) {
                s->csent[s->pos] = p->sent;
                s->crecvd[s->pos] = p->recvd;
            }
            p->valid = 0;
            s->sent_pos = 0;
            s->pos++;
        }
        if (end_iteration(c, s)) {
            int dirty = s->Q < XL_QINF;
            s->dormant = 1; /* before announcing: new_episode keeps it */
            s->S = 0;
            c->ann_seq = s->cur;
            if (dirty)
                td_announce_local(c); /* Theorem 4.1: every rank, same iteration */
            else
                c->stats.quiescent_clean++;
            return;
        }
        s->cur++;
        s->pos = 0;
    }
}

static void xl_new_episode(td_ctx *c, void *st)
{
    xulau *s = st;
    (void)c;
    /* every rank announces at the same iteration T, dormant after it; dirty
     * bits were cleared by the engine, so Q restarts at "none seen" */
    s->S = 0;
    s->Q = XL_QINF;
    s->dormant = 1;
    s->ahead = 0; /* next-episode primaries are now this episode's: counted again */
    s->next_sent = s->next_recvd = 0;
    /* a neighbour's exchange already in hand is one of a laggard that
     * missed the announcing round: tell it (the ones still to come are
     * answered by the engine, dispatch); a laggard told so (engine TERM)
     * joins the announcing round. Exchanges of the announced episode are
     * moot. */
    for (int col = 0; col < s->kappa; col++)
        for (int k = 0; k < 2; k++)
            if (s->pend[col][k].valid && s->nb[col] >= 0)
                td_tell_announced(c, s->nb[col]);
    s->cur = c->ann_seq;
    s->pos = 0;
    s->sent_pos = 0;
    memset(s->pend, 0, sizeof s->pend);
}

/* The program is about to block where the driver takes no control message
 * (a blocking collective, td_blocking), after this rank learned an
 * announcement: tell every neighbour now. A neighbour that missed the
 * announcing iteration (a rank TDSHIM_IDLE=spin saw busy again in its
 * window, xl_init) may wait for this rank's exchange, which will not come;
 * told, it adopts the announcement, and tells its own neighbours when its
 * program blocks in turn, so the word floods the overlay as far as it is
 * needed. A neighbour that announced too drops it (an older episode's
 * TERM). Until 2026-11-29 the shim ran xulau's blocking collectives as
 * their nonblocking forms, polled, so that this rank answered from inside
 * them (td_tell_announced, dispatch), which made a 2-rank MPI_Allreduce
 * 2.4x as slow and its sums of doubles differ from native's at 3 and 5
 * ranks. Without either, 3 of 1,000 misjudged runs of tests/core/
 * test-barrier hung. Telling at the announcement itself instead made
 * neighbours adopt before their own last iteration (Theorem 4.1's "every
 * rank in the same iteration", test-xulau) at one message an edge and
 * direction an episode, also for programs that never block. */
static void xl_on_block(td_ctx *c, void *st)
{
    xulau *s = st;
    if (c->episode == 0 || s->told == c->episode)
        return;
    s->told = c->episode;
    for (int col = 0; col < s->kappa; col++)
        if (s->nb[col] >= 0)
            td_tell_announced(c, s->nb[col]);
}

/* what this rank's exchange waits for (td_describe) */
static void xl_describe(const td_ctx *c, const void *st, char *buf, size_t len)
{
    const xulau *s = st;
    (void)c;
    if (s->dormant)
        snprintf(buf, len, "xulau: iteration %llu over, dormant until activity", (unsigned long long)s->cur);
    else if (s->pos < s->kappa && s->nb[s->pos] >= 0)
        snprintf(buf, len, "xulau: iteration %llu, colour %d of %d: %s rank %d's exchange, S %u Q %u",
                 (unsigned long long)s->cur, s->pos + 1, s->kappa, s->sent_pos ? "waiting for" : "to start with",
                 s->nb[s->pos], (unsigned)s->S, (unsigned)s->Q);
    else
        snprintf(buf, len, "xulau: iteration %llu, exchanges done, S %u Q %u", (unsigned long long)s->cur,
                 (unsigned)s->S, (unsigned)s->Q);
}

const td_algo td_algo_xulau = {
    .name = "xulau",
    .id = 8,
    .ntypes = XL_NTYPES,
    .type_names = xl_types,
    .pb_size = 4,
    .flags = TD_ALGO_SYMMETRIC | TD_ALGO_OVERLAY,
    .state_size = sizeof(xulau),
    .init = xl_init,
    .new_episode = xl_new_episode,
    .on_send = xl_on_send,
    .on_recv = xl_on_recv,
    .on_passive = xl_on_passive,
    .on_control = xl_on_control,
    .describe = xl_describe,
    .on_block = xl_on_block,
};

/* For tests and benchmarks: the plan a rank of a P-rank job computes. */
int td_xulau_plan(const td_cfg *cfg, int *kappa, int *cdiam, int *lag, int *pv);
int td_xulau_plan(const td_cfg *cfg, int *kappa, int *cdiam, int *lag, int *pv)
{
    td_ctx c;
    xulau s;
    memset(&c, 0, sizeof c);
    memset(&s, 0, sizeof s);
    c.cfg = *cfg;
    c.rank = cfg->rank;
    c.size = cfg->size;
    int rc = plan(&c, &s);
    if (rc != TD_OK)
        return rc;
    *kappa = s.kappa;
    *cdiam = s.cdiam;
    *lag = s.lag;
    *pv = (int)s.pv;
    return TD_OK;
}

#ifdef TD_TEST_BROKEN
/* Deliberately broken for tests: the paper's rule alone (PredefinedValue =
 * D~ + 1, no count confirmation). A primary still in transit after PV idle
 * iterations is missed, and ranks announce while it travels. */
static int xl_paper_init(td_ctx *c, void *st)
{
    ((xulau *)st)->broken_paper = 1;
    return xl_init(c, st);
}
const td_algo td_algo_xulau_paper = {
    .name = "xulau-paper",
    .id = 8,
    .ntypes = XL_NTYPES,
    .type_names = xl_types,
    .pb_size = 4,
    .flags = TD_ALGO_SYMMETRIC | TD_ALGO_OVERLAY | TD_ALGO_BROKEN,
    .state_size = sizeof(xulau),
    .init = xl_paper_init,
    .new_episode = xl_new_episode,
    .on_send = xl_on_send,
    .on_recv = xl_on_recv,
    .on_passive = xl_on_passive,
    .on_control = xl_on_control,
    .describe = xl_describe,
    .on_block = xl_on_block,
};
#endif

#ifdef TD_TEST_BROKEN
/* For test-xulau (the test library only): the overlay as a list of edges,
 * built the way it was before plan() went implicit, its colour diameter by
 * simulating the schedule, and every rank's plan() checked against it. */
typedef struct xl_edges {
    int P, nedges, cap, kappa;
    int *u, *v, *col;
    int *off, *inc; /* each rank's edges, in edge order */
} xl_edges;
static int add_edge(xl_edges *g, int u, int v, int col)
{
    if (g->nedges == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        int *nu = realloc(g->u, (size_t)cap * sizeof *nu);
        if (nu)
            g->u = nu;
        int *nv = realloc(g->v, (size_t)cap * sizeof *nv);
        if (nv)
            g->v = nv;
        int *nc = realloc(g->col, (size_t)cap * sizeof *nc);
        if (nc)
            g->col = nc;
        if (!nu || !nv || !nc)
            return TD_ENOMEM;
        g->cap = cap;
    }
    g->u[g->nedges] = u;
    g->v[g->nedges] = v;
    g->col[g->nedges] = col;
    g->nedges++;
    return TD_OK;
}

static void edges_free(xl_edges *g)
{
    free(g->u);
    free(g->v);
    free(g->col);
    free(g->off);
    free(g->inc);
}

static int build_grid(xl_edges *g, const int k[3], int n, int wrap)
{
    int stride[3] = {1, 1, 1};
    for (int j = 1; j < n; j++)
        stride[j] = stride[j - 1] * k[j - 1];
    for (int r = 0; r < g->P; r++)
        for (int j = 0; j < n; j++) {
            int x = r / stride[j] % k[j];
            int rc = TD_OK;
            if (x + 1 < k[j])
                rc = add_edge(g, r, r + stride[j], x % 2 ? n + j : j);
            else if (wrap && k[j] > 2) /* k = 2: the wrap edge is the edge itself */
                rc = add_edge(g, r, r - x * stride[j], k[j] % 2 ? 2 * n + j : n + j);
            if (rc != TD_OK)
                return rc;
        }
    return TD_OK;
}

static int build_edges(td_ctx *c, xl_edges *g)
{
    xl_graph sh;
    int rc = overlay_shape(c, &sh), P = c->size;
    memset(g, 0, sizeof *g);
    g->P = P;
    if (rc != TD_OK)
        return rc;
    switch (c->cfg.xulau_topo) {
    case TD_TOPO_RING:
        if (P == 2)
            rc = add_edge(g, 0, 1, 0);
        for (int i = 0; P > 2 && i < P && rc == TD_OK; i++)
            rc = add_edge(g, i, (i + 1) % P, P % 2 && i == P - 1 ? 2 : i % 2);
        break;
    case TD_TOPO_HYPERCUBE:
        for (int r = 0; r < P && rc == TD_OK; r++)
            for (int d = 0; (1L << d) < P && rc == TD_OK; d++)
                if ((r ^ (1 << d)) > r && (r ^ (1 << d)) < P)
                    rc = add_edge(g, r, r ^ (1 << d), d);
        break;
    default:
        rc = build_grid(g, sh.k, sh.n, sh.wrap);
    }
    if (rc != TD_OK)
        return rc;
    /* drop unused colours, keeping their order */
    int map[3 * XL_MAXC], used[3 * XL_MAXC] = {0};
    for (int e = 0; e < g->nedges; e++)
        used[g->col[e]] = 1;
    for (int i = 0; i < 3 * XL_MAXC; i++)
        map[i] = used[i] ? g->kappa++ : -1;
    for (int e = 0; e < g->nedges; e++)
        g->col[e] = map[g->col[e]];
    /* each rank's edges in edge order */
    g->off = calloc((size_t)P + 1, sizeof *g->off);
    g->inc = malloc((size_t)(2 * g->nedges + 1) * sizeof *g->inc);
    int *fill = malloc((size_t)P * sizeof *fill);
    if (!g->off || !g->inc || !fill) {
        free(fill);
        return TD_ENOMEM;
    }
    for (int e = 0; e < g->nedges; e++) {
        g->off[g->u[e] + 1]++;
        g->off[g->v[e] + 1]++;
    }
    for (int r = 0; r < P; r++) {
        g->off[r + 1] += g->off[r];
        fill[r] = g->off[r];
    }
    for (int e = 0; e < g->nedges; e++) {
        g->inc[fill[g->u[e]]++] = e;
        g->inc[fill[g->v[e]]++] = e;
    }
    free(fill);
    return TD_OK;
}

static int edges_adj(const void *graph, int p, int *nbr, int *col)
{
    const xl_edges *g = graph;
    int m = 0;
    for (int a = g->off[p]; a < g->off[p + 1]; a++) {
        int e = g->inc[a];
        nbr[m] = g->u[e] == p ? g->v[e] : g->u[e];
        col[m++] = g->col[e];
    }
    return m;
}

/* Edges sorted by colour: the schedule of one iteration. */
static int *edges_by_colour(const xl_edges *g)
{
    int *ord = malloc((size_t)(g->nedges ? g->nedges : 1) * sizeof *ord);
    if (!ord)
        return NULL;
    int n = 0;
    for (int col = 0; col < g->kappa; col++)
        for (int e = 0; e < g->nedges; e++)
            if (g->col[e] == col)
                ord[n++] = e;
    return ord;
}

/* Colour diameter by simulating the schedule from every source, 64 at a
 * time in a bitset: O(P/64 x D~ x E). */
static int colour_diameter_sim(const xl_edges *g, const int *ord)
{
    int P = g->P, diam = 0;
    uint64_t *know = malloc((size_t)P * sizeof *know);
    if (!know)
        return -1;
    for (int base = 0; base < P; base += 64) {
        int nsrc = P - base < 64 ? P - base : 64;
        uint64_t full = nsrc == 64 ? ~0ull : (1ull << nsrc) - 1;
        memset(know, 0, (size_t)P * sizeof *know);
        for (int i = 0; i < nsrc; i++)
            know[base + i] = 1ull << i;
        for (int it = 0;; it++) {
            int all = 1;
            for (int r = 0; r < P && all; r++)
                all = know[r] == full;
            if (all) {
                if (it > diam)
                    diam = it;
                break;
            }
            if (it > P) { /* disconnected */
                free(know);
                return -1;
            }
            for (int i = 0; i < g->nedges; i++) {
                int e = ord[i];
                uint64_t x = know[g->u[e]] | know[g->v[e]];
                know[g->u[e]] = know[g->v[e]] = x;
            }
        }
    }
    free(know);
    return diam;
}

/* The reference plan of a P-rank job from the edge list: colours, simulated
 * colour diameter, count tree. *bad counts the ranks among 0, step,
 * 2 step, ... and P - 1 whose plan() differs from it in colours, D~, L,
 * PredefinedValue, neighbours, parent colour or children. */
int td_xulau_plan_ref(const td_cfg *cfg, int step, int *kappa, int *cdiam, int *lag, int *pv, int *bad);
int td_xulau_plan_ref(const td_cfg *cfg, int step, int *kappa, int *cdiam, int *lag, int *pv, int *bad)
{
    td_ctx c;
    xl_edges g;
    memset(&c, 0, sizeof c);
    c.cfg = *cfg;
    c.size = cfg->size;
    int rc = build_edges(&c, &g), P = g.P, *ord = NULL, *lg = malloc((size_t)P * sizeof *lg);
    signed char *pcol = malloc((size_t)P);
    if (rc != TD_OK)
        goto out;
    rc = TD_ENOMEM;
    if (!pcol || !lg || !(ord = edges_by_colour(&g)) || count_tree(&g, P, edges_adj, pcol, lg) != TD_OK)
        goto out;
    rc = TD_EPROTO;
    if ((*cdiam = colour_diameter_sim(&g, ord)) < 0)
        goto out;
    *kappa = g.kappa;
    *lag = 0;
    for (int r = 0; r < P; r++)
        *lag = lg[r] > *lag ? lg[r] : *lag;
    *pv = *cdiam + 1 + (*cdiam - 1 > *lag ? *cdiam - 1 : *lag);
    *bad = 0;
    for (int r = 0; r < P; r = r + step < P || r == P - 1 ? r + step : P - 1) {
        xulau s;
        memset(&s, 0, sizeof s);
        c.rank = r;
        int ok = plan(&c, &s) == TD_OK && s.kappa == *kappa && s.cdiam == *cdiam && s.lag == *lag &&
                 s.pv == (uint32_t)*pv && s.pcol == pcol[r];
        int nbr[XL_MAXC], col[XL_MAXC], deg = edges_adj(&g, r, nbr, col);
        for (int a = 0; a < deg; a++)
            ok &= s.nb[col[a]] == nbr[a] && s.child[col[a]] == (pcol[nbr[a]] == col[a]);
        for (int i = 0; i < XL_MAXC; i++)
            deg -= s.nb[i] >= 0;
        *bad += !ok || deg != 0;
    }
    rc = TD_OK;
out:
    free(ord);
    free(pcol);
    free(lg);
    edges_free(&g);
    return rc;
}
#endif
