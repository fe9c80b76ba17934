// Randomized derived-datatype conformance: random send and receive types
// built from every MPI type constructor, nested up to three deep (negative
// and descending displacements, resized bounds, C and Fortran subarrays,
// zero counts), receive counts at least the message, over every pair of
// host and device memory. Rank 0 sends, rank 1 receives.
//
// The oracle is MPI's own datatype engine on host memory, in the same run:
// an index pattern packed with the send type gives the send side's type
// map, indices unpacked with the receive type the receive side's; from them
// every byte of the receive allocation is predicted (the message's bytes in
// place, holes, margins and elements past the message untouched). Under
// plain MPI with host memory the program checks MPI against its own engine;
// under cumpi it checks cumpi's routes.
//
//   datatype_conformance [--seed N] [--cases N] [--pairs hh,hd,dh,dd] [--large 0|1]
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"

using namespace cumpi_test;

namespace {

constexpr std::size_t kMargin = 64;
constexpr int kMaxElementInts = 512;

struct Settings {
  unsigned seed = 0;
  int cases = 200;
  std::vector<std::string> pairs{"hh", "hd", "dh", "dd"};
  bool large = true;  // also cases large enough for rendezvous
};

Settings parse(int argc, char** argv) {
  Settings settings;
  settings.seed = static_cast<unsigned>(std::random_device{}());
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--seed") settings.seed = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
    if (flag == "--cases") settings.cases = std::atoi(value.c_str());
    if (flag == "--large") settings.large = value != "0";
    if (flag == "--pairs") {
      settings.pairs.clear();
      for (std::size_t at = 0; at < value.size(); at += 3) settings.pairs.push_back(value.substr(at, 2));
    }
  }
  return settings;
}

Memory memory_of(char letter) { return letter == 'd' ? Memory::device : Memory::host; }

struct TypeInfo {
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  int ints = 0;  // MPI_INTs in one element
};

TypeInfo info_of(MPI_Datatype type) {
  TypeInfo info;
  int size = 0;
  MPI_Type_size(type, &size);
  MPI_Type_get_extent(type, &info.lb, &info.extent);
  MPI_Type_get_true_extent(type, &info.true_lb, &info.true_extent);
  info.ints = size / static_cast<int>(sizeof(int));
  return info;
}

// Random datatypes over MPI_INT. Every type made is freed with the case;
// displacements are multiples of 4, so every int lies on a 4-byte offset
// from the buffer pointer.
class TypeGenerator {
 public:
  explicit TypeGenerator(std::mt19937& random) : random_(random) {}
  ~TypeGenerator() {
    for (MPI_Datatype& type : made_) MPI_Type_free(&type);
  }
  TypeGenerator(const TypeGenerator&) = delete;
  TypeGenerator& operator=(const TypeGenerator&) = delete;

  // A committed random type, nested up to `depth` constructors deep.
  MPI_Datatype random_type(int depth, std::string* text) {
    MPI_Datatype type = nested(depth, text);
    MPI_Type_commit(&type);
    return type;
  }

