/*
 * Point-to-point messages between processes of different jobs (issue 31,
 * tests/mpi/xjob.sh): a parent and the children it spawned, two mpiruns
 * joined by MPI_Comm_connect/MPI_Comm_accept, two mpiruns joined by
 * MPI_Comm_join over a TCP socket on the loopback, and, for comparison, an
 * intercommunicator between the two halves of one job (MPI_Intercomm_create).
 *
 *   xjob spawn N            the job spawns N children of this program
 *   xjob spawn-noshim N     the same, the children without LD_PRELOAD (no tdshim)
 *   xjob accept FILE        opens a port, writes its name to FILE, accepts
 *   xjob connect FILE       reads the port name from FILE, connects
 *   xjob join-listen FILE   listens on a loopback TCP port written to FILE, MPI_Comm_join
 *   xjob join-connect FILE  connects to that port, MPI_Comm_join
 *   xjob inter              halves of MPI_COMM_WORLD, MPI_Intercomm_create
 *
 * Over the intercommunicator the "low" side (parent, acceptor, listener,
 * lower half) and the "high" side exchange messages in both directions,
 * blocking and nonblocking: Send/Recv, Isend/Irecv+Wait(all), a persistent
 * send, Probe+Recv, Improbe+Mrecv, MPI_ANY_SOURCE receives. Each side also
 * passes a token around its own MPI_COMM_WORLD, so its termination
 * detection has primary messages to count. Every process prints what it
 * received (values and statuses), one line each, prefixed by its side and
 * world rank: the test compares the sorted lines with the native run's.
 * A dup of MPI_COMM_SELF gets a name and one self-message (warnings name
 * communicators by it); with XJOB_VIOLATE set, an empty MPI_Iprobe just
 * before makes that message a contract violation.
 */
#define _DEFAULT_SOURCE /* realpath */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int wrank, wsize;
static const char *side = "?";

static void line(const char *what, const MPI_Status *st, const int *v, int n)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    printf("%s%d %s src=%d tag=%d count=%d:", side, wrank, what, st->MPI_SOURCE, st->MPI_TAG, cnt);
    for (int i = 0; i < n && i < cnt; i++)
        printf(" %d", v[i]);
    printf("\n");
}

/* messages of the low side to remote rank r carry 1000*(r+1) + ...; replies
 * of the high side 2000*(low's rank+1)... */
