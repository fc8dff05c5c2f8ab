#include "cupti_loader/search.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "gprof/env/variables.h"

namespace gprof::collector::cupti {
namespace {

std::string dir_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string soname(uint32_t major) { return "libcupti.so." + std::to_string(major); }

// The major a library's file name carries: 12 for libcudart.so.12 / libcupti.so.12.9.79, 0 when it has none.
uint32_t major_of(const std::string& base, const char* stem) {
    size_t n = std::strlen(stem);
    if (base.compare(0, n, stem) != 0 || base.size() <= n || base[n] != '.') return 0;
    return static_cast<uint32_t>(std::strtoul(base.c_str() + n + 1, nullptr, 10));
}

// What the process has loaded already: CUPTIs, and the directories and majors of its libcudart copies (a pip-installed
// CUDA keeps libcupti beside, or beside the package of, its libcudart: the copy matching the program's CUDA).
struct Loaded {
    std::vector<std::string> cupti;
    std::vector<std::pair<std::string, uint32_t>> cudart;  // directory, major
};

Loaded loaded_objects() {
    Loaded out;
    dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) -> int {
            auto* found = static_cast<Loaded*>(data);
            if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
            std::string path = info->dlpi_name;
            std::string base = base_of(path);
            if (base.rfind("libcupti.so", 0) == 0) found->cupti.push_back(path);
            if (base.rfind("libcudart.so", 0) == 0 && !dir_of(path).empty())
                found->cudart.emplace_back(dir_of(path), major_of(base, "libcudart.so"));
            return 0;
        },
        &out);
    return out;
}

