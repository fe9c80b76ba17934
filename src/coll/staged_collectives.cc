#include "coll/staged_collectives.h"

#include <memory>
#include <numeric>
#include <vector>

#include "memory/classifier.h"
#include "memory/staged_buffer.h"
#include "protocol/progress.h"
#include "runtime/engine_lock.h"
#include "runtime/errors.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"

namespace cumpi::coll {

using memory::ByteSpan;
using memory::StagedBuffer;
using memory::TypeLayout;

namespace {

bool in_place(const void* buffer) { return buffer == MPI_IN_PLACE; }

// Which bytes of the send and receive buffers one rank's call touches.
struct Geometry {
  ByteSpan send;
  bool send_used = false;
  ByteSpan receive;
  bool receive_used = false;
  // Copy the receive bytes to host first: they are input (MPI_IN_PLACE) or
  // the span has bytes MPI does not write (holes, gaps between blocks).
  bool preserve_receive = false;
  // The wrapper's answers for the buffers; null: located here.
  const memory::PointerInfo* send_where = nullptr;
  const memory::PointerInfo* receive_where = nullptr;
};

void use_located(const Located* located, Geometry* geometry) {
  if (located != nullptr) {
    geometry->send_where = &located->send;
    geometry->receive_where = &located->receive;
  }
}

memory::PointerInfo where_of(const void* buffer, ByteSpan span, const memory::PointerInfo* known) {
  return known != nullptr ? *known : memory::locate_span(buffer, span);
}

// A rank's part in a rooted collective.
struct Rooted {
  bool holds_root_data = false;  // the root (intra) or MPI_ROOT (inter)
  bool member = false;           // contributes or receives as a non-root member
};

Status rooted(MPI_Comm comm, int root, Rooted* role) {
  const RealMpi& mpi = real_mpi();
  int inter = 0;
  int rc = mpi.Comm_test_inter(comm, &inter);
  if (rc != MPI_SUCCESS) {
    return Status::mpi(rc);
  }
  if (inter != 0) {
    role->holds_root_data = root == MPI_ROOT;
    role->member = root >= 0;
    return Status::ok();
  }
  int rank = 0;
  rc = mpi.Comm_rank(comm, &rank);
  role->holds_root_data = rank == root;
  role->member = true;
  return from_mpi(rc);
}

// Ranks whose blocks a rank sends or receives: the remote group of an
// inter-communicator, the communicator itself otherwise.
Status peer_count(MPI_Comm comm, int* peers) {
  const RealMpi& mpi = real_mpi();
  int inter = 0;
  int rc = mpi.Comm_test_inter(comm, &inter);
  if (rc == MPI_SUCCESS) {
    rc = inter != 0 ? mpi.Comm_remote_size(comm, peers) : mpi.Comm_size(comm, peers);
  }
  return from_mpi(rc);
}

Status layout_of(MPI_Datatype type, TypeLayout* layout) { return memory::query_layout(type, layout); }

// The staged send and receive buffers of one call.
struct Staged {
  StagedBuffer send;
  StagedBuffer receive;
};

Status stage(const void* sendbuf, void* recvbuf, const Geometry& geometry, Staged* staged) {
  Status status;
  if (geometry.send_used && !in_place(sendbuf)) {
    status = StagedBuffer::for_reading(sendbuf, geometry.send, where_of(sendbuf, geometry.send, geometry.send_where),
                                       &staged->send);
  } else {
    staged->send = StagedBuffer::unchanged(sendbuf);
  }
  if (!status.is_ok()) {
    return status;
  }
  if (geometry.receive_used) {
    return StagedBuffer::for_writing(recvbuf, geometry.receive,
                                     where_of(recvbuf, geometry.receive, geometry.receive_where),
                                     geometry.preserve_receive, &staged->receive);
  }
  staged->receive = StagedBuffer::unchanged(recvbuf);
  return Status::ok();
}

// Runs `call(send, receive, request)` on staged buffers: blocking when
// `request` is null, else as a tracked nonblocking operation.
template <typename Call>
Status run(MPI_Comm comm, const void* sendbuf, void* recvbuf, const Geometry& geometry, MPI_Request* request,
           Call call) {
  stats::ScopedRecord record(stats::Route::staged_collective, 0);
  Staged staged;
  Status status = stage(sendbuf, recvbuf, geometry, &staged);
  if (!status.is_ok()) {
    return status;
  }
  record.add_bytes(staged.send.staged_bytes() + staged.receive.staged_bytes());
  CUMPI_LOG(debug, "%s collective staged: %zu bytes to host, %zu bytes back",
            request == nullptr ? "blocking" : "nonblocking", staged.send.staged_bytes(), staged.receive.staged_bytes());
  if (request == nullptr) {
    // The buffers are this call's own: other threads may use the engine
    // while the collective blocks.
    const int rc = runtime::with_engine_released(
        [&] { return call(staged.send.mpi_pointer(), staged.receive.mpi_pointer(), nullptr); });
    return rc == MPI_SUCCESS ? staged.receive.copy_back_all() : Status::mpi(rc);
  }
  auto operation = std::make_unique<protocol::StagedOperation>();
  operation->route = stats::Route::staged_collective;
  const int rc = call(staged.send.mpi_pointer(), staged.receive.mpi_pointer(), &operation->inner);
  if (rc != MPI_SUCCESS) {
    return Status::mpi(rc);
  }
  operation->reads.push_back(std::move(staged.send));
  operation->writes.push_back(std::move(staged.receive));
  return protocol::track(std::move(operation), request, comm);
}

// The same count and datatype on both sides (Allreduce, Scan, Exscan).
Status symmetric_geometry(const void* sendbuf, int count, MPI_Datatype type, Geometry* geometry) {
  TypeLayout layout;
  Status status = layout_of(type, &layout);
  geometry->send = memory::span_of(layout, count);
  geometry->send_used = true;
  geometry->receive = geometry->send;
  geometry->receive_used = true;
  geometry->preserve_receive = in_place(sendbuf) || !memory::fills_span(layout, count, geometry->receive);
  return status;
}

// One block per peer on the receive side (Allgather, Gather at the root).
Status gathered_geometry(MPI_Comm comm, const void* sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                         MPI_Datatype recvtype, Geometry* geometry) {
  TypeLayout send_layout;
  TypeLayout receive_layout;
  int peers = 0;
  Status status = layout_of(sendtype, &send_layout);
  if (status.is_ok()) status = layout_of(recvtype, &receive_layout);
  if (status.is_ok()) status = peer_count(comm, &peers);
  if (!status.is_ok()) {
    return status;
  }
  geometry->send = memory::span_of(send_layout, sendcount);
  geometry->send_used = true;
  geometry->receive = memory::span_of_uniform_blocks(receive_layout, peers, recvcount);
  geometry->receive_used = true;
  geometry->preserve_receive =
      in_place(sendbuf) ||
      !memory::fills_span(receive_layout, static_cast<std::int64_t>(recvcount) * peers, geometry->receive);
  return status;
}

// `blocks` blocks of counts[i] elements at displs[i] extents of one type.
Status blocks_span(int blocks, const int counts[], const int displs[], MPI_Datatype type, ByteSpan* span, bool* dense) {
  TypeLayout layout;
  Status status = layout_of(type, &layout);
  if (!status.is_ok()) {
    return status;
  }
  *span = memory::span_of_blocks(layout, blocks, counts, displs);
  const std::int64_t elements = std::accumulate(counts, counts + blocks, std::int64_t{0});
  *dense = memory::fills_span(layout, elements, *span);
  return status;
}

// The same with one block per peer of comm (the v-collectives).
Status peer_blocks_span(MPI_Comm comm, const int counts[], const int displs[], MPI_Datatype type, ByteSpan* span,
                        bool* dense) {
  int peers = 0;
  Status status = peer_count(comm, &peers);
  return status.is_ok() ? blocks_span(peers, counts, displs, type, span, dense) : status;
}

// Blocks of counts[i] elements of types[i] at displs[i] bytes (the
// w-collectives: int displacements in Alltoallw, MPI_Aint in the neighbour
// form).
template <typename Displacement>
Status typed_blocks_span(int blocks, const int counts[], const Displacement displs[], const MPI_Datatype types[],
                         ByteSpan* span, bool* dense) {
  std::int64_t data_bytes = 0;
  ByteSpan all;
  for (int i = 0; i < blocks; ++i) {
    if (counts[i] == 0) {
      continue;
    }
    TypeLayout layout;
    Status status = layout_of(types[i], &layout);
    if (!status.is_ok()) {
      return status;
    }
    ByteSpan block = memory::span_of(layout, counts[i]);
    block.offset += static_cast<std::int64_t>(displs[i]);
    all = memory::span_union(all, block);
    data_bytes += static_cast<std::int64_t>(counts[i]) * layout.size;
  }
  *span = all;
  *dense = static_cast<std::int64_t>(all.bytes) == data_bytes;
  return Status::ok();
}

// How many neighbours comm's virtual topology gives this rank: blocks come
// from `sources` and go to `destinations`.
struct Neighbours {
  int sources = 0;
  int destinations = 0;
};

Status neighbours_of(MPI_Comm comm, Neighbours* out) {
  const RealMpi& mpi = real_mpi();
  int topology = MPI_UNDEFINED;
  int rc = mpi.Topo_test(comm, &topology);
  if (rc != MPI_SUCCESS) {
    return Status::mpi(rc);
  }
  if (topology == MPI_CART) {
    int dimensions = 0;
    rc = mpi.Cartdim_get(comm, &dimensions);
    out->sources = out->destinations = 2 * dimensions;
  } else if (topology == MPI_GRAPH) {
    int rank = 0;
    int count = 0;
    rc = mpi.Comm_rank(comm, &rank);
    if (rc == MPI_SUCCESS) rc = mpi.Graph_neighbors_count(comm, rank, &count);
    out->sources = out->destinations = count;
  } else if (topology == MPI_DIST_GRAPH) {
    int weighted = 0;
    rc = mpi.Dist_graph_neighbors_count(comm, &out->sources, &out->destinations, &weighted);
  }
  // No topology: no blocks, and the real call raises MPI_ERR_TOPOLOGY.
  return from_mpi(rc);
}

}  // namespace

Status allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request, const Located* located) {
  Geometry geometry;
  Status status = symmetric_geometry(sendbuf, count, type, &geometry);
  if (!status.is_ok()) {
    return status;
  }
  use_located(located, &geometry);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Allreduce(s, r, count, type, op, comm)
                            : real_mpi().Iallreduce(s, r, count, type, op, comm, inner);
  });
}