static void exchange(MPI_Comm ic, int low)
{
    int lrank, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_remote_size(ic, &rsize);
    int v[4], w[4];
    MPI_Status st;
    if (low) {
        if (lrank != 0 || rsize > 32)
            return;
        MPI_Request rq[64];
        int nr = 0, *bufs = malloc((size_t)rsize * 4 * sizeof *bufs);
        for (int r = 0; r < rsize; r++) {
            for (int i = 0; i < 4; i++)
                v[i] = 1000 * (r + 1) + i;
            MPI_Send(v, 4, MPI_INT, r, 1, ic);                 /* blocking */
            for (int i = 0; i < 4; i++)
                bufs[4 * r + i] = v[i] + 10;
            MPI_Isend(bufs + 4 * r, 4, MPI_INT, r, 2, ic, &rq[nr++]); /* nonblocking */
        }
        MPI_Request ps;
        int pv[2] = {7, 8};
        MPI_Send_init(pv, 2, MPI_INT, 0, 5, ic, &ps); /* persistent, to remote rank 0, twice */
        for (int k = 0; k < 2; k++) {
            pv[0] = 7 + k;
            MPI_Start(&ps);
            MPI_Wait(&ps, &st);
        }
        MPI_Request_free(&ps);
        MPI_Status sst[64];
        MPI_Waitall(nr, rq, sst);
        free(bufs);
        /* replies: blocking ANY_SOURCE, then nonblocking from each, a probe
         * before one and a matched probe before another */
        for (int r = 0; r < rsize; r++) {
            MPI_Recv(w, 4, MPI_INT, MPI_ANY_SOURCE, 3, ic, &st);
            line("recv3", &st, w, 4);
        }
        int *rb = malloc((size_t)rsize * 4 * sizeof *rb);
        MPI_Status *sts = malloc((size_t)rsize * sizeof *sts);
        for (int r = 0; r < rsize; r++)
            MPI_Irecv(rb + 4 * r, 4, MPI_INT, r, 4, ic, &rq[r]);
        MPI_Waitall(rsize, rq, sts);
        for (int r = 0; r < rsize; r++)
            line("irecv4", &sts[r], rb + 4 * r, 4);
        free(rb);
        free(sts);
        MPI_Probe(0, 6, ic, &st);
        line("probe6", &st, w, 0);
        MPI_Recv(w, 4, MPI_INT, 0, 6, ic, &st);
        line("recv6", &st, w, 4);
        MPI_Message m;
        int flag = 0;
        while (!flag)
            MPI_Improbe(MPI_ANY_SOURCE, 7, ic, &flag, &m, &st);
        MPI_Mrecv(w, 4, MPI_INT, &m, &st);
        line("mrecv7", &st, w, 4);
        return;
    }
    /* high side: every rank gets two messages from low rank 0 */
    MPI_Recv(v, 4, MPI_INT, 0, 1, ic, &st);
    line("recv1", &st, v, 4);
    MPI_Request rq;
    MPI_Irecv(w, 4, MPI_INT, MPI_ANY_SOURCE, 2, ic, &rq);
    MPI_Wait(&rq, &st);
    line("irecv2", &st, w, 4);
    if (lrank == 0) {
        int pv[2];
        MPI_Request pr;
        MPI_Recv_init(pv, 2, MPI_INT, 0, 5, ic, &pr);
        for (int k = 0; k < 2; k++) {
            MPI_Start(&pr);
            MPI_Wait(&pr, &st);
            line("precv5", &st, pv, 2);
        }
        MPI_Request_free(&pr);
    }
    for (int i = 0; i < 4; i++)
        v[i] = 2000 + 100 * lrank + i;
    MPI_Send(v, 4, MPI_INT, 0, 3, ic);
    for (int i = 0; i < 4; i++)
        w[i] = v[i] + 10;
    MPI_Isend(w, 4, MPI_INT, 0, 4, ic, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (lrank == 0) {
        int x[3] = {60, 61, 62}, y[1] = {70};
        MPI_Ssend(x, 3, MPI_INT, 0, 6, ic);
        MPI_Request r2;
        MPI_Issend(y, 1, MPI_INT, 0, 7, ic, &r2);
        MPI_Wait(&r2, MPI_STATUS_IGNORE);
    }
}

/* the intercommunicator merged into one intracommunicator (of two jobs, a
 * mixed one, except in "inter" mode): every rank sends one message to its
 * rank 0, which takes them with MPI_ANY_SOURCE */
static void merged(MPI_Comm ic, int low)
{
    MPI_Comm mc;
    int r, n;
    MPI_Intercomm_merge(ic, !low, &mc);
    MPI_Comm_rank(mc, &r);
    MPI_Comm_size(mc, &n);
    if (r == 0) {
        for (int i = 1; i < n; i++) {
            int v;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 11, mc, &st);
            line("merged11", &st, &v, 1);
        }
    } else {
        int v = 500 + r;
        MPI_Send(&v, 1, MPI_INT, 0, 11, mc);
    }
    MPI_Comm_free(&mc);
}

/* a token once around this job's world, on a named dup of it: primary
 * messages for the job's own detection; and a message to self on a named
 * dup of MPI_COMM_SELF */
static void local_work(void)
{
    MPI_Comm c, self;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_name(c, "xjob-ring");
    int t = 0;
    MPI_Status st;
    if (wsize > 1) {
        if (wrank == 0) {
            t = 1;
            MPI_Send(&t, 1, MPI_INT, 1, 9, c);
            MPI_Recv(&t, 1, MPI_INT, wsize - 1, 9, c, &st);
            printf("%s%d ring %d\n", side, wrank, t);
        } else {
            MPI_Recv(&t, 1, MPI_INT, wrank - 1, 9, c, &st);
            t++;
            MPI_Send(&t, 1, MPI_INT, (wrank + 1) % wsize, 9, c);
        }
    }
    /* a send to a rank the communicator does not have: MPI's error, as
     * natively (tdshim used to read its world rank past the rank map) */
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int cls = -1, rc = MPI_Send(&t, 1, MPI_INT, wsize, 9, c);
    MPI_Error_class(rc, &cls);
    printf("%s%d send to rank %d: %s\n", side, wrank, wsize, cls == MPI_ERR_RANK ? "MPI_ERR_RANK" : "other");
    MPI_Comm_free(&c);
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Comm_set_name(self, "xjob-self");
    int s = 40 + wrank, r = -1;
    if (getenv("XJOB_VIOLATE")) { /* an empty poll first: the rank is passive, its send a violation */
        int f = 0;
        MPI_Iprobe(0, 99, self, &f, MPI_STATUS_IGNORE);
    }
    MPI_Sendrecv(&s, 1, MPI_INT, 0, 8, &r, 1, MPI_INT, 0, 8, self, &st);
    printf("%s%d self %d src=%d\n", side, wrank, r, st.MPI_SOURCE);
    MPI_Comm_free(&self);
}

