# Folders as layers: one static library per folder, its allowed dependencies written down once, and a build that
# fails on an include in the wrong direction.
#
#   gprof_layer(<target> ROOT <dir> FOLDER <name> SOURCES <files...> LAYERS <layer targets below it...>
#               [LIBS <other libraries>] [PRIVATE_LIBS <...>] [IN_TARGET])
#
# Sources in <dir>/<name>/ include their own and lower folders' headers as "<name>/x.h", from <dir>. The target
# does not get <dir> on its include path: it gets a folder of its own in the build tree that holds one link,
# <name> -> <dir>/<name>, and, through LAYERS (linked PUBLIC), the same folders of the layers below it. A file that
# includes "<upper>/x.h" of a layer it does not depend on therefore fails to compile ("No such file"), in this
# target and in anything that links it without linking <upper> too. scripts/check-layers reads the table this
# writes (<build>/layers.txt) and checks what the compiler cannot: headers included only from above, "../" paths,
# and cycles.
#
# IN_TARGET: built as the collector's code is (position-independent, hidden symbols, -O1 even in Debug).
set(GPROF_LAYER_TABLE ${CMAKE_BINARY_DIR}/layers.txt)
file(WRITE ${GPROF_LAYER_TABLE} "# layer-target root folder: layer-targets it may use (scripts/check-layers)\n")

function(gprof_layer target)
  cmake_parse_arguments(ARG "IN_TARGET" "ROOT;FOLDER" "SOURCES;LAYERS;LIBS;PRIVATE_LIBS" ${ARGN})
  set(stage ${CMAKE_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${stage})
  if(NOT EXISTS ${stage}/${ARG_FOLDER})
    file(CREATE_LINK ${ARG_ROOT}/${ARG_FOLDER} ${stage}/${ARG_FOLDER} SYMBOLIC)
  endif()
  if(ARG_SOURCES)
    add_library(${target} STATIC ${ARG_SOURCES})
    target_include_directories(${target} PUBLIC ${stage})
    target_link_libraries(${target} PUBLIC ${ARG_LAYERS} ${ARG_LIBS} PRIVATE gprof_warnings ${ARG_PRIVATE_LIBS})
  else()  # a folder of headers only
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${stage})
    target_link_libraries(${target} INTERFACE ${ARG_LAYERS} ${ARG_LIBS})
  endif()
  if(ARG_IN_TARGET AND ARG_SOURCES)
    set_target_properties(${target} PROPERTIES
      POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden
      VISIBILITY_INLINES_HIDDEN ON)
    target_compile_options(${target} PRIVATE $<$<CONFIG:Debug>:-O1>)
  endif()
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${ARG_ROOT}/${ARG_FOLDER})
  string(REPLACE ";" " " layers "${ARG_LAYERS}")
  file(APPEND ${GPROF_LAYER_TABLE} "${target} ${rel}: ${layers}\n")
endfunction()
