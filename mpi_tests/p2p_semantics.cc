// MPI semantics that must hold for device buffers exactly as for host ones:
// wildcards, non-overtaking order, truncation, cancel, freeing an active
// request, derived datatypes with holes, typed counts, zero-size and NULL
// buffers, and bad input reported as MPI errors. Run with 2 to 4 ranks,
// with plain MPI (host memory) and under cumpi.
#include <mpi.h>

#include <dlfcn.h>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/checks.h"
#include "common/rendezvous_routes.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

int g_rank = 0;
int g_size = 0;

// Every rank but 0 sends its rank number to rank 0, which receives with
// MPI_ANY_SOURCE / MPI_ANY_TAG; the status must name the sender of the data.
void wildcard_receives(Memory send_memory, Memory recv_memory) {
  Checks::instance().set_context(format("wildcards %s->%s", memory_name(send_memory), memory_name(recv_memory)));
  const std::size_t bytes = 4096;
  if (g_rank != 0) {
    Buffer out(send_memory, bytes);
    out.fill(pattern(static_cast<unsigned>(g_rank), bytes));
    MPI_Send(out.data(), static_cast<int>(bytes), MPI_BYTE, 0, 40 + g_rank, MPI_COMM_WORLD);
    return;
  }
  Buffer in(recv_memory, bytes);
  std::vector<bool> seen(static_cast<std::size_t>(g_size), false);
  for (int i = 1; i < g_size; ++i) {
    MPI_Status status{};
    MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    CHECK_TRUE(status.MPI_SOURCE > 0 && status.MPI_SOURCE < g_size, "source in range");
    CHECK_EQ(status.MPI_TAG, 40 + status.MPI_SOURCE, "tag matches source");
    CHECK_BYTES(pattern(static_cast<unsigned>(status.MPI_SOURCE), bytes), in.contents(), "payload of the source");
    CHECK_TRUE(!seen[static_cast<std::size_t>(status.MPI_SOURCE)], "each source once");
    seen[static_cast<std::size_t>(status.MPI_SOURCE)] = true;
  }
}