Status scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
            MPI_Request* request) {
  Geometry geometry;
  Status status = symmetric_geometry(sendbuf, count, type, &geometry);
  if (!status.is_ok()) {
    return status;
  }
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Scan(s, r, count, type, op, comm)
                            : real_mpi().Iscan(s, r, count, type, op, comm, inner);
  });
}

Status exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
  Geometry geometry;
  Status status = symmetric_geometry(sendbuf, count, type, &geometry);
  if (!status.is_ok()) {
    return status;
  }
  // Rank 0's receive buffer is left as it was by MPI: keep its device bytes.
  geometry.preserve_receive = true;
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Exscan(s, r, count, type, op, comm)
                            : real_mpi().Iexscan(s, r, count, type, op, comm, inner);
  });
}

Status reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
              MPI_Request* request, const Located* located) {
  Geometry geometry;
  Rooted role;
  Status status = symmetric_geometry(sendbuf, count, type, &geometry);
  if (status.is_ok()) status = rooted(comm, root, &role);
  if (!status.is_ok()) {
    return status;
  }
  geometry.send_used = role.member;
  geometry.receive_used = role.holds_root_data;
  use_located(located, &geometry);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Reduce(s, r, count, type, op, root, comm)
                            : real_mpi().Ireduce(s, r, count, type, op, root, comm, inner);
  });
}

