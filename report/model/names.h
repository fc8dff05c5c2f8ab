// Display names shared by every layer of the report: the summary tables, the timeline, `analyze`, `diff` and the
// symboliser all show a kernel or function the same way.
#pragma once

#include <string>
#include <string_view>

namespace gprof::report {

// The demangled form of an Itanium-mangled C++ name ("_Z6kernelPfi" -> "kernel(float*, int)"); any other name,
// or one that does not demangle, comes back as given (CUPTI reports extern "C" and some PTX names unmangled).
std::string demangle(std::string_view name);

}  // namespace gprof::report
