/*
 * progmix: generated point-to-point rounds for the progress-safety tests
 * (tests/mpi/progress.sh, issue "Progress safety and exact idleness").
 *
 * A correct MPI program that never polls while idle: in each round every
 * rank posts its receives, then its sends, to one or two partners, and
 * completes them with one of the completion patterns below (chosen per rank
 * and round from the seed), with a collective between rounds. Under tdshim
 * such a program must see no contract violation, no hang (held credit, a
 * rank in a collective) and no announcement before every rank is in
 * MPI_Finalize: the job is never quiescent earlier, since a rank only waits
 * in a completion call while messages to it are in transit, or in a
 * collective (active).
 *
 *   progmix [--seed S] [--rounds R] [--pattern bidir|mix] [--window W]
 *
 * bidir: the bidirectional window of MPI benchmark suites (rank r with
 * r^1, a window of Irecv + Isend, completed together, MPI_Allreduce between
 * rounds). mix: partners (r+k) and (r-k) mod P for a k drawn per round.
 * Sizes are drawn from 0, 8, 1000, 70000 and 2^20 bytes (both sides of the
 * eager/rendezvous thresholds). A collective (MPI_Allreduce) follows about
 * one round in four, so rounds also follow each other directly: a rank
 * then sends right after completing, which is where a rank wrongly left
 * passive by a completion call shows as a contract violation. Every payload byte is checked; the last
 * line of rank 0 is "RESULT progmix ... errors=0 ok" or "... FAILED".
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static uint64_t seed;
static long errors;

static uint64_t draw(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix64(seed * 0x9E3779B97F4A7C15ULL ^ mix64(a + 1) ^ mix64((b + 7) * 31) ^ mix64((c + 3) * 131) ^
                 mix64((d + 11) * 1031));
}

static const int sizes[5] = {0, 8, 1000, 70000, 1 << 20};

/* message i of round r from src to dst: its size and payload */
static int msg_size(int r, int src, int dst, int i)
{
    return sizes[draw(r, src, dst, i) % 5];
}
static unsigned char payload(int r, int src, int dst, int i, int j)
{
    return (unsigned char)(draw(r, src, dst, i) >> 8) + (unsigned char)(j * 7);
}

enum { C_WAITALL, C_WAITALL_RS, C_WAITALL_SR, C_WAITANY, C_WAITSOME, C_TESTALL, C_TESTANY, C_TESTSOME,
       C_WAIT_EACH, C_PERSISTENT, C_SENDRECV, C_BLOCKING_SEND, C_N };
static const char *const cnames[C_N] = {"waitall",  "waitall-recvs-sends", "waitall-sends-recvs", "waitany",
                                        "waitsome", "testall", "testany", "testsome", "wait-each",
                                        "persistent", "sendrecv", "blocking-send"};

