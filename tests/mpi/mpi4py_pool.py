"""mpi4py.futures' MPIPoolExecutor under tdshim (tests/mpi/mpi4py.sh).

python3 -m mpi4py.futures mpi4py_pool.py N: a static pool (the job's rank 0
runs this script and a manager thread that polls MPI_Iprobe between sleeps,
the others serve tasks); python3 mpi4py_pool.py N W: W workers spawned by
MPI_Comm_spawn (two jobs). Prints each task's result in order, then the
pickled point-to-point part's checks where the pool runs in one job.
"""
import hashlib
import sys

from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor


def work(i):
    h = hashlib.sha256(str(i).encode())
    for _ in range(500 + 37 * (i % 11)):
        h = hashlib.sha256(h.digest())
    return i, h.hexdigest()[:16]


def main():
    n = int(sys.argv[1])
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else None
    with MPIPoolExecutor(max_workers=workers) as ex:
        out = list(ex.map(work, range(n), chunksize=1))
        futs = [ex.submit(work, n + i) for i in range(n // 4)]
        out += [f.result() for f in futs]
    for i, h in out:
        print(i, h)


if __name__ == "__main__":
    main()
