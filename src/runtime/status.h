// The one status type of cumpi's engine. Errors are converted to MPI error
// codes only at the wrapper edge (runtime/errors.h); no exception crosses
// extern "C".
#pragma once

#include <memory>
#include <string>
#include <utility>

namespace cumpi {

enum class StatusCode {
  ok,
  mpi_error,     // an MPI call failed; the MPI library already ran the error handler
  mpi_error_returned,  // an MPI call failed on a communicator of cumpi's own, whose handler returns:
                       // the user's communicator's has yet to run
  bad_buffer,    // a buffer argument cannot be used (outside its allocation, ...)
  bad_communicator,  // a communicator argument that is not one (MPI_COMM_NULL, ...)
  bad_count,     // a count cumpi cannot carry (MPI_ERR_COUNT)
  cuda_error,    // a CUDA driver call failed
  nccl_error,    // an NCCL call failed
  ucx_error,     // a UCX call failed
  out_of_memory, // host or pinned memory could not be had
  truncated,     // a message larger than the receive buffer (MPI_ERR_TRUNCATE)
  unreachable,   // a peer's memory cannot be mapped from here (its GPU is not visible or not a peer)
  internal,      // a bug in cumpi or an unsupported situation
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status mpi(int mpi_code) { return Status(StatusCode::mpi_error, mpi_code, {}); }
  // The MPI library's error `mpi_code` from a call on a communicator of
  // cumpi's own, to be reported through the user's communicator.
  static Status mpi_returned(int mpi_code, std::string message) {
    return Status(StatusCode::mpi_error_returned, mpi_code, std::move(message));
  }
  static Status error(StatusCode code, std::string message) {
    return Status(code, 0, std::move(message));
  }

  bool is_ok() const { return code_ == StatusCode::ok; }
  StatusCode code() const { return code_; }
  int mpi_code() const { return mpi_code_; }
  const std::string& message() const { return message_ != nullptr ? *message_ : no_message(); }

 private:
  Status(StatusCode code, int mpi_code, std::string message)
      : code_(code),
        mpi_code_(mpi_code),
        message_(message.empty() ? nullptr : std::make_shared<const std::string>(std::move(message))) {}

  static const std::string& no_message() {
    static const std::string* const empty = new std::string();  // lives until exit
    return *empty;
  }

  StatusCode code_ = StatusCode::ok;
  int mpi_code_ = 0;
  // Out of line and shared: a status passes through every layer of every
  // engine call, and an inline string made each copy of an ok one a call
  // to memcpy. Only errors carry a message.
  std::shared_ptr<const std::string> message_;
};

}  // namespace cumpi