static int read_file(const char *path, char *buf, int len)
{
    for (int tries = 0; tries < 3000; tries++) { /* up to 30 s for the other job */
        FILE *f = fopen(path, "r");
        if (f) {
            int n = (int)fread(buf, 1, (size_t)len - 1, f);
            fclose(f);
            if (n > 0 && buf[n - 1] == '\n') {
                buf[n - 1] = 0;
                return 0;
            }
        }
        usleep(10000);
    }
    return -1;
}

static void write_file(const char *path, const char *s)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", s) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static int tcp_fd(int listen_side, const char *path)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0)
        return -1;
    if (listen_side) {
        socklen_t l = sizeof a;
        char port[32];
        if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 1) || getsockname(s, (struct sockaddr *)&a, &l))
            return -1;
        snprintf(port, sizeof port, "%d", ntohs(a.sin_port));
        write_file(path, port);
        int fd = accept(s, NULL, NULL);
        close(s);
        return fd;
    }
    char port[32];
    if (read_file(path, port, sizeof port))
        return -1;
    a.sin_port = htons((unsigned short)atoi(port));
    if (connect(s, (struct sockaddr *)&a, sizeof a))
        return -1;
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child") && !strcmp(argv[2], "noshim") && getenv("LD_PRELOAD")) {
        unsetenv("LD_PRELOAD"); /* a child not under tdshim: itself again, without it */
        execv("/proc/self/exe", argv);
        perror("xjob: execv");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm parent, ic = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    const char *mode = argc > 1 ? argv[1] : "";
    int low = 1;
    if (parent != MPI_COMM_NULL) {
        side = "child";
        ic = parent;
        low = 0;
    } else if ((!strcmp(mode, "spawn") || !strcmp(mode, "spawn-noshim")) && argc > 2) {
        side = "parent";
        char *cargv[] = {"child", strcmp(mode, "spawn") ? "noshim" : NULL, NULL}, self[4096];
        if (!realpath(argv[0], self)) /* the launcher's working directory may differ (hydra) */
            snprintf(self, sizeof self, "%s", argv[0]);
        MPI_Comm_spawn(self, cargv, atoi(argv[2]), MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    } else if ((!strcmp(mode, "accept") || !strcmp(mode, "connect")) && argc > 2) {
        char port[MPI_MAX_PORT_NAME + 1] = "";
        low = !strcmp(mode, "accept");
        side = low ? "acceptor" : "connector";
        if (low) {
            if (wrank == 0) {
                MPI_Open_port(MPI_INFO_NULL, port);
                write_file(argv[2], port);
            }
            MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
            if (wrank == 0)
                MPI_Close_port(port);
        } else {
            if (wrank == 0 && read_file(argv[2], port, sizeof port)) {
                fprintf(stderr, "xjob: no port name in %s\n", argv[2]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
        }
    } else if ((!strcmp(mode, "join-listen") || !strcmp(mode, "join-connect")) && argc > 2) {
        low = !strcmp(mode, "join-listen");
        side = low ? "listener" : "joiner";
        int fd = tcp_fd(low, argv[2]);
        if (fd < 0) {
            perror("xjob: socket");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        MPI_Comm_join(fd, &ic);
        close(fd);
    } else if (!strcmp(mode, "inter") && wsize >= 2) {
        MPI_Comm half;
        low = wrank < wsize / 2;
        side = low ? "lowhalf" : "highhalf";
        MPI_Comm_split(MPI_COMM_WORLD, !low, wrank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? wsize / 2 : 0, 33, &ic);
        MPI_Comm_free(&half);
    } else {
        fprintf(stderr, "usage: xjob spawn N | accept FILE | connect FILE | join-listen FILE | join-connect FILE | inter\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    local_work();
    exchange(ic, low);
    merged(ic, low);
    MPI_Comm_disconnect(&ic);
    MPI_Finalize();
    return 0;
}