  // A committed type whose data lies in packed order (rendezvous-eligible).
  MPI_Datatype packed_type(std::string* text) {
    MPI_Datatype type = MPI_INT;
    switch (pick(0, 4)) {
      case 0:
        *text = "int";
        return MPI_INT;
      case 1: {
        const int n = pick(2, 5);
        MPI_Type_contiguous(n, MPI_INT, &type);
        *text = format("contiguous(%d,int)", n);
        break;
      }
      case 2: {
        const int a = pick(1, 3);
        const int b = pick(1, 3);
        int lengths[] = {a, b};
        MPI_Aint displacements[] = {0, static_cast<MPI_Aint>(4 * a)};
        MPI_Datatype types[] = {MPI_INT, MPI_INT};
        MPI_Type_create_struct(2, lengths, displacements, types, &type);
        *text = format("struct{%d int@0,%d int@%d}", a, b, 4 * a);
        break;
      }
      case 3: {
        // resized to a negative lower bound: elements still back to back
        MPI_Type_create_resized(MPI_INT, -4, 4, &type);
        *text = "resized(int,lb=-4,extent=4)";
        break;
      }
      default: {
        int sizes[] = {3, 4};
        int subsizes[] = {2, 4};
        int starts[] = {1, 0};
        MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &type);
        *text = "subarray(C,[3,4],[2,4],[1,0],int)";
        break;
      }
    }
    made_.push_back(type);
    MPI_Type_commit(&type);
    return type;
  }

  int pick(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }

 private:
  MPI_Datatype keep(MPI_Datatype type) {
    made_.push_back(type);
    return type;
  }

  MPI_Datatype leaf(std::string* text) {
    if (pick(0, 2) == 0) {
      *text = "int";
      return MPI_INT;
    }
    const int n = pick(1, 3);
    MPI_Datatype type;
    MPI_Type_contiguous(n, MPI_INT, &type);
    *text = format("contiguous(%d,int)", n);
    return keep(type);
  }

  MPI_Datatype nested(int depth, std::string* text) {
    if (depth == 0) {
      return leaf(text);
    }
    std::string inner;
    const int constructor = pick(0, 10);
    if (constructor == 9) {
      return struct_of(depth, text);
    }
    MPI_Datatype child = nested(depth - 1, &inner);
    const TypeInfo c = info_of(child);
    if (c.ints > kMaxElementInts / 4) {
      *text = inner;
      return child;
    }
    MPI_Datatype type;
    switch (constructor) {
      case 0: {
        const int n = pick(0, 3);
        MPI_Type_contiguous(n, child, &type);
        *text = format("contiguous(%d,%s)", n, inner.c_str());
        break;
      }
      case 1: {
        const int count = pick(1, 3);
        const int block = pick(1, 3);
        const int stride = pick(0, 2) == 0 ? -(block + pick(0, 2)) : block + pick(0, 2);
        MPI_Type_vector(count, block, stride, child, &type);
        *text = format("vector(%d,%d,%d,%s)", count, block, stride, inner.c_str());
        break;
      }
      case 2: {
        const int count = pick(1, 3);
        const int block = pick(1, 2);
        const MPI_Aint span = block * c.extent + 4 * pick(0, 3);
        const MPI_Aint stride = pick(0, 2) == 0 ? -span : span;
        MPI_Type_create_hvector(count, block, stride, child, &type);
        *text = format("hvector(%d,%d,%ld,%s)", count, block, static_cast<long>(stride), inner.c_str());
        break;
      }
      case 3:
      case 4: {
        // indexed / hindexed, ascending or descending displacements
        const int count = pick(1, 4);
        std::vector<int> lengths(count);
        std::vector<int> displacements(count);
        const bool descending = pick(0, 1) == 1;
        int at = descending ? 3 * count * 3 : -pick(0, 4);
        for (int k = 0; k < count; ++k) {
          lengths[k] = pick(0, 3);
          displacements[k] = at;
          at += descending ? -(3 + pick(0, 2)) : lengths[k] + pick(0, 2);
        }
        if (constructor == 3) {
          MPI_Type_indexed(count, lengths.data(), displacements.data(), child, &type);
        } else {
          std::vector<MPI_Aint> bytes(count);
          for (int k = 0; k < count; ++k) bytes[k] = displacements[k] * c.extent + 4 * pick(0, 1);
          MPI_Type_create_hindexed(count, lengths.data(), bytes.data(), child, &type);
        }
        *text = format("%s(%d,%s,%s)", constructor == 3 ? "indexed" : "hindexed", count,
                       descending ? "descending" : "ascending", inner.c_str());
        break;
      }
      case 5:
      case 6: {
        const int count = pick(1, 4);
        const int block = pick(1, 2);
        std::vector<int> displacements(count);
        const bool descending = pick(0, 1) == 1;
        for (int k = 0; k < count; ++k) {
          const int slot = descending ? count - 1 - k : k;
          displacements[k] = slot * (block + pick(0, 1)) - (descending ? 0 : 2);
        }
        if (constructor == 5) {
          MPI_Type_create_indexed_block(count, block, displacements.data(), child, &type);
        } else {
          std::vector<MPI_Aint> bytes(count);
          for (int k = 0; k < count; ++k) bytes[k] = displacements[k] * c.extent;
          MPI_Type_create_hindexed_block(count, block, bytes.data(), child, &type);
        }
        *text = format("%s(%d,%d,%s,%s)", constructor == 5 ? "indexed_block" : "hindexed_block", count, block,
                       descending ? "descending" : "ascending", inner.c_str());
        break;
      }
      case 7: {
        const int dims = pick(2, 3);
        int sizes[3];
        int subsizes[3];
        int starts[3];
        for (int k = 0; k < dims; ++k) {
          sizes[k] = pick(1, 4);
          subsizes[k] = pick(1, sizes[k]);
          starts[k] = pick(0, sizes[k] - subsizes[k]);
        }
        const bool c_order = pick(0, 1) == 0;
        MPI_Type_create_subarray(dims, sizes, subsizes, starts, c_order ? MPI_ORDER_C : MPI_ORDER_FORTRAN, child,
                                 &type);
        *text = format("subarray(%s,%dd,%s)", c_order ? "C" : "Fortran", dims, inner.c_str());
        break;
      }
      case 8: {
        // a non-zero (possibly negative) lower bound; an extent at least
        // the true extent, so that consecutive elements never overlap
        const MPI_Aint lb = c.true_lb - 4 * pick(-3, 3);
        const MPI_Aint extent = std::max<MPI_Aint>(c.true_extent, c.extent) + 4 * pick(0, 3);
        MPI_Type_create_resized(child, lb, extent, &type);
        *text = format("resized(%s,lb=%ld,extent=%ld)", inner.c_str(), static_cast<long>(lb),
                       static_cast<long>(extent));
        break;
      }
      default: {
        MPI_Type_dup(child, &type);
        *text = format("dup(%s)", inner.c_str());
        break;
      }
    }
    return keep(type);
  }

  MPI_Datatype struct_of(int depth, std::string* text) {
    const int count = pick(1, 3);
    std::vector<int> lengths(count);
    std::vector<MPI_Aint> displacements(count);
    std::vector<MPI_Datatype> types(count);
    std::string members;
    // Members placed apart by more than their extents, in a random order.
    std::vector<int> order(count);
    for (int k = 0; k < count; ++k) order[k] = k;
    std::shuffle(order.begin(), order.end(), random_);
    MPI_Aint at = 4 * pick(-4, 0);
    std::vector<MPI_Aint> slot_at(count);
    for (int k = 0; k < count; ++k) {
      std::string inner;
      types[k] = nested(depth - 1, &inner);
      lengths[k] = pick(1, 2);
      members += (k == 0 ? "" : ",") + inner;
    }
    for (int slot = 0; slot < count; ++slot) {
      const int k = order[slot];
      const TypeInfo c = info_of(types[k]);
      displacements[k] = at - c.true_lb;
      at += lengths[k] * std::max<MPI_Aint>(c.extent, c.true_extent) + c.true_extent + 4 * pick(0, 2);
    }
    MPI_Datatype type;
    MPI_Type_create_struct(count, lengths.data(), displacements.data(), types.data(), &type);
    *text = format("struct(%d,{%s})", count, members.c_str());
    return keep(type);
  }

  std::mt19937& random_;
  std::vector<MPI_Datatype> made_;
};

