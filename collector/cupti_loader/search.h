// Where the collector looks for libcupti, in one order, and which one it takes: the first the process's CUDA driver
// runs and this build reads (docs/cupti.md, "Loading libcupti"). `gprof-run --check` walks the same list.
//
//   1. GPROF_CUPTI_LIB: only that file; if it cannot be used nothing else is tried. If the program already loaded
//      another CUPTI, it is refused: two CUPTIs are never in one process.
//   2. A libcupti the process already loaded (PyTorch's, the program's own CUPTI use): only that one, usable or
//      not -- never a second CUPTI in one process.
//   3. Otherwise by CUDA major, the program's libcudart major first (a PyTorch cu12 build then gets the
//      libcupti.so.12 its own profiler would load), then the newest the driver runs (below CUDA 13000 only 12.x);
//      for each major, in this order: next to each loaded libcudart, the Python environments
//      (GPROF_PYTHON_SITE_PACKAGES: <site>/nvidia/cu13/lib, <site>/nvidia/cuda_cupti/lib), $CUDA_HOME,
//      /usr/local/cuda, /usr/local/cuda-X.Y (newest first), then the plain soname through the loader path;
//      <prefix>/lib64 and <prefix>/extras/CUPTI/lib64 under each toolkit prefix (13.x and 12.x toolkits put it there).
//   A CUPTI of a major the driver does not run is never loaded: it is named in the reason when nothing else is found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cupti_loader/loader.h"

namespace gprof::collector::cupti {

struct LoadOptions {
    std::string explicit_path;  // GPROF_CUPTI_LIB: when set, only this file is tried
    std::string cuda_home;      // $CUDA_HOME (empty: not set)
    // GPROF_PYTHON_SITE_PACKAGES, split at ':': the Python environments' site-packages, where pip puts CUPTI.
    std::vector<std::string> python_site_packages;
    uint32_t driver_version = 0;  // cuDriverGetVersion of the process's driver (12040); 0: unknown
    bool search_process = true;   // look for a libcupti / libcudart already in the process
    bool search_defaults = true;  // /usr/local/cuda*, and the plain sonames through the loader path
};

// Options from the environment: GPROF_CUPTI_LIB, GPROF_PYTHON_SITE_PACKAGES and CUDA_HOME (driver_version stays 0).
LoadOptions load_options_from_environment();

// The CUDA majors whose CUPTI this build reads, newest first.
inline constexpr uint32_t kCuptiMajors[] = {13, 12};

struct Candidate {
    std::string path;         // a file that exists, or a plain soname for the loader path
    const char* found_by;     // "GPROF_CUPTI_LIB", "already loaded", "next to libcudart", "Python environment", ...
    uint32_t cuda_major = 0;  // by its name (libcupti.so.12); 0 when the name does not say (explicit, already loaded)
    bool runs = true;         // the driver runs that major (else listed only, to be named)
};

struct Search {
    std::vector<Candidate> candidates;  // in order; each file once (by its real path)
    bool exclusive = false;             // GPROF_CUPTI_LIB or already loaded: the first candidate and nothing else
    uint32_t cudart_major = 0;          // the program's libcudart, when one is loaded
    // GPROF_CUPTI_LIB names another file than the CUPTI the program already loaded: that one, refused (never two).
    std::string conflict;
};

// Every place to look, in order, that holds a file (see the top of this file). Touches the file system and the
// process's link map, loads nothing.
Search find_cupti_candidates(const LoadOptions& options);

// Why `api` cannot record with this driver, empty when it can.
std::string unusable_with_driver(const CuptiApi& api, uint32_t driver_version);

// Walks find_cupti_candidates and returns the first library the driver runs and this build reads. The reason when
// none: one line naming what was found and refused, and the way out (cupti_install_hint). Never throws.
LoadResult load_cupti(const LoadOptions& options);

// Every candidate, each loaded (also those the driver does not run, for their version), with the verdict load_cupti
// would give it; for `gprof-run --check`, in the launcher (never inside a profiled process: it loads every CUPTI).
struct Surveyed {
    Candidate candidate;
    LoadResult loaded;    // api null: not loaded, loaded.reason says why
    std::string why_not;  // empty: usable with this driver
    bool chosen = false;  // the one a run would use (the first usable, or the exclusive one)
};
std::vector<Surveyed> survey_cupti(const LoadOptions& options);

}  // namespace gprof::collector::cupti