// Messages with the same (source, tag, comm) arrive in order, whatever their
// sizes and whatever mix of blocking and nonblocking calls sends them.
void non_overtaking(Memory send_memory, Memory recv_memory) {
  Checks::instance().set_context(format("order %s->%s", memory_name(send_memory), memory_name(recv_memory)));
  const std::size_t sizes[] = {16, 300000, 1, 70000, 0, 5000000, 8};
  const int messages = sizeof(sizes) / sizeof(sizes[0]);
  if (g_rank == 0) {
    std::vector<Buffer*> buffers;
    std::vector<MPI_Request> requests;
    for (int i = 0; i < messages; ++i) {
      buffers.push_back(new Buffer(send_memory, sizes[i]));
      buffers.back()->fill(pattern(200 + i, sizes[i]));
      if (i % 2 == 0) {
        requests.emplace_back();
        MPI_Isend(buffers.back()->data(), static_cast<int>(sizes[i]), MPI_BYTE, 1, 77, MPI_COMM_WORLD,
                  &requests.back());
      } else {
        MPI_Send(buffers.back()->data(), static_cast<int>(sizes[i]), MPI_BYTE, 1, 77, MPI_COMM_WORLD);
      }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (Buffer* buffer : buffers) delete buffer;
  } else if (g_rank == 1) {
    // Post everything first, in order, then complete in reverse.
    std::vector<Buffer*> buffers;
    std::vector<MPI_Request> requests(static_cast<std::size_t>(messages));
    for (int i = 0; i < messages; ++i) {
      buffers.push_back(new Buffer(recv_memory, 5000000));
      MPI_Irecv(buffers.back()->data(), 5000000, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &requests[i]);
    }
    for (int i = messages - 1; i >= 0; --i) {
      MPI_Status status{};
      MPI_Wait(&requests[i], &status);
      int count = -1;
      MPI_Get_count(&status, MPI_BYTE, &count);
      CHECK_EQ(count, static_cast<long long>(sizes[i]), "message %d arrived in order", i);
      std::vector<unsigned char> head(sizes[i]);
      buffers[i]->download(head.data(), sizes[i]);
      CHECK_BYTES(pattern(200 + i, sizes[i]), head, "ordered payload");
    }
    for (Buffer* buffer : buffers) delete buffer;
  }
}

// A message longer than the receive buffer: MPI_ERR_TRUNCATE through
// MPI_ERRORS_RETURN, the bytes that fit delivered, nothing written past.
// Truncation, for an eager message and, from device memory, for one large
// enough to go by rendezvous (the envelope announces more than fits). A
// large truncated message from host memory is not tried: Open MPI 4.1's
// shared-memory transport writes past the receive buffer then (seen with
// plain MPI, no cumpi).
void truncation(Memory send_memory, Memory recv_memory, MPI_Comm comm) {
  for (const std::size_t sent : {std::size_t{4000}, std::size_t{100000}}) {
    if (sent > 8192 && send_memory == Memory::host) continue;
    Checks::instance().set_context(
        format("truncation %s->%s %zu B", memory_name(send_memory), memory_name(recv_memory), sent));
    const std::size_t room = sent / 4;
    if (g_rank == 0) {
      Buffer out(send_memory, sent);
      out.fill(pattern(7, sent));
      MPI_Send(out.data(), static_cast<int>(sent), MPI_BYTE, 1, 5, comm);
      MPI_Send(out.data(), static_cast<int>(sent), MPI_BYTE, 1, 6, comm);
    } else if (g_rank == 1) {
      for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
        Buffer in(recv_memory, room + 64);
        in.fill(std::vector<unsigned char>(room + 64, 0x33));
        MPI_Status status{};
        int rc = MPI_SUCCESS;
        if (nonblocking) {
          MPI_Request request;
          MPI_Irecv(in.data(), static_cast<int>(room), MPI_BYTE, 0, 6, comm, &request);
          rc = MPI_Wait(&request, &status);
        } else {
          rc = MPI_Recv(in.data(), static_cast<int>(room), MPI_BYTE, 0, 5, comm, &status);
        }
        int error_class = MPI_SUCCESS;
        MPI_Error_class(rc, &error_class);
        CHECK_EQ(error_class, MPI_ERR_TRUNCATE, "%s receive error class", nonblocking ? "nonblocking" : "blocking");
        // What lands in the buffer itself is the MPI library's choice (Open MPI
        // delivers what fits, MPICH nothing): either, and nothing past it.
        const std::vector<unsigned char> contents = in.contents();
        const std::vector<unsigned char> delivered = pattern(7, room);
        const std::vector<unsigned char> untouched(room, 0x33);
        const std::vector<unsigned char> inside(contents.begin(), contents.begin() + static_cast<std::ptrdiff_t>(room));
        CHECK_TRUE(inside == delivered || inside == untouched,
                   "a truncated receive holds the message's start or nothing");
        CHECK_BYTES(std::vector<unsigned char>(64, 0x33),
                    std::vector<unsigned char>(contents.begin() + static_cast<std::ptrdiff_t>(room), contents.end()),
                    "nothing written past a truncated receive's buffer");
      }
    }
    MPI_Barrier(comm);
  }
}

// A receive that never matches can be cancelled; its status says so.
void cancel_receive(Memory recv_memory) {
  Checks::instance().set_context(format("cancel %s", memory_name(recv_memory)));
  Buffer in(recv_memory, 1024);
  in.fill(std::vector<unsigned char>(1024, 0x44));
  MPI_Request request;
  MPI_Irecv(in.data(), 1024, MPI_BYTE, g_rank, 31337, MPI_COMM_WORLD, &request);
  MPI_Cancel(&request);
  MPI_Status status{};
  MPI_Wait(&request, &status);
  int cancelled = 0;
  MPI_Test_cancelled(&status, &cancelled);
  CHECK_EQ(cancelled, 1, "cancelled flag");
  CHECK_BYTES(std::vector<unsigned char>(1024, 0x44), in.contents(), "a cancelled receive writes nothing");
}

