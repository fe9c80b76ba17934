#!/bin/sh
# short_envelopes_on_odd_ranks.sh PROGRAM [ARGS...]: runs PROGRAM with
# CUMPI_SHORT_ENVELOPES on the odd ranks only (Open MPI's or MPICH's rank
# variable): senders must follow each receiver's own choice.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
CUMPI_SHORT_ENVELOPES=$((rank % 2))
export CUMPI_SHORT_ENVELOPES
exec "$@"
