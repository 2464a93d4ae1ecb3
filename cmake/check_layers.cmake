# ddlsim: the layers, and the one rule between them (docs/architecture.md, "Layers").
#
#   app -> analysis -> engine -> scenario -> platforms -> models
#
# A folder may include its own headers and those of the folders to its right, never one to its
# left; only engine/ includes SimGrid. Run at configure time (CMakeLists.txt includes this file)
# and as the test layers/no_back_edges (cmake -DDDLSIM_SOURCE_DIR=... -P cmake/check_layers.cmake),
# so an include that points back fails the build's configuration and the suite.
set(DDLSIM_LAYERS app analysis engine scenario platforms models)

function(ddlsim_check_layers source_dir)
  set(violations "")
  list(LENGTH DDLSIM_LAYERS count)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    list(GET DDLSIM_LAYERS ${i} layer)
    # The layers this one may not include: every one before it.
    set(forbidden "")
    if(i GREATER 0)
      math(EXPR before "${i} - 1")
      foreach(j RANGE ${before})
        list(GET DDLSIM_LAYERS ${j} upper)
        list(APPEND forbidden ${upper})
      endforeach()
    endif()
    file(GLOB_RECURSE files "${source_dir}/${layer}/*.cpp" "${source_dir}/${layer}/*.hpp")
    foreach(file IN LISTS files)
      file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
      foreach(line IN LISTS includes)
        foreach(upper IN LISTS forbidden)
          if(line MATCHES "[\"<]${upper}/")
            file(RELATIVE_PATH rel "${source_dir}" "${file}")
            string(STRIP "${line}" line)
            string(APPEND violations "\n  ${rel}: ${line} (${layer}/ may not include ${upper}/)")
          endif()
        endforeach()
        if(NOT layer STREQUAL "engine" AND line MATCHES "<(simgrid|xbt)[/.]")
          file(RELATIVE_PATH rel "${source_dir}" "${file}")
          string(STRIP "${line}" line)
          string(APPEND violations "\n  ${rel}: ${line} (only engine/ includes SimGrid)")
        endif()
      endforeach()
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "ddlsim: includes against the layers (app -> analysis -> engine -> scenario -> platforms -> models; "
                        "cmake/check_layers.cmake):${violations}")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  ddlsim_check_layers("${DDLSIM_SOURCE_DIR}")
  message(STATUS "ddlsim: every include follows the layers")
endif()
