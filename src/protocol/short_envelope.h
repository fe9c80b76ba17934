// Short envelopes (opt-in, CUMPI_SHORT_ENVELOPES): one IPC copy for device
// messages of 8 to 255 bytes, which are too small for a 256-byte envelope.
//
// The sender puts a token of exactly the message's size on the user's
// (comm, tag, dest), so MPI matches it, counts it and truncates it as it
// would the data; the envelope itself goes first on the private channel,
// tagged for short envelopes. A token names its sender, its receiver and a
// slot (one of kShortSlots per sender and receiver, held until FIN), mixed
// with the job's cookie. A receiver that reads a token for itself from the
// rank MPI says sent it takes that slot's envelope from the channel and pulls
// the data as for any envelope.
//
// Only ranks that watch every receive of 8 bytes or more, host ones
// included, get short envelopes: each rank says at MPI_Init whether it does
// (its CUMPI_SHORT_ENVELOPES), and a sender sends them only to ranks that do.
// Watching small host receives costs host programs (they go through the
// engine), which is why this is not the default.
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/envelope.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

// The smallest message a short envelope carries: one 64-bit token word.
constexpr std::size_t kShortEnvelopeMinBytes = 8;
// Messages in flight by short envelope from one rank to another.
constexpr std::uint32_t kShortSlots = 4096;
// Token words: the first always, the second for messages of 16 bytes or more.
constexpr std::size_t kTokenWordBytes = 8;

// Set once at MPI_Init (open_channel), and cleared at MPI_Finalize: whether
// this rank watches receives of kShortEnvelopeMinBytes or more (and so the
// smallest watched receive), and which world ranks do.
void set_short_watchers(bool this_rank_watches, const int* watches_by_world_rank, int world_size);
bool watches_short_envelopes();
bool some_rank_takes_short_envelopes();
// Whether a device message of `bytes` to world rank `peer` may go by short
// envelope (the peer watches, and the size is in range).
bool short_envelope_fits(std::size_t bytes, int peer);

// The pure token arithmetic (no MPI), tested by itself.
namespace token {
// The first token word for (sender, receiver, slot) under `cookie`.
std::uint64_t first_word(std::uint64_t cookie, int sender, int receiver, std::uint32_t slot);
std::uint64_t second_word(std::uint64_t cookie, std::uint64_t first);
// True, the sender and the slot when `first` is a token to `receiver`.
bool decode(std::uint64_t cookie, std::uint64_t first, int receiver, int* sender, std::uint32_t* slot);
}  // namespace token

// Sender: a free slot towards `peer`, or false when all are in flight (the
// message then goes eagerly). Released when the send ends.
bool claim_short_slot(int peer, std::uint32_t* slot);
void release_short_slot(int peer, std::uint32_t slot);
// Writes the token of a `bytes`-long message (bytes >= kShortEnvelopeMinBytes).
void write_token(int peer, std::uint32_t slot, unsigned char* out, std::size_t bytes);
// The private channel's tag of envelopes announced by a token.
int short_envelope_tag();

// Receiver: after MPI delivered `received` bytes into a receive of this
// rank, `head` holding their first min(received, 2 * kTokenWordBytes): true,
// the sender's world rank and the slot when they are a token (the caller
// checks that MPI says the same rank sent them).
bool token_arrived(const unsigned char* head, std::size_t received, int* sender, std::uint32_t* slot);
// The envelope `sender` sent for `slot` before its token: received from the
// channel (it is there or on its way), keeping those of other slots for later.
Status take_short_envelope(int sender, std::uint32_t slot, Envelope* out);
// Both, for `received` bytes MPI delivered from `source` of `comm`, `head`
// holding their first min(received, 2 * kTokenWordBytes): *arrived and the
// envelope when they are a token from that rank.
Status short_envelope_arrived(const unsigned char* head, std::size_t received, MPI_Comm comm, int source, Envelope* out,
                              bool* arrived);

}  // namespace cumpi::protocol
