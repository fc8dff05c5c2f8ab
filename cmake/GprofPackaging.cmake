# Install rules and CPack TGZ: a relocatable tree that needs only glibc (>= GPROF_GLIBC_FLOOR) and, to profile
# anything, the CUDA driver. See docs/install.md.
#
#   bin/gprof-run, bin/gprof-report             (each component adds install(TARGETS) for its own target)
#   lib/gprof-run/libgprof-collector.so          (+ any bundled shared library, found through RPATH $ORIGIN)
#   share/doc/gprof-run/                         README, LICENSE, docs, examples
#
# Nothing is found through absolute paths: binaries find their siblings relative to themselves (GprofLayout.cmake),
# so the tree works from any prefix and can be moved after installation.

# The glibc floor (gprof_static_runtime) is set up in GprofDependencies.cmake.

# ----- install rules ------------------------------------------------------------------------------------------
# RPATH: installed binaries look next to themselves and in lib/gprof-run, never in the build tree.
set(GPROF_INSTALL_RPATH_BIN "\$ORIGIN/../${GPROF_PKGLIBDIR}")
set(GPROF_INSTALL_RPATH_LIB "\$ORIGIN")
set_target_properties(gprof-run gprof-report PROPERTIES INSTALL_RPATH "${GPROF_INSTALL_RPATH_BIN}")
set_target_properties(gprof-collector PROPERTIES INSTALL_RPATH "${GPROF_INSTALL_RPATH_LIB}")

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
# User documentation.
file(GLOB _gprof_user_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
if(_gprof_user_docs)
  install(FILES ${_gprof_user_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
endif()

# Bundling: after every component's install rules (CMP0082: rules run in declaration order, and this file is
# included last), copy each shared library the installed binaries need, other than glibc, libgcc_s and the CUDA
# driver/CUPTI, into lib/gprof-run/, where their RPATH finds it (e.g. libz.so.1 when a component links zlib).
install(CODE [=[
  set(_gprof_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  set(_gprof_exes "")
  set(_gprof_libs "")
  foreach(_f bin/gprof-run bin/gprof-report)
    if(EXISTS "${_gprof_root}/${_f}")
      list(APPEND _gprof_exes "${_gprof_root}/${_f}")
    endif()
  endforeach()
  if(EXISTS "${_gprof_root}/lib/gprof-run/libgprof-collector.so")
    list(APPEND _gprof_libs "${_gprof_root}/lib/gprof-run/libgprof-collector.so")
  endif()
  if(_gprof_exes OR _gprof_libs)
    file(GET_RUNTIME_DEPENDENCIES
      EXECUTABLES ${_gprof_exes} LIBRARIES ${_gprof_libs}
      RESOLVED_DEPENDENCIES_VAR _gprof_deps UNRESOLVED_DEPENDENCIES_VAR _gprof_unresolved
      DIRECTORIES "${_gprof_root}/lib/gprof-run"
      PRE_EXCLUDE_REGEXES "^linux-vdso" "^ld-linux" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so"
                          "^librt\\.so" "^libutil\\.so" "^libresolv\\.so" "^libgcc_s\\.so" "^libcuda\\.so"
                          "^libcupti\\.so" "^libnvidia-"
      POST_EXCLUDE_REGEXES "/lib/gprof-run/")
    foreach(_d IN LISTS _gprof_deps)
      message(STATUS "Bundling ${_d} into lib/gprof-run")
      file(INSTALL "${_d}" DESTINATION "${_gprof_root}/lib/gprof-run" FOLLOW_SYMLINK_CHAIN)
    endforeach()
    if(_gprof_unresolved)
      message(WARNING "gprof-run install: unresolved shared libraries: ${_gprof_unresolved}")
    endif()
  endif()
]=])

# ----- CPack --------------------------------------------------------------------------------------------------
set(CPACK_GENERATOR TGZ)
set(CPACK_STRIP_FILES ON)  # RelWithDebInfo binaries are ~5x larger with their debug info
set(CPACK_PACKAGE_NAME gprof-run)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "gprof-run")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_FILE_NAME gprof-run-${PROJECT_VERSION}-linux-x86_64)
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/dist)
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
