#include "model/names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gprof::report {

std::string demangle(std::string_view name) {
    if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return std::string(name);
    std::string mangled(name);  // __cxa_demangle wants a NUL-terminated string
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && out ? std::string(out.get()) : mangled;
}

}  // namespace gprof::report
