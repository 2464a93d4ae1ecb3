# ddlsim: the layers, and the one rule between them (docs/architecture.md, "Layers").
#
#   app -> analysis -> engine -> scenario -> platforms -> models
#
# A folder may include its own headers and those of the folders to its right, never one to its
# left; only engine/ includes SimGrid. Run at configure time (CMakeLists.txt includes this file)
# and as the test layers/no_back_edges (cmake -DDDLSIM_SOURCE_DIR=... -P cmake/check_layers.cmake),
# so an include that points back fails the build's configuration and the suite.
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_minimum_required(VERSION 3.22)  # run as a script (the test): the policies of the project
endif()
set(DDLSIM_LAYERS app analysis engine scenario platforms models)
# The analytic fiber lane runs without SimGrid: these engine files may not include a SimGrid header,
# directly or through any header of ours they include.
set(DDLSIM_SIMGRID_FREE engine/fiber_lane.cpp engine/fiber_lane.hpp engine/fiber_stacks.hpp engine/lazy_runtime.hpp
                        engine/run_state.hpp engine/records.cpp engine/analytic_round.cpp)

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
  # The fiber lane: every header of ours it reaches, followed transitively.
  foreach(start IN LISTS DDLSIM_SIMGRID_FREE)
    set(queue "${start}")
    set(seen "")
    while(queue)
      list(POP_FRONT queue current)
      if(current IN_LIST seen OR NOT EXISTS "${source_dir}/${current}")
        continue()
      endif()
      list(APPEND seen "${current}")
      file(STRINGS "${source_dir}/${current}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
      foreach(line IN LISTS includes)
        if(line MATCHES "<(simgrid|xbt)[/.]")
          string(STRIP "${line}" line)
          string(APPEND violations "\n  ${start}: reaches ${current}, which has ${line} (the fiber lane is SimGrid-free)")
        elseif(line MATCHES "\"([a-z_]+/[A-Za-z0-9_./]+)\"")
          list(APPEND queue "${CMAKE_MATCH_1}")
        endif()
      endforeach()
    endwhile()
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
