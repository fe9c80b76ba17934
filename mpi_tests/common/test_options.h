// Command-line options shared by the launched tests.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/test_memory.h"

namespace cumpi_test {

struct Options {
  std::vector<Memory> memories{Memory::host, Memory::device};  // --memory host|device|both
  std::vector<std::size_t> sizes{0, 1, 8192, 1 << 20, 64u << 20};   // --sizes a,b,c

  bool uses_device() const {
    for (Memory memory : memories) {
      if (memory == Memory::device) return true;
    }
    return false;
  }
};

Options parse_options(int argc, char** argv);

}  // namespace cumpi_test
