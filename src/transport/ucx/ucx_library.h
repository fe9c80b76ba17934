// UCX as the ucx transport uses it: libucp.so.0 opened with dlopen on first
// use (never linked: the library loads on nodes without UCX), built against
// the ucp.h CMake found (CUMPI_WITH_UCX). Every failure is a Status naming
// the call with UCX's own status string.
#pragma once

#include <ucp/api/ucp.h>

#include <string>

#include "runtime/status.h"

namespace cumpi::transport::ucx {

struct Functions {
#define CUMPI_UCX_FUNCTION(name) decltype(&::name) name = nullptr;
#include "transport/ucx/ucx_functions.def"
#undef CUMPI_UCX_FUNCTION
};

// UCX's functions, loading libucp.so.0 on the first call; null where it
// cannot be loaded or lacks one of them (*why_not says which).
const Functions* library(std::string* why_not);
// The loaded library's functions (after library() gave them).
const Functions& ucp();

// `call` failed with `status`: an error naming both.
Status failure(const char* call, ucs_status_t status);

}  // namespace cumpi::transport::ucx