Status bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request,
             const Located* located) {
  TypeLayout layout;
  Rooted role;
  Status status = layout_of(type, &layout);
  if (status.is_ok()) status = rooted(comm, root, &role);
  if (!status.is_ok()) {
    return status;
  }
  Geometry geometry;
  geometry.send = memory::span_of(layout, count);
  geometry.receive = geometry.send;
  geometry.send_used = role.holds_root_data;
  geometry.receive_used = role.member && !role.holds_root_data;
  geometry.preserve_receive = !memory::fills_span(layout, count, geometry.receive);
  // One buffer: the root's is read, every other rank's written.
  if (located != nullptr) {
    geometry.send_where = &located->receive;  // one buffer, read at the root
    geometry.receive_where = &located->receive;
  }
  return run(comm, buf, buf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    void* data = role.holds_root_data ? const_cast<void*>(s) : r;
    return inner == nullptr ? real_mpi().Bcast(data, count, type, root, comm)
                            : real_mpi().Ibcast(data, count, type, root, comm, inner);
  });
}

Status allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const Located* located) {
  Geometry geometry;
  Status status = gathered_geometry(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, &geometry);
  if (!status.is_ok()) {
    return status;
  }
  use_located(located, &geometry);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Allgather(s, sendcount, sendtype, r, recvcount, recvtype, comm)
                            : real_mpi().Iallgather(s, sendcount, sendtype, r, recvcount, recvtype, comm, inner);
  });
}

