# Installable CMake package: find_package(probkit CONFIG REQUIRED) and
# target_link_libraries(app probkit::probkit).
include(CMakePackageConfigHelpers)

install(TARGETS probkit EXPORT probkitTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public headers, and the detail headers they include; the kernels' table
# and the hashing entry points are the library's own (src/, cpu/, cuda/).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/probkit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN "detail/kernels.hpp" EXCLUDE
  PATTERN "detail/hash_keys.hpp" EXCLUDE)
install(EXPORT probkitTargets NAMESPACE probkit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probkit)

# What the config must find for a consumer: a static library brings its
# Highway link into the consumer's, a shared one holds it.
get_target_property(probkit_library_type probkit TYPE)
if(probkit_library_type STREQUAL "STATIC_LIBRARY")
  set(PROBKIT_CONFIG_NEEDS_HWY ON)
else()
  set(PROBKIT_CONFIG_NEEDS_HWY OFF)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/probkitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/probkitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probkit)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/probkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/probkitConfig.cmake ${PROJECT_BINARY_DIR}/probkitConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probkit)