int main(int argc, char **argv)
{
    int rounds = 40, window = 4, bidir = 1;
    seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc)
            window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pattern") && i + 1 < argc)
            bidir = !strcmp(argv[++i], "bidir");
        else {
            fprintf(stderr, "usage: progmix [--seed S] [--rounds R] [--pattern bidir|mix] [--window W]\n");
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (window < 1 || window > 16 || rounds < 1) {
        if (!rank)
            fprintf(stderr, "progmix: --window 1..16, --rounds >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int maxn = 2 * window; /* window <= 16: at most 4 * 16 requests (done[] below) */
    MPI_Request *req = malloc(2 * (size_t)maxn * sizeof *req);
    MPI_Status *st = malloc(4 * (size_t)maxn * sizeof *st); /* Waitsome/Testsome use st + n */
    int *idx = malloc(2 * (size_t)maxn * sizeof *idx);
    unsigned char **rbuf = calloc((size_t)maxn, sizeof *rbuf), **sbuf = calloc((size_t)maxn, sizeof *sbuf);
    int *rsrc = malloc((size_t)maxn * sizeof *rsrc), *rsz = malloc((size_t)maxn * sizeof *rsz);
    int *sdst = malloc((size_t)maxn * sizeof *sdst), *ssz = malloc((size_t)maxn * sizeof *ssz);
    int *rid = malloc((size_t)maxn * sizeof *rid);
    int used[C_N] = {0}, used_pers = 0;

    for (int r = 0; r < rounds; r++) {
        /* partners: to[] receive from me, from[] send to me */
        int to[2], from[2], np = 0;
        if (bidir) {
            int p = rank ^ 1;
            if (p < size) {
                to[0] = from[0] = p;
                np = 1;
            }
        } else if (size > 1) {
            int k = 1 + (int)(draw(r, 99, 0, 0) % (uint64_t)(size - 1));
            to[0] = (rank + k) % size;
            from[0] = (rank - k + size) % size;
            np = 1;
            if (size > 2 && (draw(r, 98, 0, 0) & 1)) {
                int k2 = 1 + (int)(draw(r, 97, 0, 0) % (uint64_t)(size - 1));
                to[1] = (rank + k2) % size;
                from[1] = (rank - k2 + size) % size;
                np = 2;
            }
        }
        int kind = (int)(draw(r, rank, 5, 5) % C_N);
        if (kind == C_SENDRECV && np == 2)
            kind = C_WAITALL; /* Sendrecv pairs one send with one receive */
        used[kind]++;
        int nr = 0, ns = 0;
        for (int p = 0; p < np; p++)
            for (int i = 0; i < window; i++) {
                rsrc[nr] = from[p];
                rid[nr] = p * window + i;
                rsz[nr] = msg_size(r, from[p], rank, rid[nr]);
                rbuf[nr] = realloc(rbuf[nr], (size_t)rsz[nr] + 1);
                memset(rbuf[nr], 0xEE, (size_t)rsz[nr] + 1);
                nr++;
                sdst[ns] = to[p];
                ssz[ns] = msg_size(r, rank, to[p], p * window + i);
                sbuf[ns] = realloc(sbuf[ns], (size_t)ssz[ns] + 1);
                for (int j = 0; j < ssz[ns]; j++)
                    sbuf[ns][j] = payload(r, rank, to[p], p * window + i, j);
                ns++;
            }
        /* tags: the message id, so messages of a pair match one to one */
        int n = nr + ns;
        if (kind == C_SENDRECV) {
            for (int i = 0; i < nr; i++)
                MPI_Sendrecv(sbuf[i], ssz[i], MPI_BYTE, sdst[i], rid[i], rbuf[i], rsz[i] + 1, MPI_BYTE, rsrc[i],
                             rid[i], MPI_COMM_WORLD, &st[i]);
        } else if (kind == C_PERSISTENT) {
            for (int i = 0; i < nr; i++)
                MPI_Recv_init(rbuf[i], rsz[i] + 1, MPI_BYTE, rsrc[i], rid[i], MPI_COMM_WORLD, &req[i]);
            for (int i = 0; i < ns; i++)
                MPI_Send_init(sbuf[i], ssz[i], MPI_BYTE, sdst[i], i, MPI_COMM_WORLD, &req[nr + i]);
            MPI_Startall(n, req);
            MPI_Waitall(n, req, st);
            for (int i = 0; i < n; i++)
                MPI_Request_free(&req[i]);
        } else {
            /* one round in three posts persistent requests (Startall)
             * and completes them the same way */
            int pers = kind != C_BLOCKING_SEND && draw(r, rank, 6, 6) % 3 == 0;
            for (int i = 0; i < nr; i++)
                if (pers)
                    MPI_Recv_init(rbuf[i], rsz[i] + 1, MPI_BYTE, rsrc[i], rid[i], MPI_COMM_WORLD, &req[i]);
                else
                    MPI_Irecv(rbuf[i], rsz[i] + 1, MPI_BYTE, rsrc[i], rid[i], MPI_COMM_WORLD, &req[i]);
            if (kind == C_BLOCKING_SEND) {
                for (int i = 0; i < ns; i++)
                    MPI_Send(sbuf[i], ssz[i], MPI_BYTE, sdst[i], i, MPI_COMM_WORLD);
                MPI_Waitall(nr, req, st);
            } else {
                for (int i = 0; i < ns; i++)
                    if (pers)
                        MPI_Send_init(sbuf[i], ssz[i], MPI_BYTE, sdst[i], i, MPI_COMM_WORLD, &req[nr + i]);
                    else
                        MPI_Isend(sbuf[i], ssz[i], MPI_BYTE, sdst[i], i, MPI_COMM_WORLD, &req[nr + i]);
                if (pers)
                    MPI_Startall(n, req);
                used_pers += pers;
                int left = n, flag, k, out;
                unsigned char done[64] = {0};
                MPI_Status one;
                switch (kind) {
                case C_WAITALL:
                    MPI_Waitall(n, req, st);
                    break;
                case C_WAITALL_RS:
                    MPI_Waitall(nr, req, st);
                    MPI_Waitall(ns, req + nr, st + nr);
                    break;
                case C_WAITALL_SR:
                    MPI_Waitall(ns, req + nr, st + nr);
                    MPI_Waitall(nr, req, st);
                    break;
                case C_WAITANY:
                    while (left--) {
                        MPI_Waitany(n, req, &k, &one);
                        if (k != MPI_UNDEFINED)
                            st[k] = one;
                    }
                    break;
                case C_WAITSOME:
                case C_TESTSOME:
                    while (left > 0) {
                        if (kind == C_WAITSOME)
                            MPI_Waitsome(n, req, &out, idx, st + n);
                        else
                            MPI_Testsome(n, req, &out, idx, st + n);
                        if (out == MPI_UNDEFINED)
                            break;
                        for (int j = 0; j < out; j++)
                            st[idx[j]] = st[n + j];
                        left -= out;
                    }
                    break;
                case C_TESTALL:
                    do
                        MPI_Testall(n, req, &flag, st);
                    while (!flag);
                    break;
                case C_TESTANY:
                    while (left > 0) {
                        MPI_Testany(n, req, &k, &flag, &one);
                        if (flag && k != MPI_UNDEFINED) {
                            st[k] = one;
                            left--;
                        } else if (flag) {
                            break;
                        }
                    }
                    break;
                case C_WAIT_EACH:
                    for (int j = 0; j < n; j++) {
                        int i = (int)((j * 7 + r) % n);
                        while (done[i])
                            i = (i + 1) % n;
                        done[i] = 1;
                        MPI_Wait(&req[i], &st[i]);
                    }
                    break;
                }
                if (pers)
                    for (int i = 0; i < n; i++)
                        MPI_Request_free(&req[i]);
            }
        }
        for (int i = 0; i < nr; i++) {
            int cnt = -1;
            MPI_Get_count(&st[i], MPI_BYTE, &cnt);
            if (cnt != rsz[i] || st[i].MPI_SOURCE != rsrc[i] || st[i].MPI_TAG != rid[i]) {
                errors++;
                fprintf(stderr, "progmix: rank %d round %d (%s) msg %d: count %d/%d source %d/%d tag %d/%d\n",
                        rank, r, cnames[kind], i, cnt, rsz[i], st[i].MPI_SOURCE, rsrc[i], st[i].MPI_TAG, rid[i]);
                continue;
            }
            for (int j = 0; j < rsz[i]; j++)
                if (rbuf[i][j] != payload(r, rsrc[i], rank, rid[i], j)) {
                    errors++;
                    fprintf(stderr, "progmix: rank %d round %d (%s) msg %d: byte %d differs\n", rank, r,
                            cnames[kind], i, j);
                    break;
                }
            if (rbuf[i][rsz[i]] != 0xEE) {
                errors++;
                fprintf(stderr, "progmix: rank %d round %d: byte past the message written\n", rank, r);
            }
        }
        /* a collective after some rounds (benchmark suites: between message
         * sizes), so that rounds also follow each other directly */
        if (draw(r, 96, 0, 0) % 4 == 0 || r == rounds - 1) {
            long e = errors, all = 0;
            MPI_Allreduce(&e, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            if (all && !rank)
                fprintf(stderr, "progmix: %ld errors after round %d\n", all, r);
        }
    }
    long all = 0;
    int allused[C_N];
    MPI_Reduce(&errors, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(used, allused, C_N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int allpers = 0;
    MPI_Reduce(&used_pers, &allpers, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (!rank) {
        printf("RESULT progmix ranks=%d rounds=%d pattern=%s window=%d seed=%llu completions=", size, rounds,
               bidir ? "bidir" : "mix", window, (unsigned long long)seed);
        for (int k = 0; k < C_N; k++)
            printf("%s%s:%d", k ? "," : "", cnames[k], allused[k]);
        printf(" persistent-rounds=%d errors=%ld %s\n", allpers, all, all ? "FAILED" : "ok");
    }
    for (int i = 0; i < maxn; i++) {
        free(rbuf[i]);
        free(sbuf[i]);
    }
    free(rbuf), free(sbuf), free(req), free(st), free(idx), free(rsrc), free(rsz), free(sdst), free(ssz), free(rid);
    MPI_Finalize();
    return all ? 1 : 0;
}
