# Link maps for the cross-build symbol check (scripts/cross-build-symbols, tests/kernels/link): every
# program and shared module of the build writes the linker's map beside itself (<file>.map: exactly
# which objects and archive members went in), and OUTPUT lists them, one line per artifact:
# "file<TAB>map<TAB>directory it was linked in". Targets with the property
# FLASHPROOF_OWN_LINK_MAP set write their own map and are left out (the check's twin).

function(_flashproof_linked_targets dir out_var)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  set(found "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    get_target_property(imported ${t} IMPORTED)
    get_target_property(own ${t} FLASHPROOF_OWN_LINK_MAP)
    if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$" AND NOT imported AND NOT own)
      list(APPEND found ${t})
    endif()
  endforeach()
  foreach(sub IN LISTS subdirs)
    _flashproof_linked_targets(${sub} sub_found)
    list(APPEND found ${sub_found})
  endforeach()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

function(flashproof_link_maps output)
  _flashproof_linked_targets(${PROJECT_SOURCE_DIR} targets)
  set(lines "")
  foreach(t IN LISTS targets)
    target_link_options(${t} PRIVATE "LINKER:-Map=$<TARGET_FILE:${t}>.map")
    # Makefiles link in the target's build folder, Ninja in the top one: the map's paths are relative to it.
    get_target_property(link_dir ${t} BINARY_DIR)
    if(CMAKE_GENERATOR MATCHES "Ninja")
      set(link_dir ${CMAKE_BINARY_DIR})
    endif()
    string(APPEND lines "$<TARGET_FILE:${t}>\t$<TARGET_FILE:${t}>.map\t${link_dir}\n")
  endforeach()
  file(GENERATE OUTPUT ${output} CONTENT "${lines}")
endfunction()
