#include "protocol/receive_target.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "protocol/host_receives.h"
#include "protocol/short_envelope.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::protocol {

Status ReceiveTarget::prepare(void* buffer, int count, MPI_Datatype type, const memory::PointerInfo& where,
                              bool private_landing, ReceiveTarget* out) {
  ReceiveTarget target;
  target.count_ = count;
  target.type_ = type;
  Status status = memory::span_of_call(type, count, &target.layout_, &target.span_);
  if (!status.is_ok()) {
    return status;
  }
  target.contiguous_ = memory::is_contiguous(target.layout_, count, target.span_);
  target.capacity_ = count > 0 ? static_cast<std::size_t>(target.layout_.size) * static_cast<std::size_t>(count) : 0;
  status = memory::StagedBuffer::for_landing(buffer, target.span_, where, !target.contiguous_, &target.staged_);
  if (!status.is_ok()) {
    return status;
  }
  if (private_landing && !target.on_device() && !target.span_.empty()) {
    // Pages are touched only where MPI writes (a large new[] is mapped lazily).
    target.private_landing_.reset(new char[target.span_.bytes]);
    if (!target.contiguous_) {
      std::memcpy(target.private_landing_.get(), static_cast<char*>(buffer) + target.span_.offset, target.span_.bytes);
    }
  }
  *out = std::move(target);
  return Status::ok();
}

void ReceiveTarget::land_stand_ins_whole() {
  if (capacity_ < kEnvelopeBytes && whole_ == nullptr) {
    whole_.reset(new unsigned char[kEnvelopeBytes]);
  }
}

void* ReceiveTarget::landing() const {
  return private_landing_ ? private_landing_.get() - span_.offset : staged_.mpi_pointer();
}

std::uintptr_t ReceiveTarget::host_first() const {
  return reinterpret_cast<std::uintptr_t>(staged_.mpi_pointer()) + static_cast<std::uintptr_t>(span_.offset);
}

char* ReceiveTarget::contiguous_destination() const {
  if (!contiguous_) {
    return nullptr;
  }
  if (on_device()) {
    return staged_.device_span_begin();
  }
  return static_cast<char*>(staged_.mpi_pointer()) + span_.offset;
}

bool ReceiveTarget::read_head(std::size_t bytes, unsigned char* out) const {
  if (whole_) {
    std::memcpy(out, whole_.get(), bytes);
    return true;
  }
  const char* host_span = static_cast<const char*>(landing()) + span_.offset;
  if (contiguous_) {
    std::memcpy(out, host_span, bytes);
    return true;
  }
  // The bytes lie scattered over the type's data bytes: gather the
  // elements that hold them.
  const int elements = static_cast<int>((bytes + layout_.size - 1) / layout_.size);
  std::vector<unsigned char> packed(static_cast<std::size_t>(elements * layout_.size));
  int position = 0;
  if (real_mpi().Pack(landing(), elements, type_, packed.data(), static_cast<int>(packed.size()), &position,
                      MPI_COMM_WORLD) != MPI_SUCCESS) {
    return false;
  }
  std::memcpy(out, packed.data(), bytes);
  return true;
}

Status ReceiveTarget::envelope_arrived(std::size_t received, MPI_Comm comm, int source, Envelope* envelope,
                                       bool* arrived) const {
  *arrived = false;
  const bool may_hold = whole_ ? received <= kEnvelopeBytes : may_take_envelope(capacity_) && received <= capacity_;
  if (!may_hold || !may_be_envelope(received)) {
    return Status::ok();
  }
  if (received == kEnvelopeBytes) {
    EnvelopeRecord record;
    *arrived = read_head(kEnvelopeBytes, record.bytes) && read_envelope(record.bytes, envelope);
    return Status::ok();
  }
  unsigned char head[2 * kTokenWordBytes] = {};
  if (!read_head(std::min(received, sizeof(head)), head)) {
    return Status::ok();
  }
  return short_envelope_arrived(head, received, comm, source, envelope, arrived);
}

Status ReceiveTarget::refresh_holes() { return contiguous_ ? Status::ok() : staged_.refresh_from_device(); }

void ReceiveTarget::settle_before_writing() const {
  if (!on_device()) {
    settle_direct_receives(host_first(), host_last());
  }
}

Status ReceiveTarget::finish_plain(std::size_t received) {
  return whole_ ? deliver_packed(whole_.get(), received) : finish_landed(received);
}

Status ReceiveTarget::finish_landed(std::size_t received) {
  if (private_landing_) {
    settle_before_writing();
    const std::size_t bytes = contiguous_ ? std::min(received, span_.bytes) : span_.bytes;
    if (bytes != 0) {
      std::memcpy(static_cast<char*>(staged_.mpi_pointer()) + span_.offset, private_landing_.get(), bytes);
    }
    return Status::ok();
  }
  if (!on_device()) {
    return Status::ok();
  }
  return contiguous_ ? staged_.copy_back(received) : staged_.copy_back_all();
}

Status ReceiveTarget::deliver_packed(const void* bytes, std::size_t length) {
  const std::size_t delivered = length < capacity_ ? length : capacity_;
  if (!private_landing_) {
    settle_before_writing();
  }
  if (contiguous_) {
    char* host_span = static_cast<char*>(landing()) + span_.offset;
    if (delivered != 0) {
      std::memcpy(host_span, bytes, delivered);
    }
    return finish_landed(delivered);
  }
  if (layout_.size == 0) {
    return finish_landed(0);
  }
  const auto element_bytes = static_cast<std::size_t>(layout_.size);
  const int whole = static_cast<int>(delivered / element_bytes);
  int position = 0;
  int rc = real_mpi().Unpack(bytes, static_cast<int>(delivered), &position, landing(), whole, type_, MPI_COMM_WORLD);
  const std::size_t rest = delivered - static_cast<std::size_t>(whole) * element_bytes;
  if (rc == MPI_SUCCESS && rest != 0) {
    rc = unpack_partial_element(static_cast<const char*>(bytes) + delivered - rest, rest, whole);
  }
  return rc == MPI_SUCCESS ? finish_landed(delivered) : from_mpi(rc);
}

// A message may end inside an element, as MPI allows: the element's first
// `rest` bytes come from it, the others keep what the buffer held. MPI_Unpack
// takes whole elements only, so the element is packed, patched and unpacked.
int ReceiveTarget::unpack_partial_element(const char* bytes, std::size_t rest, int index) {
  const auto element_bytes = static_cast<int>(layout_.size);
  std::vector<char> element(static_cast<std::size_t>(element_bytes));
  char* at = static_cast<char*>(landing()) + static_cast<std::int64_t>(index) * layout_.extent;
  const RealMpi& mpi = real_mpi();
  int position = 0;
  int rc = mpi.Pack(at, 1, type_, element.data(), element_bytes, &position, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    return rc;
  }
  std::memcpy(element.data(), bytes, rest);
  position = 0;
  return mpi.Unpack(element.data(), element_bytes, &position, at, 1, type_, MPI_COMM_WORLD);
}

}  // namespace cumpi::protocol