// The bytes `count` elements of a type touch: [offset, offset + bytes) from
// the buffer pointer.
struct Span {
  std::int64_t offset = 0;
  std::size_t bytes = 0;
};

Span span_of(const TypeInfo& type, int count) {
  if (count <= 0 || type.true_extent <= 0) return Span{};
  const std::int64_t last = static_cast<std::int64_t>(count - 1) * type.extent;
  const std::int64_t begin = type.true_lb + std::min<std::int64_t>(0, last);
  const std::int64_t end = type.true_lb + type.true_extent + std::max<std::int64_t>(0, last);
  return Span{begin, static_cast<std::size_t>(end - begin)};
}

// Where each of the `ints` message ints of (type, count) comes from, as
// offsets into the span: an index pattern packed by MPI.
std::vector<std::int64_t> send_positions(MPI_Datatype type, int count, Span span, int ints) {
  if (ints == 0) return {};
  std::vector<int> marks(span.bytes / sizeof(int) + 1, -1);
  for (std::size_t k = 0; k < marks.size(); ++k) marks[k] = static_cast<int>(k * sizeof(int));
  std::vector<int> packed(static_cast<std::size_t>(ints) + 1);
  int position = 0;
  char* pointer = reinterpret_cast<char*>(marks.data()) - span.offset;
  MPI_Pack(pointer, count, type, packed.data(), static_cast<int>(packed.size() * sizeof(int)), &position,
           MPI_COMM_SELF);
  return std::vector<std::int64_t>(packed.begin(), packed.begin() + ints);
}

// Where each int of a receive of (type, count) lands, as offsets into the
// span: indices unpacked by MPI. False when two ints land on one place.
bool receive_positions(MPI_Datatype type, int count, Span span, int ints, std::vector<std::int64_t>* positions) {
  positions->clear();
  if (ints == 0) return true;
  std::vector<int> landing(span.bytes / sizeof(int) + 1, -1);
  std::vector<int> indices(static_cast<std::size_t>(ints));
  for (int k = 0; k < ints; ++k) indices[k] = k;
  int position = 0;
  char* pointer = reinterpret_cast<char*>(landing.data()) - span.offset;
  MPI_Unpack(indices.data(), static_cast<int>(indices.size() * sizeof(int)), &position, pointer, count, type,
             MPI_COMM_SELF);
  positions->assign(static_cast<std::size_t>(ints), -1);
  int found = 0;
  for (std::size_t slot = 0; slot < landing.size(); ++slot) {
    if (landing[slot] >= 0 && landing[slot] < ints && (*positions)[landing[slot]] < 0) {
      (*positions)[landing[slot]] = static_cast<std::int64_t>(slot * sizeof(int));
      ++found;
    }
  }
  return found == ints;
}