Status alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const Located* located) {
  Geometry geometry;
  Status status = gathered_geometry(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, &geometry);
  TypeLayout send_layout;
  int peers = 0;
  if (status.is_ok()) status = layout_of(sendtype, &send_layout);
  if (status.is_ok()) status = peer_count(comm, &peers);
  if (!status.is_ok()) {
    return status;
  }
  geometry.send = memory::span_of_uniform_blocks(send_layout, peers, sendcount);
  use_located(located, &geometry);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Alltoall(s, sendcount, sendtype, r, recvcount, recvtype, comm)
                            : real_mpi().Ialltoall(s, sendcount, sendtype, r, recvcount, recvtype, comm, inner);
  });
}

Status allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                  const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  TypeLayout send_layout;
  Geometry geometry;
  bool dense = true;
  Status status = layout_of(sendtype, &send_layout);
  if (status.is_ok()) status = peer_blocks_span(comm, recvcounts, displs, recvtype, &geometry.receive, &dense);
  if (!status.is_ok()) {
    return status;
  }
  geometry.send = memory::span_of(send_layout, sendcount);
  geometry.send_used = true;
  geometry.receive_used = true;
  geometry.preserve_receive = in_place(sendbuf) || !dense;
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Allgatherv(s, sendcount, sendtype, r, recvcounts, displs, recvtype, comm)
               : real_mpi().Iallgatherv(s, sendcount, sendtype, r, recvcounts, displs, recvtype, comm, inner);
  });
}

Status alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                 MPI_Request* request) {
  Geometry geometry;
  bool send_dense = true;
  bool receive_dense = true;
  Status status;
  if (!in_place(sendbuf)) status = peer_blocks_span(comm, sendcounts, sdispls, sendtype, &geometry.send, &send_dense);
  if (status.is_ok()) {
    status = peer_blocks_span(comm, recvcounts, rdispls, recvtype, &geometry.receive, &receive_dense);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send_used = true;
  geometry.receive_used = true;
  geometry.preserve_receive = in_place(sendbuf) || !receive_dense;
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Alltoallv(s, sendcounts, sdispls, sendtype, r, recvcounts, rdispls, recvtype, comm)
               : real_mpi().Ialltoallv(s, sendcounts, sdispls, sendtype, r, recvcounts, rdispls, recvtype, comm, inner);
  });
}

