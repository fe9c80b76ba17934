# cmake --install: the production library, public headers, the mpi-ext.h shim
# and a package config for find_package(cumpi).
include(CMakePackageConfigHelpers)

install(TARGETS cumpi EXPORT cumpiTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/cumpi/cumpi.h include/cumpi/visibility.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cumpi)
install(FILES include/mpi-ext.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT cumpiTargets NAMESPACE cumpi:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cumpi)

configure_package_config_file(cmake/cumpiConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/cumpiConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cumpi)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cumpiConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cumpiConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/cumpiConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/cumpi)
