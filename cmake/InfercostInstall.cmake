# `cmake --install build --prefix P` installs the engine as a C++ library (the
# headers of include/infercost, the stages' static libraries, an exported CMake
# package), the CLI and, where it is built, the CUDA module beside the CLI. A
# program then builds against it with
#   find_package(infercost CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE infercost::infercost)
# (examples/classify: CI builds it against an installed tree). The wheel
# installs only its own component ("python", pyproject.toml), not these.
include(CMakePackageConfigHelpers)

# The one target a program links: the file runner and the Classifier with all
# they link (the stages below them).
add_library(infercost_library INTERFACE)
target_link_libraries(infercost_library INTERFACE infercost_pipeline)
set_target_properties(infercost_library PROPERTIES EXPORT_NAME infercost)
add_library(infercost::infercost ALIAS infercost_library)

set(infercost_exported
    infercost_library infercost_pipeline infercost_cost infercost_io infercost_parquet infercost_backend
    infercost_backend_common infercost_model infercost_model_relative infercost_corpus infercost_text infercost_core
    infercost_utf8proc infercost_codecs)
install(TARGETS ${infercost_exported} EXPORT infercostTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/infercost DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT dev)
set(infercost_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/infercost)
install(EXPORT infercostTargets NAMESPACE infercost:: DESTINATION ${infercost_cmake_dir} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/infercostConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/infercostConfig.cmake INSTALL_DESTINATION ${infercost_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/infercostConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/infercostConfig.cmake ${PROJECT_BINARY_DIR}/infercostConfigVersion.cmake
        DESTINATION ${infercost_cmake_dir} COMPONENT dev)

install(TARGETS infercost RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
if(TARGET infercost_cuda)
  # Found beside the program that links the engine (src/backend/cuda_loader.cc);
  # copied as built (its run path names the CUDA toolkit's libraries, which
  # install(TARGETS) would try to rewrite).
  install(FILES $<TARGET_FILE:infercost_cuda> DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
endif()