Status alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                 void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                 MPI_Comm comm, MPI_Request* request) {
  Geometry geometry;
  bool send_dense = true;
  bool receive_dense = true;
  int peers = 0;
  Status status = peer_count(comm, &peers);
  if (status.is_ok() && !in_place(sendbuf)) {
    status = typed_blocks_span(peers, sendcounts, sdispls, sendtypes, &geometry.send, &send_dense);
  }
  if (status.is_ok()) {
    status = typed_blocks_span(peers, recvcounts, rdispls, recvtypes, &geometry.receive, &receive_dense);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send_used = true;
  geometry.receive_used = true;
  geometry.preserve_receive = in_place(sendbuf) || !receive_dense;
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Alltoallw(s, sendcounts, sdispls, sendtypes, r, recvcounts, rdispls, recvtypes, comm)
               : real_mpi().Ialltoallw(s, sendcounts, sdispls, sendtypes, r, recvcounts, rdispls, recvtypes, comm,
                                       inner);
  });
}

Status gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  Geometry geometry;
  Rooted role;
  Status status = rooted(comm, root, &role);
  if (status.is_ok()) {
    status = gathered_geometry(comm, sendbuf, sendcount, sendtype, recvcount, recvtype, &geometry);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send_used = role.member;
  geometry.receive_used = role.holds_root_data;
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Gather(s, sendcount, sendtype, r, recvcount, recvtype, root, comm)
                            : real_mpi().Igather(s, sendcount, sendtype, r, recvcount, recvtype, root, comm, inner);
  });
}

Status gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
               const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  Geometry geometry;
  Rooted role;
  TypeLayout send_layout;
  bool dense = true;
  Status status = rooted(comm, root, &role);
  if (status.is_ok()) status = layout_of(sendtype, &send_layout);
  // The counts and displacements are significant at the root only.
  if (status.is_ok() && role.holds_root_data) {
    status = peer_blocks_span(comm, recvcounts, displs, recvtype, &geometry.receive, &dense);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send = memory::span_of(send_layout, sendcount);
  geometry.send_used = role.member;
  geometry.receive_used = role.holds_root_data;
  geometry.preserve_receive = in_place(sendbuf) || !dense;
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Gatherv(s, sendcount, sendtype, r, recvcounts, displs, recvtype, root, comm)
               : real_mpi().Igatherv(s, sendcount, sendtype, r, recvcounts, displs, recvtype, root, comm, inner);
  });
}

Status scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  Geometry geometry;
  Rooted role;
  TypeLayout send_layout;
  TypeLayout receive_layout;
  int peers = 0;
  Status status = rooted(comm, root, &role);
  if (status.is_ok()) status = layout_of(sendtype, &send_layout);
  if (status.is_ok()) status = layout_of(recvtype, &receive_layout);
  if (status.is_ok()) status = peer_count(comm, &peers);
  if (!status.is_ok()) {
    return status;
  }
  geometry.send = memory::span_of_uniform_blocks(send_layout, peers, sendcount);
  geometry.send_used = role.holds_root_data;
  geometry.receive = memory::span_of(receive_layout, recvcount);
  geometry.receive_used = role.member && !in_place(recvbuf);
  geometry.preserve_receive = !memory::fills_span(receive_layout, recvcount, geometry.receive);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Scatter(s, sendcount, sendtype, r, recvcount, recvtype, root, comm)
                            : real_mpi().Iscatter(s, sendcount, sendtype, r, recvcount, recvtype, root, comm, inner);
  });
}

Status scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  Geometry geometry;
  Rooted role;
  TypeLayout receive_layout;
  bool send_dense = true;
  Status status = rooted(comm, root, &role);
  if (status.is_ok()) status = layout_of(recvtype, &receive_layout);
  if (status.is_ok() && role.holds_root_data) {
    status = peer_blocks_span(comm, sendcounts, displs, sendtype, &geometry.send, &send_dense);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send_used = role.holds_root_data;
  geometry.receive = memory::span_of(receive_layout, recvcount);
  geometry.receive_used = role.member && !in_place(recvbuf);
  geometry.preserve_receive = !memory::fills_span(receive_layout, recvcount, geometry.receive);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Scatterv(s, sendcounts, displs, sendtype, r, recvcount, recvtype, root, comm)
               : real_mpi().Iscatterv(s, sendcounts, displs, sendtype, r, recvcount, recvtype, root, comm, inner);
  });
}

