"""mpi4py under cumpi, where libmpi is loaded by mpi4py after the preload.
Host NumPy arrays always; emulated device memory too when the process runs
under libcumpi_emu.so (its allocator is found in the process, and mpi4py is
handed the raw device address, as CuPy arrays hand it theirs).

    mpirun -np 2 -x LD_PRELOAD=build/src/libcumpi_emu.so python3 mpi_tests/mpi4py_buffers.py
"""
import ctypes
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
results = [0, 0]


def check(ok, what):
    results[0 if ok else 1] += 1
    if not ok:
        print(f"FAILED [rank {rank}] {what}", file=sys.stderr, flush=True)


n = 100000
if rank == 0:
    comm.Send(np.arange(n, dtype=np.float64), dest=1, tag=5)
elif rank == 1:
    received = np.zeros(n, dtype=np.float64)
    status = MPI.Status()
    comm.Recv(received, source=0, tag=5, status=status)
    check(bool((received == np.arange(n)).all()), "host Send/Recv data")
    check(status.Get_count(MPI.DOUBLE) == n, "host Recv count")
total = np.zeros(1000, dtype=np.int64)
comm.Allreduce(np.full(1000, rank + 1, dtype=np.int64), total, op=MPI.SUM)
check(bool((total == size * (size + 1) // 2).all()), "host Allreduce")

process = ctypes.CDLL(None)
if hasattr(process, "cumpi_emu_malloc"):
    process.cumpi_emu_malloc.restype = ctypes.c_void_p
    process.cumpi_emu_malloc.argtypes = [ctypes.c_size_t]
    process.cumpi_emu_memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    process.cumpi_emu_free.argtypes = [ctypes.c_void_p]
    nbytes = 8 * n
    device = process.cumpi_emu_malloc(nbytes)
    device_buffer = [MPI.memory.fromaddress(device, nbytes), MPI.DOUBLE]
    values = np.full(n, float(rank + 1))
    process.cumpi_emu_memcpy(device, values.ctypes.data, nbytes)
    comm.Allreduce(MPI.IN_PLACE, device_buffer, op=MPI.SUM)
    back = np.zeros(n)
    process.cumpi_emu_memcpy(back.ctypes.data, device, nbytes)
    check(bool((back == size * (size + 1) / 2).all()), "device Allreduce in place")
    if rank == 0:
        process.cumpi_emu_memcpy(device, np.arange(n, dtype=np.float64).ctypes.data, nbytes)
        comm.Send(device_buffer, dest=1, tag=6)
    elif rank == 1:
        process.cumpi_emu_memcpy(device, np.zeros(n).ctypes.data, nbytes)
        comm.Recv(device_buffer, source=0, tag=6)
        process.cumpi_emu_memcpy(back.ctypes.data, device, nbytes)
        check(bool((back == np.arange(n)).all()), "device Send/Recv data")
    comm.Bcast(device_buffer, root=0)
    process.cumpi_emu_free(device)

passed = comm.allreduce(results[0])
failed = comm.allreduce(results[1])
if rank == 0:
    print(f"{passed} passed, {failed} failed", flush=True)
sys.exit(0 if failed == 0 else 1)
