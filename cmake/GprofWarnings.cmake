# gprof_warnings: the project's warning set; errors when GPROF_WERROR is on (CI).
add_library(gprof_warnings INTERFACE)
target_compile_options(gprof_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wshadow -Wno-missing-field-initializers>
  $<$<AND:$<COMPILE_LANGUAGE:CXX,C>,$<BOOL:${GPROF_WERROR}>>:-Werror>)
