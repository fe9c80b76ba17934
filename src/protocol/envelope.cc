#include "protocol/envelope.h"

#include <cstring>

#include "protocol/channel.h"
#include "protocol/node_map.h"

namespace cumpi::protocol {

namespace {
constexpr std::uint64_t kEnvelopeMagic = 0x3156526970'6d7563ULL;  // "cumpiRV1", little-endian
}  // namespace

Envelope make_envelope(std::uint64_t bytes) {
  const Channel& own = channel();
  Envelope envelope;
  envelope.magic = kEnvelopeMagic;
  envelope.cookie = own.cookie;
  envelope.message_id = next_message_id();
  envelope.bytes = bytes;
  envelope.sender_world_rank = own.world_rank;
  envelope.sender_pid = own.pid;
  envelope.sender_node = this_node();
  return envelope;
}

transport::Message message_of(const Envelope& envelope, const transport::Peer& peer) {
  transport::Message message;
  message.id = envelope.message_id;
  message.bytes = static_cast<std::size_t>(envelope.bytes);
  message.peer = peer;
  message.comm = channel().comm;
  message.tag = chunk_tag(envelope.message_id);
  message.back_tag = back_tag(envelope.message_id);
  return message;
}

EnvelopeRecord to_record(const Envelope& envelope) {
  EnvelopeRecord record;
  std::memcpy(record.bytes, &envelope, sizeof(envelope));
  return record;
}

bool read_envelope(const void* record, Envelope* out) {
  std::uint64_t head[2];
  std::memcpy(head, record, sizeof(head));
  if (head[0] != kEnvelopeMagic || head[1] != channel().cookie || !channel_open()) {
    return false;
  }
  std::memcpy(out, record, sizeof(*out));
  return true;
}

}  // namespace cumpi::protocol
