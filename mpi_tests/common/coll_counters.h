// cumpi's collective counters (cumpi_get_coll_info), looked up at run time:
// the tests also run without cumpi, where every count stays 0.
#pragma once

#include <dlfcn.h>

#include <cstddef>

namespace cumpi_test {

struct CollInfo {
  std::size_t on_gpu, staged, boards_made, boards_released, nccl_made, nccl_destroyed, hierarchical;
};

inline bool under_cumpi() { return dlsym(RTLD_DEFAULT, "cumpi_get_coll_info") != nullptr; }

inline CollInfo coll_info() {
  using Function = int (*)(CollInfo*);
  static auto* function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, "cumpi_get_coll_info"));
  CollInfo info{};
  if (function != nullptr) function(&info);
  return info;
}

}  // namespace cumpi_test
