#include "check.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cupti_loader/search.h"
#include "gprof/env/variables.h"
#include "gprof/version.h"
#include "python_env.h"
#include "supervise.h"

namespace gprof::launcher {
namespace cupti = gprof::collector::cupti;

namespace {

struct Driver {
    std::string module;       // the kernel module's version ("580.82.07"), empty when /proc does not say
    std::string library;      // where libcuda.so.1 was found
    uint32_t cuda = 0;        // cuDriverGetVersion: 13000 for CUDA 13.0
    std::string error;        // why there is no usable libcuda
};

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.82.07  Wed ..." -> "580.82.07".
std::string kernel_module_version() {
    std::ifstream in("/proc/driver/nvidia/version");
    std::string line;
    if (!std::getline(in, line)) return {};
    std::istringstream words(line);
    std::string word, previous;
    while (words >> word) {
        if (previous == "Module") return word;
        previous = word;
    }
    return {};
}

// The driver a run would use: libcuda.so.1 through the loader path, asked its CUDA version (no cuInit needed). This
// process is gprof-run itself, never the profiled program: loading the driver here changes nothing there.
Driver find_driver() {
    Driver d;
    d.module = kernel_module_version();
    dlerror();
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* e = dlerror();
        d.error = std::string("libcuda.so.1 not found (") + (e ? e : "dlopen failed") + ")";
        return d;
    }
    struct link_map* map = nullptr;
    d.library = dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name ? map->l_name : "libcuda.so.1";
    auto get = reinterpret_cast<int (*)(int*)>(dlsym(h, "cuDriverGetVersion"));
    int v = 0;
    if (!get || get(&v) != 0 || v <= 0)
        d.error = d.library + " does not answer cuDriverGetVersion";
    else
        d.cuda = static_cast<uint32_t>(v);
    return d;
}

bool traces(const LaunchOptions& o, const char* what) {
    std::string list = "," + o.trace + ",";
    return list.find(std::string(",") + what + ",") != std::string::npos;
}

// What one CUPTI release cannot give, as the collector will say it in the trace.
std::vector<std::string> cupti_notes(const cupti::CuptiApi& api) {
    std::vector<std::string> notes;
    if (std::string lacking = cupti::fields_unknown(api); !lacking.empty())
        notes.push_back("its records lack " + lacking + ": unknown in the trace");
    if (!api.ActivityEnableDriverApi)
        notes.push_back("it has no cuptiActivityEnableDriverApi (CUDA 12.5 added it): the collector drops the CUDA "
                        "runtime's own driver calls itself");
    if (!api.Subscribe_v2)
        notes.push_back("it has no cuptiSubscribe_v2 (CUDA 13.0 added it): if another tool holds CUPTI, gprof-run "
                        "cannot say which");
    return notes;
}

}  // namespace

