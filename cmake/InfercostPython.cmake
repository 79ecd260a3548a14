# The Python package's native module, infercost._native (src/python), made
# with nanobind from PyPI. INFERCOST_PYTHON_MODULE: AUTO (default) builds it
# when the Python below has nanobind, and says why not otherwise; ON requires
# it; OFF never. The Python is INFERCOST_PYTHON (build/pyenv, which `make
# pyenv` makes with nanobind in it), or scikit-build-core's when it builds a
# wheel (pyproject.toml).
set(INFERCOST_PYTHON_MODULE AUTO CACHE STRING
    "Build the Python module infercost._native (nanobind): ON, OFF, or AUTO (when the Python has nanobind)")
set_property(CACHE INFERCOST_PYTHON_MODULE PROPERTY STRINGS AUTO ON OFF)

set(INFERCOST_WITH_PYTHON OFF)
set(INFERCOST_PYTHON_MISSING "INFERCOST_PYTHON_MODULE is OFF")
if(NOT INFERCOST_PYTHON_MODULE STREQUAL "OFF")
  if(SKBUILD)
    set(module_python "${Python_EXECUTABLE}")
  else()
    set(module_python "${INFERCOST_PYTHON}")
  endif()
  set(INFERCOST_PYTHON_MISSING "")
  if(NOT EXISTS "${module_python}")
    set(INFERCOST_PYTHON_MISSING "there is no Python at ${module_python} (make pyenv makes it)")
  else()
    execute_process(COMMAND "${module_python}" -m nanobind --cmake_dir OUTPUT_VARIABLE nanobind_dir
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE nanobind_rc ERROR_QUIET)
    if(NOT nanobind_rc EQUAL 0)
      set(INFERCOST_PYTHON_MISSING "${module_python} has no nanobind (make pyenv installs it)")
    endif()
  endif()
  if(INFERCOST_PYTHON_MISSING STREQUAL "")
    set(Python_EXECUTABLE "${module_python}")
    find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)
    find_package(nanobind CONFIG REQUIRED PATHS "${nanobind_dir}" NO_DEFAULT_PATH)
    set(INFERCOST_WITH_PYTHON ON)
    message(STATUS "infercost: building the Python module infercost._native for ${module_python} "
                   "(Python ${Python_VERSION}, nanobind ${nanobind_VERSION})")
  elseif(INFERCOST_PYTHON_MODULE STREQUAL "ON")
    message(FATAL_ERROR "INFERCOST_PYTHON_MODULE=ON, but ${INFERCOST_PYTHON_MISSING}")
  else()
    message(STATUS "infercost: not building the Python module: ${INFERCOST_PYTHON_MISSING}")
  endif()
endif()
