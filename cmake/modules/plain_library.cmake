# find_plain_library(NAME LIBRARY HEADER): for a library that ships no CMake package, sets
# NAME_LIBRARY, NAME_INCLUDE_DIR, NAME_FOUND and the imported target NAME::NAME. The find modules
# beside it (GMP, MPFR, Z3) are one call each; installed with them for find_package(flashproof).
include(FindPackageHandleStandardArgs)
macro(find_plain_library name library header)
  find_library(${name}_LIBRARY ${library})
  find_path(${name}_INCLUDE_DIR ${header})
  find_package_handle_standard_args(${name} REQUIRED_VARS ${name}_LIBRARY ${name}_INCLUDE_DIR)
  if(${name}_FOUND AND NOT TARGET ${name}::${name})
    add_library(${name}::${name} UNKNOWN IMPORTED)
    set_target_properties(${name}::${name} PROPERTIES IMPORTED_LOCATION "${${name}_LIBRARY}"
                                                      INTERFACE_INCLUDE_DIRECTORIES "${${name}_INCLUDE_DIR}")
  endif()
endmacro()