enum class Transfer { send_recv, isend_irecv, ssend_irecv, send_probe_recv };
const char* name(Transfer transfer) {
  static const char* names[] = {"Send/Recv", "Isend/Irecv", "Ssend/Irecv+Waitall", "Send/Probe+Recv"};
  return names[static_cast<int>(transfer)];
}

struct Case {
  MPI_Datatype send_type = MPI_INT;
  int send_count = 0;
  MPI_Datatype recv_type = MPI_INT;
  int recv_count = 0;
  std::vector<std::int64_t> receive_at;  // of each int the receive can take
  Transfer transfer = Transfer::send_recv;
  std::size_t misalign = 0;  // bytes added to each buffer's placement
  std::string text;
};

// A case whose receive type can take the message (receive types must not
// land two ints on one place); both ranks draw the same one.
bool draw_case(TypeGenerator& types, bool large, Case* out) {
  std::string send_text;
  std::string recv_text;
  const bool packed_sender = large || types.pick(0, 3) == 0;
  out->send_type = packed_sender ? types.packed_type(&send_text) : types.random_type(types.pick(1, 3), &send_text);
  const TypeInfo send = info_of(out->send_type);
  if (send.ints == 0) return false;
  const int zero = types.pick(0, 15) == 0;
  out->send_count = zero ? 0 : large ? types.pick(64, 70000) / send.ints + 1 : types.pick(1, 6);
  out->recv_type = types.pick(0, 4) == 0 ? out->send_type : types.random_type(types.pick(1, 3), &recv_text);
  if (out->recv_type == out->send_type) recv_text = "the same";
  const TypeInfo recv = info_of(out->recv_type);
  if (recv.ints == 0) return false;
  const int message_ints = out->send_count * send.ints;
  out->recv_count = (message_ints + recv.ints - 1) / recv.ints + types.pick(0, 2);
  if (static_cast<long long>(out->recv_count) * recv.ints > 4'000'000) return false;
  const Span span = span_of(recv, out->recv_count);
  if (!receive_positions(out->recv_type, out->recv_count, span, out->recv_count * recv.ints, &out->receive_at)) {
    return false;
  }
  out->transfer = static_cast<Transfer>(types.pick(0, 3));
  out->misalign = static_cast<std::size_t>(types.pick(0, 3) == 0 ? 4 * types.pick(1, 3) : 0);
  out->text = format("send %d x %s, receive %d x %s, %s", out->send_count, send_text.c_str(), out->recv_count,
                     recv_text.c_str(), name(out->transfer));
  return true;
}

