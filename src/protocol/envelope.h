// The records of the rendezvous protocol (DESIGN §3). An envelope travels
// on the user's (comm, tag, dest) in place of the data, so MPI matches it
// exactly as it would have matched the data; replies travel on the private
// channel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/transport.h"

namespace cumpi::protocol {

// The envelope's size on the wire. Receives of at least this capacity are
// watched; smaller messages go eagerly, or by short envelope to ranks that
// watch smaller receives too (short_envelope.h).
constexpr std::size_t kEnvelopeBytes = 256;

// The least capacity of a watched receive: kEnvelopeBytes, or the short
// envelope's least size on a rank that takes short envelopes. Set at MPI_Init.
inline std::size_t g_smallest_watched_receive = kEnvelopeBytes;
inline std::size_t smallest_watched_receive() { return g_smallest_watched_receive; }

struct Envelope {
  std::uint64_t magic = 0;
  std::uint64_t cookie = 0;
  std::uint64_t message_id = 0;
  std::uint64_t bytes = 0;  // the message's real size
  std::int32_t sender_world_rank = -1;
  std::int32_t sender_pid = 0;
  std::int32_t sender_node = -1;
  // Announced by a token on the user's (comm, tag, dest) (short_envelope.h).
  std::uint32_t short_slot = 0;
  // The transport the sender chose, and its description of the data.
  transport::TransportId transport = transport::TransportId::none;
  transport::Blob blob;
};
static_assert(sizeof(Envelope) <= kEnvelopeBytes, "the envelope must fit its wire size");

// An envelope as it goes on the wire: exactly kEnvelopeBytes.
struct EnvelopeRecord {
  unsigned char bytes[kEnvelopeBytes] = {};
};

// A new envelope of this rank for a message of `bytes`.
Envelope make_envelope(std::uint64_t bytes);
EnvelopeRecord to_record(const Envelope& envelope);
// The message an envelope announces, as its transport sees it: exchanged
// with `peer` on the private channel's chunk tag of the message.
transport::Message message_of(const Envelope& envelope, const transport::Peer& peer);
// True when `record` holds kEnvelopeBytes that start with the magic and this
// job's cookie: no user message can be taken for an envelope by chance.
bool read_envelope(const void* record, Envelope* out);

enum class ReplyKind : std::uint32_t {
  fin = 1,   // the receiver has the data: the send is complete
  pull = 2,  // send the data through the staged pipeline
};

struct Reply {
  ReplyKind kind = ReplyKind::fin;
  std::uint32_t depth = 0;          // pull: chunks in flight
  std::uint32_t every_message = 0;  // pull: IPC from this sender will always be declined: push
  std::uint64_t bytes = 0;          // pull: bytes to send (the receiver's capacity may truncate)
  std::uint64_t chunk = 0;          // pull: chunk size
};

}  // namespace cumpi::protocol
