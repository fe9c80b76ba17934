// Prints the README's configuration table from the code's table:
//   build/tests/cumpi_config_doc
#include <cstdio>

#include "runtime/config.h"

int main() {
  std::fputs(cumpi::config_table_markdown().c_str(), stdout);
  return 0;
}
