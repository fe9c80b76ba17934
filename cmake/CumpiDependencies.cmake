# MPI: libcumpi uses only mpi.h; it reaches the MPI library at run time through
# dlsym(RTLD_NEXT), so it must not link libmpi (it is also preloaded into mpirun).
find_package(MPI REQUIRED COMPONENTS C)

# CUDA: the driver API header only. libcuda.so.1 is dlopen()ed at run time
# (DESIGN §2.4); the toolkit's runtime is used by the tests alone.
find_package(CUDAToolkit REQUIRED)

find_package(Threads REQUIRED)

# Optional libraries are detected here; the code that uses them is loaded with
# dlopen, so the library also loads on a node without them.
function(cumpi_detect_optional name header)
  string(TOUPPER "${name}" upper)
  set(option_value "${CUMPI_WITH_${upper}}")
  if(option_value STREQUAL "OFF")
    set(CUMPI_HAVE_${upper} OFF PARENT_SCOPE)
    return()
  endif()
  find_path(CUMPI_${upper}_INCLUDE_DIR ${header}
    HINTS ${ARGN} ${CUDAToolkit_INCLUDE_DIRS} ENV CPATH
    PATHS /opt/ucxdev/usr/include /usr/include)
  if(CUMPI_${upper}_INCLUDE_DIR)
    set(CUMPI_HAVE_${upper} ON PARENT_SCOPE)
    message(STATUS "cumpi: ${name} headers found in ${CUMPI_${upper}_INCLUDE_DIR}")
  elseif(option_value STREQUAL "ON")
    message(FATAL_ERROR "CUMPI_WITH_${upper}=ON but ${header} was not found")
  else()
    set(CUMPI_HAVE_${upper} OFF PARENT_SCOPE)
    message(STATUS "cumpi: ${name} not found; building without it")
  endif()
endfunction()

# UCX: where UCX_ROOT (a CMake or environment variable) points, else where
# pkg-config's ucx.pc says, else the usual places.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(CUMPI_UCX_PC QUIET ucx)
endif()
set(cumpi_ucx_hints)
foreach(root IN ITEMS "${UCX_ROOT}" "$ENV{UCX_ROOT}")
  if(root)
    list(APPEND cumpi_ucx_hints "${root}/include")
  endif()
endforeach()
cumpi_detect_optional(ucx ucp/api/ucp.h ${cumpi_ucx_hints} ${CUMPI_UCX_PC_INCLUDE_DIRS})
cumpi_detect_optional(nccl nccl.h)

if(CUMPI_BUILD_TESTS)
  find_package(GTest REQUIRED)
  # The launcher of the MPI built against (MPICH: -DCUMPI_MPIEXEC=mpiexec.mpich).
  find_program(CUMPI_MPIEXEC NAMES mpirun mpiexec REQUIRED)
endif()
