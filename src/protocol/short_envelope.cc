#include "protocol/short_envelope.h"

#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "protocol/channel.h"
#include "protocol/comm_context.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

namespace {

// A token word before mixing: sender (24 bits), a fixed nibble, receiver
// (24 bits), slot (12 bits). User data taken for the first word of a token
// must hit this sender, this receiver and the nibble after an invertible
// mix with the cookie: 1 in 2^52; the second word, when the message has
// room for it, makes that 1 in 2^116.
constexpr int kRankBits = 24;
constexpr std::uint64_t kRankMask = (1ULL << kRankBits) - 1;
constexpr std::uint64_t kSlotBits = 12;
static_assert(kShortSlots == (1U << kSlotBits), "slots fill the slot field");
constexpr std::uint64_t kMarker = 0xa;
constexpr std::uint64_t kSecondWordSalt = 0x73686f7274'0a0aULL;  // "short"

// splitmix64's finaliser and its inverse: a bijection of 64-bit words.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t unmix(std::uint64_t x) {
  x ^= (x >> 31) ^ (x >> 62);
  x *= 0x319642b2d24d8ec3ULL;
  x ^= (x >> 27) ^ (x >> 54);
  x *= 0x96de1b173f119089ULL;
  return x ^ (x >> 30) ^ (x >> 60);
}

std::uint64_t plain_word(int sender, int receiver, std::uint32_t slot) {
  return (static_cast<std::uint64_t>(sender) & kRankMask) << 40 | kMarker << 36 |
         (static_cast<std::uint64_t>(receiver) & kRankMask) << kSlotBits | (slot & (kShortSlots - 1));
}

bool g_this_rank_watches = false;
bool g_some_rank_watches = false;
std::vector<char> g_watchers;  // by world rank

// Slots in flight towards each peer (the sender's side).
class SlotTable {
 public:
  bool claim(int peer, std::uint32_t* slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<bool>& used = in_flight_[peer];
    if (used.empty()) {
      used.resize(kShortSlots);
    }
    std::uint32_t& hint = next_[peer];
    for (std::uint32_t i = 0; i < kShortSlots; ++i) {
      const std::uint32_t candidate = (hint + i) % kShortSlots;
      if (!used[candidate]) {
        used[candidate] = true;
        hint = candidate + 1;
        *slot = candidate;
        return true;
      }
    }
    return false;
  }
  void release(int peer, std::uint32_t slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_[peer][slot] = false;
  }

 private:
  std::mutex mutex_;
  std::map<int, std::vector<bool>> in_flight_;
  std::map<int, std::uint32_t> next_;
};

SlotTable& slot_table() {
  static SlotTable* table = new SlotTable();  // lives until exit
  return *table;
}

// Envelopes received from the channel before their token was read.
class ArrivedEnvelopes {
 public:
  bool take(int sender, std::uint32_t slot, Envelope* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = arrived_.find({sender, slot});
    if (found == arrived_.end()) {
      return false;
    }
    *out = found->second;
    arrived_.erase(found);
    return true;
  }
  void keep(int sender, const Envelope& envelope) {
    std::lock_guard<std::mutex> lock(mutex_);
    arrived_[{sender, envelope.short_slot}] = envelope;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<int, std::uint32_t>, Envelope> arrived_;
};

ArrivedEnvelopes& arrived_envelopes() {
  static ArrivedEnvelopes* arrived = new ArrivedEnvelopes();  // lives until exit
  return *arrived;
}

}  // namespace

void set_short_watchers(bool this_rank_watches, const int* watches_by_world_rank, int world_size) {
  const bool ranks_fit = static_cast<std::uint64_t>(world_size) <= kRankMask + 1;
  g_this_rank_watches = this_rank_watches && ranks_fit;
  g_watchers.assign(static_cast<std::size_t>(world_size), 0);
  g_some_rank_watches = false;
  for (int rank = 0; ranks_fit && rank < world_size; ++rank) {
    g_watchers[static_cast<std::size_t>(rank)] = watches_by_world_rank[rank] != 0 ? 1 : 0;
    g_some_rank_watches = g_some_rank_watches || watches_by_world_rank[rank] != 0;
  }
  g_smallest_watched_receive = g_this_rank_watches ? kShortEnvelopeMinBytes : kEnvelopeBytes;
}

bool watches_short_envelopes() { return g_this_rank_watches; }

