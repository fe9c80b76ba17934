#include "common/test_options.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace cumpi_test {

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--memory") {
      if (value == "host") options.memories = {Memory::host};
      if (value == "device") options.memories = {Memory::device};
    } else if (flag == "--sizes") {
      options.sizes.clear();
      std::stringstream list(value);
      std::string item;
      while (std::getline(list, item, ',')) {
        options.sizes.push_back(std::strtoull(item.c_str(), nullptr, 10));
      }
    }
  }
  return options;
}

}  // namespace cumpi_test
