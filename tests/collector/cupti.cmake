# CUPTI side of the collector tests: the CUPTI stand-in library, translation tests against the real libcupti,
# loader and session tests against the stand-in. Included from tests/collector/CMakeLists.txt.
set(GPROF_CUPTI_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# The stand-in: a test double exporting the cupti* functions, loaded through GPROF_CUPTI_LIB. Never installed. One
# library per CUPTI release it plays (its personality, top of standin.cpp): 13.0 (the default), 12.9 and 12.4.
function(gprof_cupti_standin target output personality)
  add_library(${target} SHARED ${GPROF_CUPTI_TEST_DIR}/cupti_standin/standin.cpp
    ${GPROF_CUPTI_TEST_DIR}/cupti_standin/pm_sampling.cpp)
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${output}
    LIBRARY_OUTPUT_DIRECTORY ${GPROF_TEST_BINARY_DIR}
    CXX_VISIBILITY_PRESET hidden)
  target_compile_definitions(${target} PRIVATE GPROF_STANDIN_PERSONALITY=${personality})
  target_include_directories(${target} PUBLIC ${GPROF_CUPTI_TEST_DIR}/cupti_standin)
  target_link_libraries(${target} PRIVATE gprof_cuda_headers gprof_warnings Threads::Threads ${CMAKE_DL_LIBS})
endfunction()
gprof_cupti_standin(gprof_test_cupti_standin gprof-test-cupti-standin 130)
gprof_cupti_standin(gprof_test_cupti_standin_12_9 gprof-test-cupti-standin-12.9 129)
gprof_cupti_standin(gprof_test_cupti_standin_12_4 gprof-test-cupti-standin-12.4 124)

# A stand-in for the CUDA driver, libcuda.so.1 (soname and file), in a directory of its own. Never installed.
add_library(gprof_test_cuda_standin SHARED ${GPROF_CUPTI_TEST_DIR}/cupti_standin/cuda_standin.cpp)
set_target_properties(gprof_test_cuda_standin PROPERTIES
  OUTPUT_NAME cuda SOVERSION 1
  LIBRARY_OUTPUT_DIRECTORY ${GPROF_TEST_BINARY_DIR}/cuda_standin
  CXX_VISIBILITY_PRESET hidden)
target_link_libraries(gprof_test_cuda_standin PRIVATE gprof_cuda_headers gprof_warnings ${CMAKE_DL_LIBS})

# A second CUPTI client (kineto's part in a PyTorch process), linked against the stand-in by its soname.
add_library(gprof_test_second_tool SHARED ${GPROF_CUPTI_TEST_DIR}/cupti_standin/second_tool.cpp)
set_target_properties(gprof_test_second_tool PROPERTIES
  OUTPUT_NAME gprof-test-second-tool
  LIBRARY_OUTPUT_DIRECTORY ${GPROF_TEST_BINARY_DIR}
  CXX_VISIBILITY_PRESET hidden)
target_link_libraries(gprof_test_second_tool PRIVATE gprof_test_cupti_standin gprof_cuda_headers gprof_warnings)

# The real libcupti: its cuptiActivityGetNextRecord walks caller-built buffers without a GPU.
find_file(GPROF_TEST_REAL_CUPTI libcupti.so.13
  HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64 ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64
  NO_DEFAULT_PATH)
if(NOT GPROF_TEST_REAL_CUPTI)
  set(GPROF_TEST_REAL_CUPTI "")
endif()

set(GPROF_CUPTI_TEST_DEFS
  GPROF_TEST_REAL_CUPTI="${GPROF_TEST_REAL_CUPTI}"
  GPROF_TEST_CUPTI_STANDIN="$<TARGET_FILE:gprof_test_cupti_standin>"
  GPROF_TEST_CUPTI_STANDIN_12_9="$<TARGET_FILE:gprof_test_cupti_standin_12_9>"
  GPROF_TEST_CUPTI_STANDIN_12_4="$<TARGET_FILE:gprof_test_cupti_standin_12_4>"
  GPROF_TEST_CUDA_STANDIN="$<TARGET_FILE:gprof_test_cuda_standin>"
  GPROF_TEST_SECOND_TOOL="$<TARGET_FILE:gprof_test_second_tool>")