bool some_rank_takes_short_envelopes() { return g_some_rank_watches; }

bool short_envelope_fits(std::size_t bytes, int peer) {
  return bytes >= kShortEnvelopeMinBytes && bytes < kEnvelopeBytes && peer >= 0 &&
         static_cast<std::size_t>(peer) < g_watchers.size() && g_watchers[static_cast<std::size_t>(peer)] != 0;
}

namespace token {

// Mixed before and after the cookie: cookies that differ in any bit give
// unrelated tokens.
std::uint64_t first_word(std::uint64_t cookie, int sender, int receiver, std::uint32_t slot) {
  return mix(mix(plain_word(sender, receiver, slot)) ^ cookie);
}

std::uint64_t second_word(std::uint64_t cookie, std::uint64_t first) { return mix(first ^ cookie ^ kSecondWordSalt); }

bool decode(std::uint64_t cookie, std::uint64_t first, int receiver, int* sender, std::uint32_t* slot) {
  const std::uint64_t plain = unmix(unmix(first) ^ cookie);
  *sender = static_cast<int>(plain >> 40);
  *slot = static_cast<std::uint32_t>(plain & (kShortSlots - 1));
  return plain == plain_word(*sender, receiver, *slot);
}

}  // namespace token

bool claim_short_slot(int peer, std::uint32_t* slot) { return slot_table().claim(peer, slot); }

void release_short_slot(int peer, std::uint32_t slot) { slot_table().release(peer, slot); }

void write_token(int peer, std::uint32_t slot, unsigned char* out, std::size_t bytes) {
  const Channel& own = channel();
  const std::uint64_t words[2] = {token::first_word(own.cookie, own.world_rank, peer, slot), 0};
  const std::uint64_t second = token::second_word(own.cookie, words[0]);
  std::memset(out, 0, bytes);
  std::memcpy(out, &words[0], kTokenWordBytes);
  if (bytes >= 2 * kTokenWordBytes) {
    std::memcpy(out + kTokenWordBytes, &second, kTokenWordBytes);
  }
}

// Above every message's tags.
int short_envelope_tag() { return tag_above_messages(); }

bool token_arrived(const unsigned char* head, std::size_t received, int* sender, std::uint32_t* slot) {
  if (!g_this_rank_watches || received < kShortEnvelopeMinBytes || received >= kEnvelopeBytes) {
    return false;
  }
  const Channel& own = channel();
  std::uint64_t words[2] = {};
  std::memcpy(&words[0], head, kTokenWordBytes);
  if (!token::decode(own.cookie, words[0], own.world_rank, sender, slot)) {
    return false;
  }
  if (received < 2 * kTokenWordBytes) {
    return true;
  }
  std::memcpy(&words[1], head + kTokenWordBytes, kTokenWordBytes);
  return words[1] == token::second_word(own.cookie, words[0]);
}

// A blocking receive is safe: the sender sent this envelope before the token
// we read, and stays in cumpi's progress until FIN.
Status take_short_envelope(int sender, std::uint32_t slot, Envelope* out) {
  ArrivedEnvelopes& arrived = arrived_envelopes();
  for (;;) {
    if (arrived.take(sender, slot, out)) {
      return Status::ok();
    }
    EnvelopeRecord record;
    const int rc = real_mpi().Recv(record.bytes, static_cast<int>(kEnvelopeBytes), MPI_BYTE, sender,
                                   short_envelope_tag(), channel().comm, MPI_STATUS_IGNORE);
    Envelope envelope;
    if (rc != MPI_SUCCESS) {
      return from_mpi(rc);
    }
    if (!read_envelope(record.bytes, &envelope)) {
      return Status::error(StatusCode::internal,
                           "a short envelope from rank " + std::to_string(sender) + " is not an envelope of this job");
    }
    arrived.keep(sender, envelope);
  }
}

Status short_envelope_arrived(const unsigned char* head, std::size_t received, MPI_Comm comm, int source, Envelope* out,
                              bool* arrived) {
  *arrived = false;
  std::uint32_t slot = 0;
  int sender = -1;
  if (!token_arrived(head, received, &sender, &slot) || world_rank_of(comm, source) != sender) {
    return Status::ok();
  }
  Status taken = take_short_envelope(sender, slot, out);
  *arrived = taken.is_ok();
  return taken;
}

}  // namespace cumpi::protocol
