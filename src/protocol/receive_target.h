// One receive's buffer, as the rendezvous protocol sees it: where MPI lands
// the message (the user's host buffer, or a host landing buffer for a
// device buffer), whether an envelope can arrive there, and where pulled
// data goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "memory/datatype_layout.h"
#include "memory/staged_buffer.h"
#include "protocol/envelope.h"
#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::protocol {

class ReceiveTarget {
 public:
  // For a receive of `count` elements of `type` into `buffer` (host or
  // device: `where`, as memory::locate answered for the call). With `private_landing`, a host buffer's PMPI receive
  // lands in memory of its own first: another pending receive into the same memory (OSU-style benchmarks post a window
  // of them) must not overwrite an envelope before it is read.
  static Status prepare(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where,
                        bool private_landing, ReceiveTarget* out);

  // Where MPI lands the span's bytes in host memory: the user's buffer, the
  // private landing, or a device buffer's host landing.
  void* landing() const;
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

  // A receive smaller than an envelope (an engine-owned one: watched or
  // persistent) lands in a buffer of the envelope's size, so that an
  // envelope or a short envelope's token that MPI would truncate arrives
  // whole: its message is then pulled, truncated as MPI would, and its sender
  // gets FIN. Plain data is truncated by finish_plain as MPI would have.
  void land_stand_ins_whole();
  bool lands_whole() const { return whole_ != nullptr; }
  // The buffer, count and type to post the PMPI receive with.
  void* post_buffer() const { return whole_ ? static_cast<void*>(whole_.get()) : landing(); }
  int post_count() const { return whole_ ? static_cast<int>(kEnvelopeBytes) : count_; }
  MPI_Datatype post_type() const { return whole_ ? MPI_BYTE : type_; }

  std::size_t capacity() const { return capacity_; }
  bool on_device() const { return staged_.staged(); }
  // The data bytes lie in memory as MPI packs them (memory::is_contiguous).
  bool contiguous() const { return contiguous_; }
  // Where a contiguous target's bytes go: device memory for a device buffer,
  // else the user's host memory; null when not contiguous.
  char* contiguous_destination() const;
  const memory::PointerInfo& owner() const { return staged_.owner(); }
  // The host bytes [first, last) of a host target; empty for device ones.
  std::uintptr_t host_first() const;
  std::uintptr_t host_last() const { return host_first() + (on_device() ? 0 : span_.bytes); }

  // After MPI delivered `received` bytes from `source` of `comm` into
  // landing(): true and the envelope when those bytes are one, or the token
  // of a short envelope (whose envelope is then taken from the channel).
  Status envelope_arrived(std::size_t received, MPI_Comm comm, int source, Envelope* envelope, bool* arrived) const;
  // Before each start of a persistent receive with holes: the host landing
  // takes the device's bytes again, so that a copy-back keeps the holes.
  Status refresh_holes();
  // After MPI delivered `received` bytes of plain data into post_buffer();
  // from a buffer of the envelope's size, at most capacity() of them.
  Status finish_plain(std::size_t received);
  // Writes `bytes` of packed message data (a pulled message into a target
  // with holes, or a probed plain message) as MPI would have, then finishes.
  Status deliver_packed(const void* bytes, std::size_t length);

 private:
  memory::StagedBuffer staged_;
  std::unique_ptr<char[]> private_landing_;  // host targets only: the span's bytes
  std::unique_ptr<unsigned char[]> whole_;   // kEnvelopeBytes, for receives smaller than that
  int count_ = 0;
  MPI_Datatype type_{};
  memory::TypeLayout layout_;
  memory::ByteSpan span_;
  std::size_t capacity_ = 0;
  bool contiguous_ = true;

  // Before cumpi writes the user's host memory: pending direct receives
  // overlapping it are looked at first (host_receives.h).
  void settle_before_writing() const;
  // The first `bytes` message bytes MPI landed, packed.
  bool read_head(std::size_t bytes, unsigned char* out) const;
  // finish_plain for bytes MPI landed in landing().
  Status finish_landed(std::size_t received);
  // Writes the message's last `rest` bytes into element `index`, which
  // they do not fill.
  int unpack_partial_element(const char* bytes, std::size_t rest, int index);
};

// True when a receive of `capacity` bytes could take an envelope.
inline bool may_take_envelope(std::size_t capacity) { return capacity >= smallest_watched_receive(); }
// True when a message of `bytes` could be an envelope or a short envelope's
// token on this rank (a cheap test before looking at the bytes).
inline bool may_be_envelope(std::size_t bytes) {
  return bytes == kEnvelopeBytes || (bytes >= smallest_watched_receive() && bytes < kEnvelopeBytes);
}

}  // namespace cumpi::protocol
