// Wait, test, start, free and cancel: straight to MPI unless device requests
// exist, then through the engine (which keeps MPI's own semantics).
#include "mpi_wrappers/intercept.h"
#include "protocol/completion.h"
#include "protocol/operation_table.h"

namespace cumpi::wrappers {

using protocol::completion_needs_engine;
using protocol::start_needs_engine;

int intercept_Wait(MPI_Request* request, MPI_Status* status) {
  if (!completion_needs_engine()) {
    return real().Wait(request, status);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::wait(request, status); });
}

int intercept_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!completion_needs_engine()) {
    return real().Waitall(count, requests, statuses);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::waitall(count, requests, statuses); });
}

int intercept_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!completion_needs_engine()) {
    return real().Waitany(count, requests, index, status);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::waitany(count, requests, index, status); });
}

int intercept_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!completion_needs_engine()) {
    return real().Waitsome(incount, requests, outcount, indices, statuses);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::waitsome(incount, requests, outcount, indices, statuses); });
}

int intercept_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!completion_needs_engine()) {
    return real().Test(request, flag, status);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::test(request, flag, status); });
}

int intercept_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!completion_needs_engine()) {
    return real().Testall(count, requests, flag, statuses);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::testall(count, requests, flag, statuses); });
}

int intercept_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!completion_needs_engine()) {
    return real().Testany(count, requests, index, flag, status);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::testany(count, requests, index, flag, status); });
}

int intercept_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!completion_needs_engine()) {
    return real().Testsome(incount, requests, outcount, indices, statuses);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::testsome(incount, requests, outcount, indices, statuses); });
}

int intercept_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (!completion_needs_engine()) {
    return real().Request_get_status(request, flag, status);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::request_get_status(request, flag, status); });
}

int intercept_Request_free(MPI_Request* request) {
  if (!completion_needs_engine()) {
    return real().Request_free(request);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::request_free(request); });
}

// A device operation's cancel reaches its inner request through the
// generalized request's cancel function; persistent ones are real requests.
int intercept_Cancel(MPI_Request* request) { return real().Cancel(request); }

int intercept_Start(MPI_Request* request) {
  if (!start_needs_engine()) {
    return real().Start(request);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::start(request); });
}

int intercept_Startall(int count, MPI_Request requests[]) {
  if (!start_needs_engine()) {
    return real().Startall(count, requests);
  }
  return in_engine(MPI_COMM_WORLD, [=] { return protocol::startall(count, requests); });
}

}  // namespace cumpi::wrappers
