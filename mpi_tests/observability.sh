#!/usr/bin/env bash
# observability.sh MPIRUN LIBCUMPI P2P_MATRIX COLLECTIVES: what CUMPI_STATS
# and CUMPI_LOG=debug say of a run, as a user reads them:
# - the sender of a rendezvous message counts it too ("rendezvous ... sent"),
#   as the receiver does ("... received");
# - the pass-through row counts the bytes of host-buffer calls;
# - debug says what happens to eager device messages and to collectives.
set -euo pipefail
mpirun=$1 library=$2 matrix=$3 collectives=$4
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
expect() {  # expect DESCRIPTION EXTENDED-REGEX
  if grep -qE "$2" "$log"; then echo "ok: $1"; else echo "FAILED: $1 (no line matches '$2')"; failed=$((failed + 1)); fi
}
CUMPI_STATS=1 CUMPI_LOG=debug "$here/run_launched.sh" "$mpirun" 2 300 "$library" "$matrix" --memory both \
  --sizes 8,100,300000 > "$log" 2>&1
expect "the matrix passed" "^[0-9]+ passed, 0 failed"
expect "a sender counts its rendezvous messages" "cumpi-stats +[0-9]+ +rendezvous [a-z]+ sent +[1-9]"
expect "a receiver counts its rendezvous messages" "cumpi-stats +[0-9]+ +rendezvous [a-z]+ received +[1-9]"
expect "pass-through bytes are counted" "cumpi-stats +[0-9]+ +pass-through +[0-9]+ +[1-9]"
expect "debug names eager device sends" "debug: device message of [0-9]+ bytes to rank [0-9]+ \(tag -?[0-9]+\): eager"
expect "debug names rendezvous sends" "debug: message [0-9]+ \([0-9]+ bytes\) to rank [0-9]+ \(tag -?[0-9]+\): rendezvous by"
CUMPI_LOG=debug "$here/run_launched.sh" "$mpirun" 3 300 "$library" "$collectives" --memory device > "$log" 2>&1
expect "the collectives passed" "^[0-9]+ passed, 0 failed"
expect "debug names each device collective's algorithm" "debug: MPI_[A-Za-z_]+ of [0-9]+ elements on a communicator of 3 ranks: [a-z]+"
expect "debug names staged collectives" "debug: (blocking|nonblocking) collective staged"
echo "$((9 - failed)) passed, $failed failed"
[ "$failed" = 0 ]