// MPI_Request_free on an active send: the message still arrives whole.
void free_active_send(Memory send_memory, Memory recv_memory) {
  Checks::instance().set_context(format("Request_free %s->%s", memory_name(send_memory), memory_name(recv_memory)));
  const std::size_t bytes = 100000;
  if (g_rank == 0) {
    Buffer out(send_memory, bytes);
    out.fill(pattern(88, bytes));
    MPI_Request request;
    MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, 1, 12, MPI_COMM_WORLD, &request);
    MPI_Request_free(&request);
    CHECK_TRUE(request == MPI_REQUEST_NULL, "Request_free nulls the handle");
    MPI_Barrier(MPI_COMM_WORLD);  // the receiver has the data: the buffer may go
  } else {
    if (g_rank == 1) {
      Buffer in(recv_memory, bytes);
      MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK_BYTES(pattern(88, bytes), in.contents(), "data of a freed send");
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// A persistent buffered send restarted after its previous message has left
// completely (the receiver's acknowledgement came, progress ran): every
// round delivers the buffer's contents at that round's MPI_Start. Device
// senders only: Open MPI 4.1's own persistent Bsend resends the first
// round's attached-buffer copy here (first 4 KiB zeroed), which cumpi must
// not inherit for device buffers.
void persistent_buffered_restart(Memory recv_memory) {
  Checks::instance().set_context(format("Bsend_init restarted device->%s", memory_name(recv_memory)));
  const std::size_t bytes = 100000;
  const int rounds = 4;
  if (g_rank == 0) {
    std::vector<char> attached(2 * (bytes + MPI_BSEND_OVERHEAD));
    MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
    Buffer out(Memory::device, bytes);
    MPI_Request request;
    MPI_Bsend_init(out.data(), static_cast<int>(bytes), MPI_BYTE, 1, 14, MPI_COMM_WORLD, &request);
    for (int round = 0; round < rounds; ++round) {
      out.fill(pattern(300 + round, bytes));
      MPI_Start(&request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      MPI_Recv(nullptr, 0, MPI_BYTE, 1, 15, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int poll = 0; poll < 100; ++poll) {  // lets the transport finish the message
        int flag = 0;
        MPI_Iprobe(1, 16, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      }
    }
    MPI_Request_free(&request);
    void* detached = nullptr;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
  } else if (g_rank == 1) {
    Buffer in(recv_memory, bytes);
    for (int round = 0; round < rounds; ++round) {
      MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(nullptr, 0, MPI_BYTE, 0, 15, MPI_COMM_WORLD);
      CHECK_BYTES(pattern(300 + round, bytes), in.contents(), format("round %d", round).c_str());
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A vector type with holes: only the type map's bytes move; the holes of the
// receive buffer keep their values. Counted in elements with MPI_Get_count.
void derived_datatypes(Memory send_memory, Memory recv_memory) {
  Checks::instance().set_context(format("vector type %s->%s", memory_name(send_memory), memory_name(recv_memory)));
  MPI_Datatype vector;
  MPI_Type_vector(64, 3, 5, MPI_INT, &vector);  // 64 blocks of 3 ints, stride 5
  MPI_Type_commit(&vector);
  const int count = 2;
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Type_get_extent(vector, &lb, &extent);
  const std::size_t bytes = static_cast<std::size_t>(extent) * count;
  if (g_rank == 0) {
    Buffer out(send_memory, bytes);
    out.fill(pattern(90, bytes));
    MPI_Send(out.data(), count, vector, 1, 13, MPI_COMM_WORLD);
    std::vector<int> ints(bytes / sizeof(int));
    for (std::size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int>(i * 3 + 1);
    Buffer typed(send_memory, bytes);
    typed.upload(ints.data(), bytes);
    MPI_Send(typed.data(), static_cast<int>(ints.size()), MPI_INT, 1, 14, MPI_COMM_WORLD);
  } else if (g_rank == 1) {
    Buffer in(recv_memory, bytes);
    in.fill(std::vector<unsigned char>(bytes, 0x77));
    MPI_Status status{};
    MPI_Recv(in.data(), count, vector, 0, 13, MPI_COMM_WORLD, &status);
    std::vector<unsigned char> expected(bytes, 0x77);
    const std::vector<unsigned char> sent = pattern(90, bytes);
    for (int element = 0; element < count; ++element) {
      for (int block = 0; block < 64; ++block) {
        const std::size_t first = static_cast<std::size_t>(element * extent) + block * 5 * sizeof(int);
        std::memcpy(&expected[first], &sent[first], 3 * sizeof(int));
      }
    }
    CHECK_BYTES(expected, in.contents(), "vector receive: data in the type map, holes untouched");
    int elements = -1;
    MPI_Get_count(&status, vector, &elements);
    CHECK_EQ(elements, count, "MPI_Get_count in vector elements");
    Buffer typed(recv_memory, bytes);
    MPI_Recv(typed.data(), static_cast<int>(bytes / sizeof(int)), MPI_INT, 0, 14, MPI_COMM_WORLD, &status);
    std::vector<int> ints(bytes / sizeof(int));
    typed.download(ints.data(), bytes);
    bool all = true;
    for (std::size_t i = 0; i < ints.size(); ++i) all = all && ints[i] == static_cast<int>(i * 3 + 1);
    CHECK_TRUE(all, "MPI_INT payload");
    MPI_Get_count(&status, MPI_INT, &elements);
    CHECK_EQ(elements, static_cast<long long>(ints.size()), "MPI_Get_count in ints");
  }
  MPI_Type_free(&vector);
}

// Zero-size messages from NULL and from device pointers.
void zero_size(Memory send_memory, Memory recv_memory) {
  Checks::instance().set_context(format("zero size %s->%s", memory_name(send_memory), memory_name(recv_memory)));
  if (g_rank == 0) {
    Buffer out(send_memory, 0);
    MPI_Send(nullptr, 0, MPI_BYTE, 1, 15, MPI_COMM_WORLD);
    MPI_Send(out.data(), 0, MPI_INT, 1, 16, MPI_COMM_WORLD);
  } else if (g_rank == 1) {
    Buffer in(recv_memory, 0);
    MPI_Status status{};
    MPI_Recv(in.data(), 0, MPI_BYTE, 0, 15, MPI_COMM_WORLD, &status);
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    CHECK_EQ(count, 0, "zero bytes from NULL");
    MPI_Recv(nullptr, 0, MPI_INT, 0, 16, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    CHECK_EQ(count, 0, "zero ints from a device pointer");
    CHECK_EQ(status.MPI_TAG, 16, "tag of the zero-size message");
  }
}

// Bad device buffers are MPI errors through the error handler, not crashes.
void bad_device_buffers(MPI_Comm comm) {
  Checks::instance().set_context("bad device buffers");
  Buffer small(Memory::device, 16);
  int rc = MPI_Send(small.data(), 1 << 20, MPI_BYTE, g_rank, 17, comm);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_BUFFER, "send past the end of a device allocation");
  MPI_Request request = MPI_REQUEST_NULL;
  rc = MPI_Irecv(small.data(), 4096, MPI_INT, g_rank, 17, comm, &request);
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_BUFFER, "receive past the end of a device allocation");
  CHECK_TRUE(request == MPI_REQUEST_NULL, "no request for a refused receive");
  rc = MPI_Allreduce(MPI_IN_PLACE, small.data(), 1000, MPI_DOUBLE, MPI_SUM, comm);
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_BUFFER, "collective past the end of a device allocation");
  int size = 0;
  MPI_Comm_size(comm, &size);
  Buffer large(Memory::device, 64 << 10);  // rendezvous-sized
  rc = MPI_Send(large.data(), 64 << 10, MPI_BYTE, size, 17, comm);
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_RANK, "device send to a rank outside the communicator");
  rc = MPI_Isend(large.data(), 64 << 10, MPI_BYTE, -7, 17, comm, &request);
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_RANK, "device isend to a negative rank");
  MPI_Barrier(comm);  // every rank refused the same collective locally
}

// A failing device copy (injected in the emulation) is an MPI error naming
// the copy, not a crash.
void failed_device_copy(MPI_Comm comm) {
  auto inject = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "cumpi_emu_fail_next_copies"));
  if (inject == nullptr) return;  // the real CUDA backend: nothing to inject
  Checks::instance().set_context("failed device copy");
  // Smaller than a short envelope: eager under any setting, staged through a copy.
  Buffer buffer(Memory::device, 4);
  inject(1);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = MPI_Isend(buffer.data(), 4, MPI_BYTE, 0, 18, comm, &request);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  CHECK_EQ(error_class, MPI_ERR_OTHER, "a device copy failure");
  CHECK_TRUE(request == MPI_REQUEST_NULL, "no request for a send that could not stage");
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  if (options.uses_device()) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm returning;
  MPI_Comm_dup(MPI_COMM_WORLD, &returning);
  MPI_Comm_set_errhandler(returning, MPI_ERRORS_RETURN);
  // Completion of a generalized request reports through MPI_COMM_WORLD's handler.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (options.uses_device()) {
    Checks::instance().set_context("rendezvous routes");
    establish_rendezvous_routes(MPI_COMM_WORLD);
  }

  for (Memory send_memory : options.memories) {
    for (Memory recv_memory : options.memories) {
      wildcard_receives(send_memory, recv_memory);
      non_overtaking(send_memory, recv_memory);
      truncation(send_memory, recv_memory, returning);
      free_active_send(send_memory, recv_memory);
      derived_datatypes(send_memory, recv_memory);
      zero_size(send_memory, recv_memory);
      if (send_memory == Memory::device) persistent_buffered_restart(recv_memory);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    cancel_receive(send_memory);
  }
  if (options.uses_device()) {
    MPI_Comm self;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
    bad_device_buffers(returning);
    failed_device_copy(self);
    MPI_Comm_free(&self);
    if (std::string(device_backend()) == "emulation") {
      Checks::instance().set_context("driver never loaded");
      CHECK_TRUE(!cuda_driver_loaded(), "cumpi loaded the CUDA driver into a process that never used CUDA");
    }
  }
  if (!options.uses_device()) {
    Checks::instance().set_context("host-only process");
    CHECK_TRUE(!cuda_driver_loaded(), "cumpi loaded the CUDA driver into a process that never used CUDA");
  }
  MPI_Comm_free(&returning);
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