gprof_add_catch_test(test_translate SOURCES ${GPROF_CUPTI_TEST_DIR}/test_translate.cpp LIBS gprof_collector_core)
target_compile_definitions(test_translate PRIVATE ${GPROF_CUPTI_TEST_DEFS})

gprof_add_catch_test(test_cupti
  SOURCES ${GPROF_CUPTI_TEST_DIR}/test_cupti_loader.cpp ${GPROF_CUPTI_TEST_DIR}/test_cupti_session.cpp
  LIBS gprof_collector_core)
target_compile_definitions(test_cupti PRIVATE ${GPROF_CUPTI_TEST_DEFS})
add_dependencies(test_cupti gprof_test_cupti_standin)
target_include_directories(test_cupti PRIVATE ${GPROF_CUPTI_TEST_DIR}/cupti_standin)

# End to end: the injected collector (libgprof-collector.so) with the stand-in as its CUPTI, in a test program
# that plays the driver (InitializeInjection) and the app (stand-in control functions).
add_executable(test_cupti_standin_app ${GPROF_CUPTI_TEST_DIR}/cupti_standin/standin_app.cpp)
target_include_directories(test_cupti_standin_app PRIVATE ${GPROF_CUPTI_TEST_DIR}/cupti_standin)
target_link_libraries(test_cupti_standin_app PRIVATE gprof_cuda_headers gprof_warnings ${CMAKE_DL_LIBS} Threads::Threads)
set_target_properties(test_cupti_standin_app PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${GPROF_TEST_BINARY_DIR})

gprof_add_catch_test(test_cupti_e2e SOURCES ${GPROF_CUPTI_TEST_DIR}/test_cupti_e2e.cpp)
target_compile_definitions(test_cupti_e2e PRIVATE ${GPROF_CUPTI_TEST_DEFS})
target_include_directories(test_cupti_e2e PRIVATE ${GPROF_CUPTI_TEST_DIR})
add_dependencies(test_cupti_e2e gprof-collector gprof_test_cupti_standin test_cupti_standin_app gprof_test_cuda_standin
  gprof_test_second_tool)

# Call sites (issue 18) through this build's gprof-run, with the stand-ins as CUPTI and driver.
gprof_add_catch_test(test_call_sites_e2e SOURCES ${GPROF_CUPTI_TEST_DIR}/test_call_sites_e2e.cpp)
target_compile_definitions(test_call_sites_e2e PRIVATE ${GPROF_CUPTI_TEST_DEFS})
target_include_directories(test_call_sites_e2e PRIVATE ${GPROF_CUPTI_TEST_DIR})
add_dependencies(test_call_sites_e2e gprof-run gprof-report gprof-collector gprof_test_cupti_standin test_cupti_standin_app
  gprof_test_cuda_standin)

# The same end-to-end runs against each CUPTI release the stand-in plays (12.4, 12.9, 13.0), and the search choosing
# among them by the driver's version (issue 34).
gprof_add_catch_test(test_cupti_personalities SOURCES ${GPROF_CUPTI_TEST_DIR}/test_cupti_personalities.cpp)
target_compile_definitions(test_cupti_personalities PRIVATE ${GPROF_CUPTI_TEST_DEFS})
target_include_directories(test_cupti_personalities PRIVATE ${GPROF_CUPTI_TEST_DIR})
target_link_libraries(test_cupti_personalities PRIVATE gprof_cuda_headers)
add_dependencies(test_cupti_personalities gprof-collector gprof_test_cupti_standin gprof_test_cupti_standin_12_9
  gprof_test_cupti_standin_12_4 test_cupti_standin_app gprof_test_cuda_standin)

