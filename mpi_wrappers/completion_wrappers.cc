// Wait, test, start, free and cancel: straight to MPI unless device requests
// exist, then through the engine (which keeps MPI's own semantics).
#include "mpi_wrappers/intercept.h"
#include "protocol/completion.h"
#include "protocol/operation_table.h"
#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::wrappers {

using protocol::has_device_requests;

int intercept_Wait(MPI_Request* request, MPI_Status* status) {
  if (!has_device_requests()) {
    return real_mpi().Wait(request, status);
  }
  return report(protocol::wait(request, status), MPI_COMM_WORLD);
}

int intercept_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!has_device_requests()) {
    return real_mpi().Waitall(count, requests, statuses);
  }
  return report(protocol::waitall(count, requests, statuses), MPI_COMM_WORLD);
}

int intercept_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!has_device_requests()) {
    return real_mpi().Waitany(count, requests, index, status);
  }
  return report(protocol::waitany(count, requests, index, status), MPI_COMM_WORLD);
}

int intercept_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!has_device_requests()) {
    return real_mpi().Waitsome(incount, requests, outcount, indices, statuses);
  }
  return report(protocol::waitsome(incount, requests, outcount, indices, statuses), MPI_COMM_WORLD);
}

int intercept_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!has_device_requests()) {
    return real_mpi().Test(request, flag, status);
  }
  return report(protocol::test(request, flag, status), MPI_COMM_WORLD);
}

int intercept_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!has_device_requests()) {
    return real_mpi().Testall(count, requests, flag, statuses);
  }
  return report(protocol::testall(count, requests, flag, statuses), MPI_COMM_WORLD);
}

int intercept_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!has_device_requests()) {
    return real_mpi().Testany(count, requests, index, flag, status);
  }
  return report(protocol::testany(count, requests, index, flag, status), MPI_COMM_WORLD);
}

int intercept_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!has_device_requests()) {
    return real_mpi().Testsome(incount, requests, outcount, indices, statuses);
  }
  return report(protocol::testsome(incount, requests, outcount, indices, statuses), MPI_COMM_WORLD);
}

int intercept_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (!has_device_requests()) {
    return real_mpi().Request_get_status(request, flag, status);
  }
  return report(protocol::request_get_status(request, flag, status), MPI_COMM_WORLD);
}

int intercept_Request_free(MPI_Request* request) {
  if (!has_device_requests()) {
    return real_mpi().Request_free(request);
  }
  return report(protocol::request_free(request), MPI_COMM_WORLD);
}

// A device operation's cancel reaches its inner request through the
// generalized request's cancel function; persistent ones are real requests.
int intercept_Cancel(MPI_Request* request) { return real_mpi().Cancel(request); }

int intercept_Start(MPI_Request* request) {
  if (!has_device_requests()) {
    return real_mpi().Start(request);
  }
  return report(protocol::start(request), MPI_COMM_WORLD);
}

int intercept_Startall(int count, MPI_Request requests[]) {
  if (!has_device_requests()) {
    return real_mpi().Startall(count, requests);
  }
  return report(protocol::startall(count, requests), MPI_COMM_WORLD);
}

}  // namespace cumpi::wrappers
