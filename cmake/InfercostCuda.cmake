# The CUDA backend (src/backend/cuda/) is a module, libinfercost_cuda.so, that
# the CLI opens at run time; the executable itself never links CUDA. It needs
# nvcc and the CUDA 13 toolkit (cuBLASLt), found in /usr/local/cuda when not on
# the PATH. INFERCOST_CUDA=AUTO builds it where nvcc is found; ON requires it
# (CI); OFF skips it (sanitizer and fuzz builds).
#
# Architectures: sm_75 (T4), sm_80 (A100), sm_86 (A10, RTX 30), sm_89 (L4,
# RTX 40), sm_90 (H100/H200) as machine code, plus sm_90 PTX that newer GPUs
# compile at load. CUDA 13 dropped Kepler (K80) and Volta (V100, sm_70).
set(INFERCOST_WITH_CUDA OFF)
if(INFERCOST_FUZZ OR INFERCOST_SANITIZE)
  if(INFERCOST_CUDA STREQUAL "ON")
    message(FATAL_ERROR "INFERCOST_CUDA=ON cannot be combined with the sanitizer or fuzz builds")
  endif()
elseif(NOT INFERCOST_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;90-virtual")
    endif()
    set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    if(CUDAToolkit_VERSION VERSION_LESS 12.0)
      message(FATAL_ERROR "the CUDA backend needs CUDA 12 or newer (found ${CUDAToolkit_VERSION})")
    endif()
    set(INFERCOST_WITH_CUDA ON)
    message(STATUS "infercost: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures "
                   "${CMAKE_CUDA_ARCHITECTURES})")
  elseif(INFERCOST_CUDA STREQUAL "ON")
    message(FATAL_ERROR "INFERCOST_CUDA=ON but no CUDA compiler (nvcc) was found: install the CUDA toolkit "
                        "or set CMAKE_CUDA_COMPILER")
  else()
    message(STATUS "infercost: no nvcc found: building without the CUDA backend module")
  endif()
endif()
