#include "cupti/clients.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>
#include <set>

#include "base/log.h"
#include "cupti_loader/loader.h"
#include "cupti/session.h"

namespace gprof::collector::cupti {

namespace {

struct FindCupti {
    const char* name;
    void* found = nullptr;
};

int find_in_loaded_cupti(dl_phdr_info* info, size_t, void* data) {
    auto* f = static_cast<FindCupti*>(data);
    if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libcupti")) return 0;
    void* h = ::dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return 0;
    f->found = ::dlsym(h, f->name);
    ::dlclose(h);  // drops only the reference NOLOAD took
    return f->found ? 1 : 0;
}

std::string base_name(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void* real_cupti_function(const char* name) noexcept {
    if (void* next = ::dlsym(RTLD_NEXT, name)) return next;
    if (const CuptiApi* api = Session::instance().api(); api && api->handle)
        if (void* f = ::dlsym(api->handle, name)) return f;
    FindCupti find{name};
    dl_iterate_phdr(find_in_loaded_cupti, &find);
    return find.found;
}

std::string describe_client(const char* subscriber_name, const std::string& module_path) {
    std::string module = base_name(module_path);
    std::string where = module.empty() ? std::string() : " (in " + module + ")";
    if (subscriber_name && *subscriber_name) return subscriber_name + where;
    struct Known {
        const char* needle;
        const char* name;
    };
    static const Known kKnown[] = {
        {"torch", "torch.profiler (kineto"}, {"kineto", "torch.profiler (kineto"}, {"jax", "the JAX profiler (XLA"},
        {"xla", "the JAX profiler (XLA"},    {"tensorflow", "the TensorFlow profiler ("}, {"cupy", "CuPy's profiler ("},
    };
    for (const Known& k : kKnown)
        if (module.find(k.needle) != std::string::npos) {
            std::string name = k.name;
            if (name.back() == '(') return name + "in " + module + ")";
            return name + ", in " + module + ")";
        }
    return module.empty() ? std::string("a CUPTI client of the program") : "a CUPTI client in " + module;
}

void note_other_client(const char* subscriber_name, const void* caller, CUptiResult result) noexcept {
    try {
        Dl_info info{};
        std::string module;
        if (caller && ::dladdr(caller, &info) && info.dli_fname) module = info.dli_fname;
        std::string who = describe_client(subscriber_name, module);
        Session::instance().other_client_subscribed(who, result);
    } catch (...) {
    }
}

}  // namespace gprof::collector::cupti