# Real CUPTI 12: the libcupti.so.12 and headers of the nvidia-cuda-cupti-cu12 wheels scripts/setup unpacks into
# .deps/cupti-wheels/<version>/ (12.4.127 and 12.9.79, pinned there). Their cuptiActivityGetNextRecord walks
# caller-built buffers without a GPU: strides, every field, the loader's probes. A layout dump built with each wheel's
# own headers is compared with one built with the CUDA 13.0 headers. Without the wheels (setup offline) the cases say
# SKIPPED and ctest reports them skipped.
add_executable(test_cupti_layout_13 ${GPROF_CUPTI_TEST_DIR}/programs/cupti_layout.cpp)
target_link_libraries(test_cupti_layout_13 PRIVATE gprof_cuda_headers)
set_target_properties(test_cupti_layout_13 PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${GPROF_TEST_BINARY_DIR})
file(GLOB GPROF_CUPTI12_WHEELS CONFIGURE_DEPENDS LIST_DIRECTORIES true ${PROJECT_SOURCE_DIR}/.deps/cupti-wheels/*)
set(_wheels "")
set(_layout_targets "")
foreach(wheel IN LISTS GPROF_CUPTI12_WHEELS)
  set(_lib ${wheel}/nvidia/cuda_cupti/lib/libcupti.so.12)
  set(_include ${wheel}/nvidia/cuda_cupti/include)
  if(NOT EXISTS ${_lib} OR NOT EXISTS ${_include}/cupti_activity.h)
    continue()
  endif()
  get_filename_component(_version ${wheel} NAME)
  string(REPLACE "." "_" _id ${_version})
  # The wheel's own CUPTI headers first; cuda.h and the rest from the toolkit.
  add_executable(test_cupti_layout_${_id} ${GPROF_CUPTI_TEST_DIR}/programs/cupti_layout.cpp)
  target_include_directories(test_cupti_layout_${_id} BEFORE PRIVATE ${_include})
  target_link_libraries(test_cupti_layout_${_id} PRIVATE gprof_cuda_headers)
  set_target_properties(test_cupti_layout_${_id} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${GPROF_TEST_BINARY_DIR})
  list(APPEND _layout_targets test_cupti_layout_${_id})
  string(APPEND _wheels "    {\"${_version}\", \"${_lib}\", \"$<TARGET_FILE:test_cupti_layout_${_id}>\"},\n")
endforeach()
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/generated/cupti12_wheels.h CONTENT
"// Generated by tests/collector/cupti.cmake: the CUPTI 12 wheels found under .deps/cupti-wheels.
#pragma once
struct Cupti12Wheel { const char* version; const char* library; const char* layout_dump; };
inline const Cupti12Wheel kCupti12Wheels[] = {
${_wheels}    {nullptr, nullptr, nullptr},
};
")
gprof_add_catch_test(test_cupti12_real SOURCES ${GPROF_CUPTI_TEST_DIR}/test_cupti12_real.cpp LIBS gprof_collector_core
  PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED:")
target_compile_definitions(test_cupti12_real PRIVATE ${GPROF_CUPTI_TEST_DEFS}
  GPROF_TEST_CUPTI_LAYOUT_13="$<TARGET_FILE:test_cupti_layout_13>")
target_include_directories(test_cupti12_real PRIVATE ${GPROF_CUPTI_TEST_DIR} ${CMAKE_CURRENT_BINARY_DIR}/generated)
add_dependencies(test_cupti12_real test_cupti_layout_13 ${_layout_targets})

# gprof-run --check with the real CUPTI 12 of the wheels and the libcuda stand-in as the driver (issue 34).
gprof_add_catch_test(test_cupti_check SOURCES ${GPROF_CUPTI_TEST_DIR}/test_cupti_check.cpp
  PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED:")
target_compile_definitions(test_cupti_check PRIVATE ${GPROF_CUPTI_TEST_DEFS})
target_include_directories(test_cupti_check PRIVATE ${GPROF_CUPTI_TEST_DIR} ${CMAKE_CURRENT_BINARY_DIR}/generated)
add_dependencies(test_cupti_check gprof-run gprof-collector gprof_test_cupti_standin gprof_test_cuda_standin)

# The metric sets' config images (issue 37) through the real host API and the stand-in's.
gprof_add_catch_test(test_metric_config SOURCES ${GPROF_CUPTI_TEST_DIR}/test_metric_config.cpp
  LIBS gprof_collector_core)
target_compile_definitions(test_metric_config PRIVATE ${GPROF_CUPTI_TEST_DEFS})
add_dependencies(test_metric_config gprof_test_cupti_standin)

# The stand-in's PM sampling and host API (issue 37) against what the H200 gave.
gprof_add_catch_test(test_pm_sampling_standin SOURCES ${GPROF_CUPTI_TEST_DIR}/test_pm_sampling_standin.cpp)
target_compile_definitions(test_pm_sampling_standin PRIVATE ${GPROF_CUPTI_TEST_DEFS})
target_link_libraries(test_pm_sampling_standin PRIVATE gprof_cuda_headers ${CMAKE_DL_LIBS})
add_dependencies(test_pm_sampling_standin gprof_test_cupti_standin)
