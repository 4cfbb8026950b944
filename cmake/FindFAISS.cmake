# FindFAISS - the system libfaiss (Debian's libfaiss-dev) plus its C API
# library libfaiss_c, which Debian does not ship and scripts/build-faiss-c.sh
# builds from Debian's own source package into DOCQA_DEPS_PREFIX.
#
# Defines the imported target FAISS::faiss_c (C API + libfaiss + BLAS + OpenMP)
# and FAISS_VERSION (from the installed libfaiss-dev package's header).

find_path(FAISS_INCLUDE_DIR faiss/c_api/faiss_c.h)
find_library(FAISS_LIBRARY NAMES faiss)
find_library(FAISS_C_LIBRARY NAMES faiss_c
  HINTS ${DOCQA_DEPS_PREFIX}/lib NO_DEFAULT_PATH)
find_package(OpenMP COMPONENTS CXX)
find_package(BLAS)

if(FAISS_INCLUDE_DIR AND EXISTS "${FAISS_INCLUDE_DIR}/faiss/Index.h")
  file(STRINGS "${FAISS_INCLUDE_DIR}/faiss/Index.h" _fv REGEX "#define FAISS_VERSION_(MAJOR|MINOR|PATCH) ")
  foreach(_l ${_fv})
    if(_l MATCHES "FAISS_VERSION_(MAJOR|MINOR|PATCH) +([0-9]+)")
      set(_FAISS_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
    endif()
  endforeach()
  set(FAISS_VERSION "${_FAISS_MAJOR}.${_FAISS_MINOR}.${_FAISS_PATCH}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FAISS
  REQUIRED_VARS FAISS_C_LIBRARY FAISS_LIBRARY FAISS_INCLUDE_DIR
  VERSION_VAR FAISS_VERSION
  FAIL_MESSAGE "FAISS C API not found: run scripts/build-faiss-c.sh (needs libfaiss-dev)")

if(FAISS_FOUND AND NOT TARGET FAISS::faiss_c)
  add_library(FAISS::faiss_c UNKNOWN IMPORTED)
  set_target_properties(FAISS::faiss_c PROPERTIES
    IMPORTED_LOCATION "${FAISS_C_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${FAISS_INCLUDE_DIR}")
  set(_faiss_deps "${FAISS_LIBRARY}")
  if(BLAS_FOUND)
    list(APPEND _faiss_deps ${BLAS_LIBRARIES})
  endif()
  if(OpenMP_CXX_FOUND)
    list(APPEND _faiss_deps OpenMP::OpenMP_CXX)
  endif()
  # libfaiss_c is C++: pull in the C++ runtime for C executables.
  list(APPEND _faiss_deps stdc++ m)
  set_property(TARGET FAISS::faiss_c PROPERTY INTERFACE_LINK_LIBRARIES "${_faiss_deps}")
endif()
mark_as_advanced(FAISS_INCLUDE_DIR FAISS_LIBRARY FAISS_C_LIBRARY)
