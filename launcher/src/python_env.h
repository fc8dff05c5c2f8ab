// The Python environments a run uses, for the collector's CUPTI search (GPROF_PYTHON_SITE_PACKAGES, the contract in
// gprof/inject/environment.h): `gprof-run python train.py` in a venv should record with the CUPTI that pip installed
// there beside PyTorch, before any toolkit's (docs/cupti.md). The collector runs inside the program and only knows
// its own process; the launcher knows which program it starts and where it was itself installed.
//
// Found without running any Python: by the files a venv or conda environment is made of (pyvenv.cfg, bin/python*,
// lib/python3.*/site-packages). The launcher passes directories; which files in them are a CUPTI, of which CUDA
// version, is the collector's loader's business (collector/cupti_loader/loader.cpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gprof::launcher {

struct PythonEnvInputs {
    std::filesystem::path program;      // the program as resolved for exec (resolve_app: contains a '/')
    std::string path_env;               // $PATH, for a script's "#!/usr/bin/env python3"
    std::string virtual_env;            // $VIRTUAL_ENV (an activated venv), may be empty
    std::string conda_prefix;           // $CONDA_PREFIX (an activated conda environment), may be empty
    std::filesystem::path self_exe;     // gprof-run's own executable (/proc/self/exe): inside a wheel's package dir
    std::string home;                   // $HOME, for the user site of an interpreter outside any environment
};

// The existing site-packages directories to search, most specific first, without duplicates:
//   1. the environment of the Python interpreter the program is, or that a script's #! line names (python*,
//      directly or through env), found by the interpreter's path as given -- not resolved, as a venv's bin/python
//      is a link to the base interpreter -- <prefix>/lib/python3.*/site-packages; outside a venv also
//      dist-packages and the user site, as that interpreter would import them;
//   2. $VIRTUAL_ENV, then $CONDA_PREFIX;
//   3. the site-packages gprof-run itself was installed into by pip (<site-packages>/gprof_run/bin/gprof-run).
std::vector<std::filesystem::path> python_site_packages(const PythonEnvInputs& in);

// GPROF_PYTHON_SITE_PACKAGES's value for those directories (':'-separated); nullopt when there are none, or when a
// directory holds a ':' (the list could not carry it).
std::optional<std::string> site_packages_value(const std::vector<std::filesystem::path>& dirs);

// The inputs of this process: $PATH, $VIRTUAL_ENV, $CONDA_PREFIX, $HOME and /proc/self/exe.
PythonEnvInputs python_env_inputs(const std::string& program);

}  // namespace gprof::launcher
