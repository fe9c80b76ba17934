"""mpi4py with CuPy device arrays under cumpi: Send/Recv, Isend/Irecv,
Allreduce, Bcast and Sendrecv on GPU memory, every element checked.

    mpirun -np 2 -x LD_PRELOAD=build/src/libcumpi.so python3 mpi_tests/mpi4py_cupy.py
"""
import sys

import cupy as cp
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
cp.cuda.Device(rank % cp.cuda.runtime.getDeviceCount()).use()
passed = 0
failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAILED [rank {rank}] {what}", file=sys.stderr, flush=True)


n = 1 << 22
if rank == 0:
    a = cp.arange(n, dtype=cp.float32)
    cp.cuda.runtime.deviceSynchronize()
    comm.Send(a, dest=1, tag=3)
    req = comm.Isend(a * 2, dest=1, tag=4)
    req.Wait()
elif rank == 1:
    b = cp.zeros(n, dtype=cp.float32)
    status = MPI.Status()
    comm.Recv(b, source=0, tag=3, status=status)
    check(bool((b == cp.arange(n, dtype=cp.float32)).all()), "Send/Recv data")
    check(status.Get_count(MPI.FLOAT) == n and status.Get_source() == 0, "Recv status")
    c = cp.zeros(n, dtype=cp.float32)
    comm.Irecv(c, source=0, tag=4).Wait()
    check(bool((c == 2 * cp.arange(n, dtype=cp.float32)).all()), "Isend/Irecv data")

x = cp.full(1 << 20, rank + 1, dtype=cp.float64)
y = cp.empty_like(x)
cp.cuda.runtime.deviceSynchronize()
comm.Allreduce(x, y, op=MPI.SUM)
check(bool((y == size * (size + 1) / 2).all()), "Allreduce")
comm.Allreduce(MPI.IN_PLACE, x, op=MPI.MAX)
check(bool((x == size).all()), "Allreduce in place")

z = cp.arange(1000, dtype=cp.int32) if rank == 0 else cp.zeros(1000, dtype=cp.int32)
cp.cuda.runtime.deviceSynchronize()
comm.Bcast(z, root=0)
check(bool((z == cp.arange(1000, dtype=cp.int32)).all()), "Bcast")

send = cp.full(4096, rank, dtype=cp.int64)
recv = cp.empty_like(send)
cp.cuda.runtime.deviceSynchronize()
comm.Sendrecv(send, dest=(rank + 1) % size, recvbuf=recv, source=(rank - 1) % size)
check(bool((recv == (rank - 1) % size).all()), "Sendrecv ring")

totals = (comm.allreduce(passed), comm.allreduce(failed))
if rank == 0:
    print(f"{totals[0]} passed, {totals[1]} failed", flush=True)
sys.exit(0 if totals[1] == 0 else 1)
