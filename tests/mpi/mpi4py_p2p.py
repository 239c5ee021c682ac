"""mpi4py's pickled point-to-point under tdshim (tests/mpi/mpi4py.sh): objects
of unknown size received by MPI_Mprobe + MPI_Mrecv, MPI_Iprobe polling
with MPI_ANY_SOURCE, nonblocking and synchronous sends of pickles, and
buffers through persistent requests polled by MPI_Test. Each rank writes
its lines to PREFIX.RANK (mpi4py_p2p.py PREFIX): mpirun merges the ranks'
standard outputs in no fixed order, even within lines; and the thread level
MPI gave it to PREFIX.thread.RANK."""
import array
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
r, n = comm.Get_rank(), comm.Get_size()
out = []
if r == 0:
    for d in range(1, n):
        comm.send({"to": d, "data": list(range(d * 3000))}, dest=d, tag=7)
    got = [comm.recv(source=MPI.ANY_SOURCE, tag=8) for _ in range(1, n)]
    out.append("gather %d" % sum(sum(g) for g in got))
else:
    o = comm.recv(source=0, tag=7)
    comm.send([x * 2 for x in o["data"]], dest=0, tag=8)
reqs = [comm.isend(("hello", r, i, "x" * (i * 5000)), dest=(r + 1) % n, tag=i) for i in range(6)]
got = []
while len(got) < 6:
    st = MPI.Status()
    if comm.iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st):
        m = comm.recv(source=st.Get_source(), tag=st.Get_tag())
        got.append((m[0], m[1], m[2], len(m[3]), st.Get_tag()))
MPI.Request.waitall(reqs)
out.append("ring %s" % sorted(got))
buf = array.array("d", [0.0] * 1000)
sb = array.array("d", [float(r + 1)] * 1000)
pr = comm.Recv_init(buf, source=(r - 1) % n, tag=3)
ps = comm.Send_init(sb, dest=(r + 1) % n, tag=3)
tot = 0.0
for it in range(20):
    MPI.Prequest.Startall([pr, ps])
    while not pr.Test():
        pass
    ps.Wait()
    tot += sum(buf)
pr.Free()
ps.Free()
out.append("persistent %.1f" % tot)
x = comm.issend(b"z" * 100, dest=(r + 1) % n, tag=4)
out.append("issend %d %s" % (len(comm.recv(source=(r - 1) % n, tag=4)), x.wait()))
comm.Barrier()
with open("%s.%d" % (sys.argv[1], r), "w") as f:
    for line in out:
        f.write("%d %s\n" % (r, line))
# the thread level MPI gave, beside (tests/mpi/mpi4py.sh: its single-level runs)
levels = {MPI.THREAD_SINGLE: "single", MPI.THREAD_FUNNELED: "funneled",
          MPI.THREAD_SERIALIZED: "serialized", MPI.THREAD_MULTIPLE: "multiple"}
with open("%s.thread.%d" % (sys.argv[1], r), "w") as f:
    f.write("%s\n" % levels.get(MPI.Query_thread(), "unknown"))