Status reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm, MPI_Request* request) {
  TypeLayout layout;
  int size = 0;
  int rank = 0;
  Status status = layout_of(type, &layout);
  if (status.is_ok()) status = from_mpi(real_mpi().Comm_size(comm, &size));
  if (status.is_ok()) status = from_mpi(real_mpi().Comm_rank(comm, &rank));
  if (!status.is_ok()) {
    return status;
  }
  const std::int64_t total = std::accumulate(recvcounts, recvcounts + size, std::int64_t{0});
  Geometry geometry;
  geometry.send = memory::span_of(layout, total);
  geometry.send_used = true;
  // In place, the receive buffer holds the whole input.
  const std::int64_t received = in_place(sendbuf) ? total : recvcounts[rank];
  geometry.receive = memory::span_of(layout, received);
  geometry.receive_used = true;
  geometry.preserve_receive = in_place(sendbuf) || !memory::fills_span(layout, received, geometry.receive);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Reduce_scatter(s, r, recvcounts, type, op, comm)
                            : real_mpi().Ireduce_scatter(s, r, recvcounts, type, op, comm, inner);
  });
}

Status reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, MPI_Request* request, const Located* located) {
  TypeLayout layout;
  int size = 0;
  Status status = layout_of(type, &layout);
  if (status.is_ok()) status = from_mpi(real_mpi().Comm_size(comm, &size));
  if (!status.is_ok()) {
    return status;
  }
  const std::int64_t total = static_cast<std::int64_t>(recvcount) * size;
  Geometry geometry;
  geometry.send = memory::span_of(layout, total);
  geometry.send_used = true;
  const std::int64_t received = in_place(sendbuf) ? total : recvcount;
  geometry.receive = memory::span_of(layout, received);
  geometry.receive_used = true;
  geometry.preserve_receive = in_place(sendbuf) || !memory::fills_span(layout, received, geometry.receive);
  use_located(located, &geometry);
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Reduce_scatter_block(s, r, recvcount, type, op, comm)
                            : real_mpi().Ireduce_scatter_block(s, r, recvcount, type, op, comm, inner);
  });
}

Status reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype type, MPI_Op op) {
  Geometry geometry;
  Status status = symmetric_geometry(inbuf, count, type, &geometry);
  if (!status.is_ok()) {
    return status;
  }
  geometry.preserve_receive = true;  // inoutbuf is an operand too
  return run(MPI_COMM_WORLD, inbuf, inoutbuf, geometry, nullptr,
             [&](const void* s, void* r, MPI_Request*) { return real_mpi().Reduce_local(s, r, count, type, op); });
}

Status neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Neighbours neighbours;
  TypeLayout send_layout;
  TypeLayout receive_layout;
  Status status = neighbours_of(comm, &neighbours);
  if (status.is_ok()) status = layout_of(sendtype, &send_layout);
  if (status.is_ok()) status = layout_of(recvtype, &receive_layout);
  if (!status.is_ok()) {
    return status;
  }
  Geometry geometry;
  geometry.send = memory::span_of(send_layout, sendcount);
  geometry.send_used = true;
  geometry.receive = memory::span_of_uniform_blocks(receive_layout, neighbours.sources, recvcount);
  geometry.receive_used = true;
  // A missing neighbour (MPI_PROC_NULL at a cartesian edge) leaves its block as it was.
  geometry.preserve_receive = true;
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Neighbor_allgather(s, sendcount, sendtype, r, recvcount, recvtype, comm)
               : real_mpi().Ineighbor_allgather(s, sendcount, sendtype, r, recvcount, recvtype, comm, inner);
  });
}

