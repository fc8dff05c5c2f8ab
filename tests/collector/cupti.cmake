# CUPTI side of the collector tests: the CUPTI stand-in library, translation tests against the real libcupti,
# loader and session tests against the stand-in. Included from tests/collector/CMakeLists.txt.
set(GPROF_CUPTI_TEST_DIR ${CMAKE_CURRENT_LIST_DIR})

# The stand-in: a test double exporting the cupti* functions, loaded through GPROF_CUPTI_LIB. Never installed.
add_library(gprof_test_cupti_standin SHARED ${GPROF_CUPTI_TEST_DIR}/cupti_standin/standin.cpp)
set_target_properties(gprof_test_cupti_standin PROPERTIES
  OUTPUT_NAME gprof-test-cupti-standin
  LIBRARY_OUTPUT_DIRECTORY ${GPROF_TEST_BINARY_DIR}
  CXX_VISIBILITY_PRESET hidden)
target_include_directories(gprof_test_cupti_standin PUBLIC ${GPROF_CUPTI_TEST_DIR}/cupti_standin)
target_link_libraries(gprof_test_cupti_standin PRIVATE gprof_cuda_headers gprof_warnings Threads::Threads)

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
