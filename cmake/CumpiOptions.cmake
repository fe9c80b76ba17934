# Build options, all prefixed CUMPI_. "AUTO" options are detected and fail
# when set to ON but impossible.
set(CUMPI_WITH_UCX AUTO CACHE STRING "Build the UCX transport: AUTO, ON or OFF")
set(CUMPI_WITH_NCCL AUTO CACHE STRING "Use NCCL for device collectives: AUTO, ON or OFF")
option(CUMPI_BUILD_TESTS "Build the unit tests, the launched tests and the benchmark" ON)
option(CUMPI_WERROR "Treat compiler warnings as errors (CI sets this)" OFF)
set(CUMPI_SANITIZE "" CACHE STRING "Build with a sanitizer: address, undefined, address,undefined or thread")
set_property(CACHE CUMPI_WITH_UCX PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE CUMPI_WITH_NCCL PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE CUMPI_SANITIZE PROPERTY STRINGS "" address undefined "address,undefined" thread)

add_library(cumpi_warnings INTERFACE)
target_compile_options(cumpi_warnings INTERFACE -Wall -Wextra -Wshadow -Wnon-virtual-dtor
  -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual -Wnull-dereference
  -Wmissing-declarations)
if(CUMPI_WERROR)
  target_compile_options(cumpi_warnings INTERFACE -Werror)
endif()

if(CUMPI_SANITIZE)
  if(NOT CUMPI_SANITIZE MATCHES "^(address|undefined|address,undefined|thread)$")
    message(FATAL_ERROR
      "CUMPI_SANITIZE must be address, undefined, address,undefined or thread, not '${CUMPI_SANITIZE}'")
  endif()
  add_compile_options(-fsanitize=${CUMPI_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${CUMPI_SANITIZE})
endif()