Status neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request) {
  Neighbours neighbours;
  TypeLayout send_layout;
  Geometry geometry;
  bool dense = true;
  Status status = neighbours_of(comm, &neighbours);
  if (status.is_ok()) status = layout_of(sendtype, &send_layout);
  if (status.is_ok()) {
    status = blocks_span(neighbours.sources, recvcounts, displs, recvtype, &geometry.receive, &dense);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send = memory::span_of(send_layout, sendcount);
  geometry.send_used = true;
  geometry.receive_used = true;
  geometry.preserve_receive = true;  // blocks of missing neighbours stay as they were
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Neighbor_allgatherv(s, sendcount, sendtype, r, recvcounts, displs, recvtype, comm)
               : real_mpi().Ineighbor_allgatherv(s, sendcount, sendtype, r, recvcounts, displs, recvtype, comm, inner);
  });
}

Status neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Neighbours neighbours;
  TypeLayout send_layout;
  TypeLayout receive_layout;
  Status status = neighbours_of(comm, &neighbours);
  if (status.is_ok()) status = layout_of(sendtype, &send_layout);
  if (status.is_ok()) status = layout_of(recvtype, &receive_layout);
  if (!status.is_ok()) {
    return status;
  }
  Geometry geometry;
  geometry.send = memory::span_of_uniform_blocks(send_layout, neighbours.destinations, sendcount);
  geometry.send_used = true;
  geometry.receive = memory::span_of_uniform_blocks(receive_layout, neighbours.sources, recvcount);
  geometry.receive_used = true;
  geometry.preserve_receive = true;  // blocks of missing neighbours stay as they were
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Neighbor_alltoall(s, sendcount, sendtype, r, recvcount, recvtype, comm)
               : real_mpi().Ineighbor_alltoall(s, sendcount, sendtype, r, recvcount, recvtype, comm, inner);
  });
}

Status neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Request* request) {
  Neighbours neighbours;
  Geometry geometry;
  bool send_dense = true;
  bool receive_dense = true;
  Status status = neighbours_of(comm, &neighbours);
  if (status.is_ok()) {
    status = blocks_span(neighbours.destinations, sendcounts, sdispls, sendtype, &geometry.send, &send_dense);
  }
  if (status.is_ok()) {
    status = blocks_span(neighbours.sources, recvcounts, rdispls, recvtype, &geometry.receive, &receive_dense);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send_used = true;
  geometry.receive_used = true;
  geometry.preserve_receive = true;  // blocks of missing neighbours stay as they were
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr
               ? real_mpi().Neighbor_alltoallv(s, sendcounts, sdispls, sendtype, r, recvcounts, rdispls, recvtype, comm)
               : real_mpi().Ineighbor_alltoallv(s, sendcounts, sdispls, sendtype, r, recvcounts, rdispls, recvtype,
                                                comm, inner);
  });
}

Status neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                          const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Request* request) {
  Neighbours neighbours;
  Geometry geometry;
  bool send_dense = true;
  bool receive_dense = true;
  Status status = neighbours_of(comm, &neighbours);
  if (status.is_ok()) {
    status = typed_blocks_span(neighbours.destinations, sendcounts, sdispls, sendtypes, &geometry.send, &send_dense);
  }
  if (status.is_ok()) {
    status = typed_blocks_span(neighbours.sources, recvcounts, rdispls, recvtypes, &geometry.receive, &receive_dense);
  }
  if (!status.is_ok()) {
    return status;
  }
  geometry.send_used = true;
  geometry.receive_used = true;
  geometry.preserve_receive = true;  // blocks of missing neighbours stay as they were
  return run(comm, sendbuf, recvbuf, geometry, request, [&](const void* s, void* r, MPI_Request* inner) {
    return inner == nullptr ? real_mpi().Neighbor_alltoallw(s, sendcounts, sdispls, sendtypes, r, recvcounts, rdispls,
                                                            recvtypes, comm)
                            : real_mpi().Ineighbor_alltoallw(s, sendcounts, sdispls, sendtypes, r, recvcounts, rdispls,
                                                             recvtypes, comm, inner);
  });
}

}  // namespace cumpi::coll
