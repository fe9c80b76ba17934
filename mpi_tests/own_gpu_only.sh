#!/usr/bin/env bash
# own_gpu_only.sh PROGRAM [ARGS...]: runs PROGRAM seeing only this rank's GPU
# (by local rank, round robin over the GPUs there are), as Slurm's
# --gpus-per-task does: CUDA IPC between ranks on different GPUs must then
# decline to the staged pipeline.
set -euo pipefail
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
gpus=$(nvidia-smi -L | grep -c '^GPU ')
export CUDA_VISIBLE_DEVICES=$((local_rank % gpus))
exec "$@"
