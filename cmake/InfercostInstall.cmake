# `cmake --install build --prefix P` installs the engine as a C++ library (the
# headers of include/infercost, one static library, an exported CMake
# package), the CLI and, where it is built, the CUDA module beside the CLI. A
# program then builds against it with
#   find_package(infercost CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE infercost::infercost)
# (examples/classify: CI builds it against an installed tree). The wheel
# installs only its own component ("python", pyproject.toml), not these.
include(CMakePackageConfigHelpers)

# The one library a program links, infercost::infercost (libinfercost.a):
# the objects of the API (src/api) and of the engine's stages in one archive,
# the Debian libraries they use as its link interface, include/infercost as
# its headers. The stages stay separate libraries inside the build (the CLI,
# the Python module and the tests link them).
set(infercost_stages
    infercost_api infercost_run infercost_engine infercost_cost infercost_io infercost_parquet infercost_backend
    infercost_backend_common infercost_model infercost_model_relative infercost_corpus infercost_text infercost_core)
add_library(infercost_library STATIC)
foreach(stage IN LISTS infercost_stages)
  target_sources(infercost_library PRIVATE $<TARGET_OBJECTS:${stage}>)
endforeach()
set_target_properties(infercost_library PROPERTIES OUTPUT_NAME infercost EXPORT_NAME infercost LINKER_LANGUAGE CXX)
target_include_directories(infercost_library INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                       $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(infercost_library INTERFACE cxx_std_20)
# The codecs' and utf8proc's libraries as cmake/InfercostDeps.cmake lists them.
get_target_property(infercost_codec_libraries infercost_codecs INTERFACE_LINK_LIBRARIES)
get_target_property(infercost_utf8proc_libraries infercost_utf8proc INTERFACE_LINK_LIBRARIES)
target_link_libraries(infercost_library INTERFACE Threads::Threads OpenMP::OpenMP_CXX DNNL::dnnl fmt::fmt
                      simdjson::simdjson ${infercost_utf8proc_libraries} ${infercost_codec_libraries} ${CMAKE_DL_LIBS})
add_library(infercost::infercost ALIAS infercost_library)

install(TARGETS infercost_library EXPORT infercostTargets
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
