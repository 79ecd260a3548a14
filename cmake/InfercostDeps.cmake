# Dependencies, all from Debian 12 packages (scripts/install-deps.sh).
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED)               # the CPU backend's threads
find_package(dnnl REQUIRED CONFIG)          # libdnnl-dev (oneDNN 2.x)
find_package(fmt REQUIRED CONFIG)           # libfmt-dev
find_package(nlohmann_json REQUIRED CONFIG) # nlohmann-json3-dev
find_package(simdjson REQUIRED CONFIG)      # libsimdjson-dev
find_package(CLI11 REQUIRED CONFIG)         # libcli11-dev

# utf8proc ships a pkg-config file but no CMake config.
find_path(UTF8PROC_INCLUDE_DIR utf8proc.h REQUIRED)
find_library(UTF8PROC_LIBRARY utf8proc REQUIRED)
add_library(infercost_utf8proc INTERFACE)
target_include_directories(infercost_utf8proc INTERFACE ${UTF8PROC_INCLUDE_DIR})
target_link_libraries(infercost_utf8proc INTERFACE ${UTF8PROC_LIBRARY})

# Parquet page codecs: libsnappy-dev, zlib1g-dev, libzstd-dev, liblz4-dev,
# libbrotli-dev. Plain find_library: not all of them ship CMake configs.
find_path(SNAPPY_INCLUDE_DIR snappy.h REQUIRED)
find_library(SNAPPY_LIBRARY snappy REQUIRED)
find_package(ZLIB REQUIRED)
find_path(ZSTD_INCLUDE_DIR zstd.h REQUIRED)
find_library(ZSTD_LIBRARY zstd REQUIRED)
find_path(LZ4_INCLUDE_DIR lz4.h REQUIRED)
find_library(LZ4_LIBRARY lz4 REQUIRED)
find_path(BROTLI_INCLUDE_DIR brotli/decode.h REQUIRED)
find_library(BROTLI_DEC_LIBRARY brotlidec REQUIRED)
find_library(BROTLI_ENC_LIBRARY brotlienc REQUIRED)
add_library(infercost_codecs INTERFACE)
target_include_directories(infercost_codecs INTERFACE ${SNAPPY_INCLUDE_DIR} ${ZSTD_INCLUDE_DIR} ${LZ4_INCLUDE_DIR}
                                                      ${BROTLI_INCLUDE_DIR})
target_link_libraries(infercost_codecs INTERFACE ${SNAPPY_LIBRARY} ZLIB::ZLIB ${ZSTD_LIBRARY} ${LZ4_LIBRARY}
                                                 ${BROTLI_DEC_LIBRARY} ${BROTLI_ENC_LIBRARY})

# Python with pyarrow, pandas and duckdb for the round-trip tests (`make pyenv`
# creates it); tests that need it skip, saying so, when it is absent.
set(INFERCOST_PYTHON "${PROJECT_SOURCE_DIR}/build/pyenv/bin/python3" CACHE FILEPATH
    "Python interpreter with pyarrow, pandas and duckdb for round-trip tests")
# Where the goldens generated from ../shared by a tools/ oracle are made, once, and read
# (tests/CMakeLists.txt, infercost_generated_golden): they depend only on the oracle and its input,
# so another build of the same tree may share a folder (`make asan-test` reads those of `make test`'s
# build/ instead of making the 8 MB of ModernBERT and DeBERTa ids again: 17 s of CPU, more on CI).
set(INFERCOST_GOLDENS_DIR "${PROJECT_BINARY_DIR}/goldens" CACHE PATH
    "Folder of the goldens generated from ../shared (made there once, when absent or stale)")

if(INFERCOST_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
endif()
if(INFERCOST_BUILD_BENCH)
  find_package(benchmark CONFIG)
endif()

# What every test suite compiles with (infercost_add_test and the suites'
# precompiled header, tests/CMakeLists.txt). OpenMP for all: the CPU backend's
# suites need it, and a precompiled header is only used with the same flags.
function(infercost_test_settings name)
  target_link_libraries(${name} PRIVATE GTest::gtest_main nlohmann_json::nlohmann_json fmt::fmt OpenMP::OpenMP_CXX)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${name} PRIVATE
    INFERCOST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    INFERCOST_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data_files"
    INFERCOST_SHARED_DATA_DIR="${PROJECT_SOURCE_DIR}/../shared/data"
    INFERCOST_BINARY_DIR="${PROJECT_BINARY_DIR}"
    INFERCOST_GOLDENS_DIR="${INFERCOST_GOLDENS_DIR}"
    INFERCOST_PYTHON="${INFERCOST_PYTHON}")
endfunction()

# Test code is compiled at -O0: optimizing it costs compile time (much of a
# fresh build) and gains the tests nothing, since the libraries they test
# keep their build's level. A suite whose own sources do heavy arithmetic (the
# CUDA emulator's kernels) passes OPTIMIZED to keep the build's level.
function(infercost_test_optimization name optimized)
  if(NOT optimized)
    target_compile_options(${name} PRIVATE -O0)
  endif()
endfunction()

# infercost_add_test(NAME [OPTIMIZED] SOURCES... LIBS ... LABELS ...)
function(infercost_add_test name)
  cmake_parse_arguments(ARG "OPTIMIZED" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  infercost_test_settings(${name})
  infercost_test_optimization(${name} "${ARG_OPTIMIZED}")
  # GoogleTest, nlohmann/json and fmt parsed once for every suite (the
  # precompiled header is made at -O0: GCC 12 crashed reusing one at -O3).
  if(NOT ARG_OPTIMIZED)
    target_precompile_headers(${name} REUSE_FROM infercost_test_pch)
  endif()
  # gtest_discover_tests flattens list-valued PROPERTIES (only the first label
  # would survive), so the labels are set by a script ctest includes after the
  # discovered tests.
  # A hang fails the test after 20 minutes instead of blocking the run (the
  # longest, the resume harness, takes about 7 on a loaded 2-core machine).
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_LIST ${name}_TESTS PROPERTIES TIMEOUT 1200)
  set(label_script ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${label_script}
       "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${ARG_LABELS}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${label_script})
endfunction()