CheckResult check_machine(const LaunchOptions& o, const std::string& collector, const std::string& collector_error,
                          std::ostream& out) {
    CheckResult result;
    const bool cuda = traces(o, "cuda");
    const bool nvtx = traces(o, "nvtx");
    out << GPROF_PRODUCER << " --check: is this machine ready to profile?\n";

    // ---- the driver ----
    Driver driver = find_driver();
    out << "\ndriver\n";
    if (!driver.module.empty()) out << "  NVIDIA kernel module " << driver.module << "\n";
    if (driver.error.empty())
        out << "  " << driver.library << ": CUDA " << cupti::cuda_version_text(driver.cuda) << " (cuDriverGetVersion "
            << driver.cuda << ")\n";
    else
        out << "  " << driver.error << (driver.module.empty() ? ": no NVIDIA driver on this machine" : "") << "\n";

    // ---- every CUPTI the collector's search finds, in its order ----
    cupti::LoadOptions load = cupti::load_options_from_environment();
    load.driver_version = driver.cuda;
    load.search_process = false;  // this is gprof-run, not the program: nothing of the program is loaded here
    if (!std::getenv(gprof::env::kPythonSitePackages)) {
        // As a run names them: the program's Python environment (when an app is given), $VIRTUAL_ENV, $CONDA_PREFIX,
        // gprof-run's own.
        std::string program;
        if (!o.command.empty()) {
            ResolvedApp app = resolve_app(o.command.front(), std::getenv("PATH"));
            program = app.exit_code == 0 ? app.path : o.command.front();
        }
        for (const auto& dir : python_site_packages(python_env_inputs(program)))
            load.python_site_packages.push_back(dir.string());
    }
    std::vector<cupti::Surveyed> found = cupti::survey_cupti(load);
    out << "\nCUPTI (in the order a run searches; a run uses the one marked *)\n";
    const cupti::Surveyed* chosen = nullptr;
    for (const cupti::Surveyed& s : found) {
        if (s.chosen) chosen = &s;
        const cupti::CuptiApi* api = s.loaded.api;
        std::string what = api ? cupti::cupti_release_text(api->release)
                               : s.loaded.version ? cupti::cupti_release_text(cupti::cupti_release(s.loaded.version))
                                                  : std::string("not loaded");
        out << (s.chosen ? "* " : "  ") << what << "  " << (api ? api->path : s.candidate.path) << "  ("
            << s.candidate.found_by << ")\n";
        if (s.why_not.empty())
            out << (driver.cuda ? "      usable with this driver\n" : "      readable by this gprof-run (no driver here to run it)\n");
        else
            out << "      not usable: " << s.why_not << "\n";
    }
    if (found.empty()) out << "  none found (" << (load.explicit_path.empty() ? "searched the Python environments, "
                                                   "$CUDA_HOME, /usr/local/cuda* and the loader path"
                                                   : "GPROF_CUPTI_LIB names none") << ")\n";

    // ---- NVTX and the collector ----
    out << "\nNVTX and the collector\n";
    if (collector_error.empty()) {
        out << "  collector " << collector << "\n";
        if (nvtx)
            out << "  NVTX calls reach it through NVTX_INJECTION64_PATH (NVTX 3, as in PyTorch, JAX and nvtx3 "
                   "programs)\n";
        for (const char* name : {gprof::env::kNvtxInjection, gprof::env::kCudaInjection}) {
            const char* set = std::getenv(name);
            if (set && *set && collector != set)
                out << "  " << name << " is set to " << set << " here: a run replaces it for the program\n";
        }
    } else {
        out << "  " << collector_error << "\n";
    }

    // ---- what a run would record ----
    out << "\na run records\n";
    std::string why_not;
    if (!collector_error.empty()) why_not = collector_error;
    if (cuda) {
        if (!driver.error.empty()) {
            out << "  no GPU activity: " << driver.error << "\n";
            if (why_not.empty()) why_not = "no CUDA driver: " + driver.error;
        } else if (!chosen) {
            // What a run would say: the search's own reason, or why the one named by GPROF_CUPTI_LIB will not do.
            std::string reason = load.explicit_path.empty() || found.empty()
                                     ? cupti::load_cupti(load).reason
                                     : "GPROF_CUPTI_LIB: " + found.front().why_not + ". " +
                                           cupti::cupti_install_hint(driver.cuda);
            out << "  no GPU activity: " << reason << "\n";
            if (why_not.empty()) why_not = reason;
        } else {
            out << "  GPU kernels, memory copies and sets, synchronisations, allocations and memory pools, CUDA graphs, "
                   "CUDA runtime and driver API calls, through "
                << cupti::cupti_release_text(chosen->loaded.api->release) << "\n";
            for (const std::string& note : cupti_notes(*chosen->loaded.api)) out << "    " << note << "\n";
        }
    } else {
        out << "  no CUDA activity (-t " << o.trace << ")\n";
    }
    if (nvtx) out << "  NVTX ranges and marks\n";
    out << "  processes, threads, their exits and signals\n";

    result.ready = why_not.empty();
    result.reason = why_not;
    out << "\n" << (result.ready ? "ready" : "not ready: " + why_not) << "\n";
    return result;
}

}  // namespace gprof::launcher
