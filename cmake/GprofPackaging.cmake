# CPack TGZ: a relocatable tree (bin/, lib/gprof-run/, share/doc/gprof-run/). See docs/install.md.
set(CPACK_GENERATOR TGZ)
set(CPACK_PACKAGE_NAME gprof-run)
set(CPACK_PACKAGE_FILE_NAME gprof-run-${PROJECT_VERSION}-linux-x86_64)
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
install(FILES README.md LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
include(CPack)