// /usr/local/cuda-X.Y directories, newest first.
std::vector<std::string> versioned_toolkits() {
    std::vector<std::pair<std::pair<unsigned long, unsigned long>, std::string>> found;
    if (DIR* d = opendir("/usr/local")) {
        while (dirent* e = readdir(d)) {
            if (std::strncmp(e->d_name, "cuda-", 5) != 0) continue;
            char* end = nullptr;
            unsigned long major = std::strtoul(e->d_name + 5, &end, 10);
            unsigned long minor = end && *end == '.' ? std::strtoul(end + 1, nullptr, 10) : 0;
            found.push_back({{major, minor}, std::string("/usr/local/") + e->d_name});
        }
        closedir(d);
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> out;
    for (auto& f : found) out.push_back(f.second);
    return out;
}

std::string real_path(const std::string& path) {
    char buf[PATH_MAX];
    return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

const char* driver_name(uint32_t cuda_major) { return cuda_major >= 13 ? " (r580 or later)" : ""; }

}  // namespace

LoadOptions load_options_from_environment() {
    LoadOptions o;
    if (const char* p = std::getenv(env::kCuptiLib); p && *p) o.explicit_path = p;
    if (const char* p = std::getenv("CUDA_HOME"); p && *p) o.cuda_home = p;
    if (const char* p = std::getenv(env::kPythonSitePackages); p && *p) {
        std::string list = p;
        for (size_t start = 0; start <= list.size();) {
            size_t end = std::min(list.find(':', start), list.size());
            if (end > start) o.python_site_packages.push_back(list.substr(start, end - start));
            start = end + 1;
        }
    }
    return o;
}

Search find_cupti_candidates(const LoadOptions& options) {
    Search search;
    Loaded loaded;
    if (options.search_process) loaded = loaded_objects();
    for (auto& [dir, major] : loaded.cudart)
        if (major && !search.cudart_major) search.cudart_major = major;
    // An explicit choice is honoured exactly: quietly loading some other CUPTI instead would surprise the user. But
    // not next to another CUPTI the program loaded (PyTorch's): two in one process is never safe.
    if (!options.explicit_path.empty()) {
        search.exclusive = true;
        search.candidates.push_back({options.explicit_path, "GPROF_CUPTI_LIB", 0, true});
        const std::string& named = options.explicit_path;
        for (const std::string& path : loaded.cupti) {
            bool same = named.find('/') == std::string::npos ? base_of(path) == named  // a soname: the loader's pick
                                                              : real_path(path) == real_path(named);
            if (!same) search.conflict = path;
        }
        return search;
    }
    // A CUPTI the process has: a second copy by another path would put two CUPTIs into one process.
    if (!loaded.cupti.empty()) {
        search.exclusive = true;
        search.candidates.push_back({loaded.cupti.front(), "already loaded", 0, true});
        return search;
    }

    std::vector<uint32_t> majors;  // the program's major first, then newest first; those the driver runs before others
    auto add_major = [&](uint32_t m, bool runnable_only) {
        if (std::find(majors.begin(), majors.end(), m) != majors.end()) return;
        if (runnable_only && !driver_runs(options.driver_version, m)) return;
        majors.push_back(m);
    };
    if (std::find(std::begin(kCuptiMajors), std::end(kCuptiMajors), search.cudart_major) != std::end(kCuptiMajors))
        add_major(search.cudart_major, true);
    for (uint32_t m : kCuptiMajors) add_major(m, true);
    for (uint32_t m : kCuptiMajors) add_major(m, false);

    std::vector<std::string> toolkits;
    if (options.search_defaults) {
        toolkits.push_back("/usr/local/cuda");
        for (auto& t : versioned_toolkits()) toolkits.push_back(t);
    }
    std::set<std::string> seen;
    for (uint32_t major : majors) {
        const std::string so = soname(major);
        const bool runs = driver_runs(options.driver_version, major);
        auto add = [&](const std::string& path, const char* found_by) {
            if (access(path.c_str(), F_OK) != 0) return;
            if (!seen.insert(real_path(path)).second) return;
            search.candidates.push_back({path, found_by, major, runs});
        };
        for (auto& [dir, cudart_major] : loaded.cudart) {
            add(dir + "/" + so, "next to libcudart");
            // pip wheels: .../nvidia/cuda_runtime/lib/libcudart.so.12 beside .../nvidia/cuda_cupti/lib
            add(dir + "/../../cuda_cupti/lib/" + so, "next to libcudart");
            add(dir + "/../extras/CUPTI/lib64/" + so, "next to libcudart");
        }
        // The CUPTI pip installed into the program's Python environment (gprof-run names its site-packages):
        // PyTorch's CUDA 13 wheels put it in nvidia/cu13/lib, the cu12 ones (nvidia-cuda-cupti-cu12) in
        // nvidia/cuda_cupti/lib.
        for (const std::string& site : options.python_site_packages) {
            add(site + "/nvidia/cu" + std::to_string(major) + "/lib/" + so, "Python environment");
            add(site + "/nvidia/cuda_cupti/lib/" + so, "Python environment");
        }
        if (!options.cuda_home.empty()) {
            add(options.cuda_home + "/lib64/" + so, "CUDA_HOME");
            add(options.cuda_home + "/extras/CUPTI/lib64/" + so, "CUDA_HOME");
        }
        for (const std::string& prefix : toolkits) {
            add(prefix + "/lib64/" + so, prefix == "/usr/local/cuda" ? "/usr/local/cuda" : "/usr/local/cuda-*");
            add(prefix + "/extras/CUPTI/lib64/" + so, prefix == "/usr/local/cuda" ? "/usr/local/cuda" : "/usr/local/cuda-*");
        }
        if (options.search_defaults && seen.insert(so).second)
            search.candidates.push_back({so, "loader search path", major, runs});
    }
    return search;
}

std::string unusable_with_driver(const CuptiApi& api, uint32_t driver_version) {
    if (driver_runs(driver_version, api.release.cuda_major)) return {};
    return "the CUDA driver supports CUDA " + cuda_version_text(driver_version) + " but " +
           cupti_release_text(api.release) + " (" + api.path + ") needs a driver for CUDA " +
           std::to_string(api.release.cuda_major) + " or newer" + driver_name(api.release.cuda_major);
}

std::vector<Surveyed> survey_cupti(const LoadOptions& options) {
    Search search = find_cupti_candidates(options);
    std::vector<Surveyed> out;
    std::set<std::string> listed;  // a plain soname the loader resolves to a file already listed is that file
    bool chosen = false;
    for (const Candidate& c : search.candidates) {
        Surveyed s{c, load_cupti_file(c.path, c.found_by), {}, false};
        if (!s.loaded.api) {
            if (!s.loaded.opened && c.path.find('/') == std::string::npos) continue;  // a soname the loader lacks
            s.why_not = s.loaded.reason;
        } else {
            if (!listed.insert(real_path(s.loaded.api->path)).second) continue;
            s.why_not = unusable_with_driver(*s.loaded.api, options.driver_version);
        }
        if (s.why_not.empty() && !chosen) chosen = s.chosen = true;
        out.push_back(std::move(s));
        if (search.exclusive) break;
    }
    return out;
}

LoadResult load_cupti(const LoadOptions& options) {
    Search search = find_cupti_candidates(options);
    if (!search.conflict.empty()) {
        LoadResult r;
        r.reason = "GPROF_CUPTI_LIB names " + options.explicit_path + ", but the program already loaded " +
                   search.conflict + ": a second CUPTI is never loaded into one process (unset GPROF_CUPTI_LIB to "
                   "record with the program's own)";
        return r;
    }
    if (search.exclusive) {
        const Candidate& c = search.candidates.front();
        LoadResult r = load_cupti_file(c.path, c.found_by);
        if (!r.api) {
            if (std::strcmp(c.found_by, "GPROF_CUPTI_LIB") == 0)
                r.reason = "GPROF_CUPTI_LIB: " + r.reason;
            else
                r.reason = "the program already loaded " + c.path + ", which gprof-run cannot use (" + r.reason +
                           "); a second CUPTI is never loaded into one process";
        }
        return r;  // a driver too old for it is said by the session, which knows the driver
    }

    std::string refused;  // what was found and not taken, "; "-separated
    auto note = [&](const std::string& what) { refused += (refused.empty() ? "" : "; ") + what; };
    for (const Candidate& c : search.candidates) {
        const bool plain = c.path.find('/') == std::string::npos;
        if (!c.runs) {
            if (!plain)
                note(c.path + " (CUDA " + std::to_string(c.cuda_major) + ": needs a driver for CUDA " +
                     std::to_string(c.cuda_major) + " or newer" + driver_name(c.cuda_major) + ")");
            continue;
        }
        LoadResult r = load_cupti_file(c.path, c.found_by);
        if (!r.api) {
            if (r.opened || !plain) note(r.reason);  // a plain soname the loader does not find is simply absent
            continue;
        }
        if (std::string why = unusable_with_driver(*r.api, options.driver_version); !why.empty()) {
            note(why);
            dlclose(r.api->handle);
            delete r.api;
            continue;
        }
        return r;
    }
    LoadResult failed;
    const std::string hint = cupti_install_hint(options.driver_version);
    if (!refused.empty()) {
        failed.reason = (options.driver_version ? "no CUPTI this CUDA " + cuda_version_text(options.driver_version) +
                                                      " driver runs"
                                                : std::string("no usable CUPTI")) +
                        ": " + refused + ". " + hint;
    } else {
        failed.reason = "libcupti not found (searched next to libcudart, the Python environments, $CUDA_HOME, "
                        "/usr/local/cuda* and the loader path). " + hint;
    }
    return failed;
}

}  // namespace gprof::collector::cupti
