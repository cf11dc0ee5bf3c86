# Installable CMake package: find_package(probkit CONFIG REQUIRED) and
# target_link_libraries(app probkit::probkit).
include(CMakePackageConfigHelpers)

install(TARGETS probkit EXPORT probkitTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/probkit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT probkitTargets NAMESPACE probkit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probkit)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/probkitConfig.cmake.in
  ${PROJECT_BINARY_DIR}/probkitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probkit)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/probkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/probkitConfig.cmake ${PROJECT_BINARY_DIR}/probkitConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/probkit)