void send_message(const Case& c, void* pointer, int peer) {
  MPI_Request request = MPI_REQUEST_NULL;
  switch (c.transfer) {
    case Transfer::isend_irecv:
      MPI_Isend(pointer, c.send_count, c.send_type, peer, 11, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      break;
    case Transfer::ssend_irecv:
      MPI_Ssend(pointer, c.send_count, c.send_type, peer, 11, MPI_COMM_WORLD);
      break;
    default:
      MPI_Send(pointer, c.send_count, c.send_type, peer, 11, MPI_COMM_WORLD);
      break;
  }
}

MPI_Status receive_message(const Case& c, void* pointer, int peer) {
  MPI_Status status{};
  MPI_Request request = MPI_REQUEST_NULL;
  switch (c.transfer) {
    case Transfer::isend_irecv:
      MPI_Irecv(pointer, c.recv_count, c.recv_type, peer, 11, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, &status);
      break;
    case Transfer::ssend_irecv:
      MPI_Irecv(pointer, c.recv_count, c.recv_type, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &request);
      MPI_Waitall(1, &request, &status);
      break;
    case Transfer::send_probe_recv: {
      MPI_Status probed{};
      MPI_Probe(peer, 11, MPI_COMM_WORLD, &probed);
      MPI_Recv(pointer, c.recv_count, c.recv_type, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD, &status);
      break;
    }
    default:
      MPI_Recv(pointer, c.recv_count, c.recv_type, peer, 11, MPI_COMM_WORLD, &status);
      break;
  }
  return status;
}

// One case over one memory pair: every byte of both allocations checked.
void run_case(const Case& c, Memory send_memory, Memory recv_memory, int rank, unsigned seed) {
  const TypeInfo send = info_of(c.send_type);
  const TypeInfo recv = info_of(c.recv_type);
  const Span send_span = span_of(send, c.send_count);
  const Span recv_span = span_of(recv, c.recv_count);
  const int message_ints = c.send_count * send.ints;
  if (rank == 0) {
    Buffer buffer(send_memory, send_span.bytes + 2 * kMargin + c.misalign);
    const std::vector<unsigned char> contents = pattern(seed, buffer.bytes());
    buffer.fill(contents);
    char* pointer = buffer.as<char>() + kMargin + c.misalign - send_span.offset;
    send_message(c, pointer, 1);
    CHECK_BYTES(contents, buffer.contents(), "send buffer unchanged");
    return;
  }
  Buffer buffer(recv_memory, recv_span.bytes + 2 * kMargin + c.misalign);
  std::vector<unsigned char> expected = pattern(seed ^ 0x5a5a5a5au, buffer.bytes());
  buffer.fill(expected);
  char* pointer = buffer.as<char>() + kMargin + c.misalign - recv_span.offset;
  const MPI_Status status = receive_message(c, pointer, 0);
  // The sender's bytes: its allocation's pattern, read where its type map says.
  const std::vector<unsigned char> sent = pattern(seed, send_span.bytes + 2 * kMargin + c.misalign);
  const std::vector<std::int64_t> from = send_positions(c.send_type, c.send_count, send_span, message_ints);
  const std::size_t sent_base = kMargin + c.misalign;
  const std::size_t recv_base = kMargin + c.misalign;
  for (int k = 0; k < message_ints; ++k) {
    std::memcpy(&expected[recv_base + static_cast<std::size_t>(c.receive_at[k])],
                &sent[sent_base + static_cast<std::size_t>(from[k])], sizeof(int));
  }
  CHECK_BYTES(expected, buffer.contents(), "receive allocation");
  int bytes = -1;
  int elements = -1;
  int count = -2;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  MPI_Get_elements(&status, c.recv_type, &elements);
  MPI_Get_count(&status, c.recv_type, &count);
  CHECK_EQ(bytes, message_ints * 4, "status bytes");
  // Elements and count are MPI's own arithmetic on the byte count (MPICH 4.0
  // miscounts elements of some nested structs): the status must answer as
  // one that MPI itself filled with the message's size.
  MPI_Status reference{};
  MPI_Status_set_elements(&reference, MPI_BYTE, message_ints * 4);
  int reference_elements = -3;
  int reference_count = -4;
  MPI_Get_elements(&reference, c.recv_type, &reference_elements);
  MPI_Get_count(&reference, c.recv_type, &reference_count);
  CHECK_EQ(elements, reference_elements, "status elements");
  CHECK_EQ(count, reference_count, "status count");
  const int whole = recv.ints == 0 ? 0 : message_ints / recv.ints;
  CHECK_EQ(reference_count, message_ints % recv.ints == 0 ? whole : MPI_UNDEFINED, "count of the message's size");
  CHECK_EQ(status.MPI_SOURCE, 0, "status source");
  CHECK_EQ(status.MPI_TAG, 11, "status tag");
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings = parse(argc, argv);
  const bool device = std::any_of(settings.pairs.begin(), settings.pairs.end(),
                                  [](const std::string& pair) { return pair.find('d') != std::string::npos; });
  if (device) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Bcast(&settings.seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("datatype conformance: seed %u (--seed %u replays), %d cases, pairs", settings.seed, settings.seed,
                settings.cases);
    for (const std::string& pair : settings.pairs) std::printf(" %s", pair.c_str());
    std::printf("\n");
    std::fflush(stdout);
  }
  std::mt19937 random(settings.seed);
  int drawn = 0;
  for (int attempt = 0; drawn < settings.cases && attempt < 20 * settings.cases; ++attempt) {
    TypeGenerator types(random);
    Case c;
    const bool large = settings.large && drawn % 8 == 7;
    if (!draw_case(types, large, &c)) continue;
    for (const std::string& pair : settings.pairs) {
      Checks::instance().set_context(format("case %d [%s] %s", drawn, pair.c_str(), c.text.c_str()));
      if (rank < 2) run_case(c, memory_of(pair[0]), memory_of(pair[1]), rank, settings.seed + drawn);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    ++drawn;
  }
  const int rc = Checks::instance().finish();
  MPI_Finalize();
  return rc;
}
