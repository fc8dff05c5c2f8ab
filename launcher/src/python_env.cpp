#include "python_env.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace gprof::launcher {
namespace fs = std::filesystem;

namespace {

// python, python3, python3.12: the names venvs, conda and distributions give the interpreter.
bool is_python_name(const std::string& name) {
    static const std::regex re(R"(python(3(\.[0-9]+)?)?)");
    return std::regex_match(name, re);
}

std::optional<fs::path> find_in_path(const std::string& name, const std::string& path_env) {
    std::string path = path_env.empty() ? "/bin:/usr/bin" : path_env;
    for (size_t start = 0; start <= path.size();) {
        size_t colon = std::min(path.find(':', start), path.size());
        fs::path candidate = fs::path(colon > start ? path.substr(start, colon - start) : ".") / name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = colon + 1;
    }
    return std::nullopt;
}

// The interpreter a program is, or that its "#!" line names (directly or through env); nullopt for anything else.
std::optional<fs::path> python_interpreter_of(const fs::path& program, const std::string& path_env) {
    if (is_python_name(program.filename().string())) return program;
    std::ifstream in(program, std::ios::binary);
    char head[256] = {};
    in.read(head, sizeof head - 1);
    std::string line(head, static_cast<size_t>(in.gcount()));
    if (line.rfind("#!", 0) != 0) return std::nullopt;
    line = line.substr(2, line.find('\n') == std::string::npos ? std::string::npos : line.find('\n') - 2);
    std::istringstream words(line);
    std::string interpreter, word;
    words >> interpreter;
    if (fs::path(interpreter).filename() == "env") {
        while (words >> word && word[0] == '-') {}  // env -S python3 ...
        if (!is_python_name(word)) return std::nullopt;
        return find_in_path(word, path_env);
    }
    if (is_python_name(fs::path(interpreter).filename().string())) return fs::path(interpreter);
    return std::nullopt;
}

// <root>/lib/python3.*/<leaf> for every leaf name given, sorted.
std::vector<fs::path> lib_python_dirs(const fs::path& root, std::initializer_list<const char*> leaves) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root / "lib", ec)) {
        if (entry.path().filename().string().rfind("python3", 0) != 0) continue;
        for (const char* leaf : leaves)
            if (fs::is_directory(entry.path() / leaf, ec)) out.push_back(entry.path() / leaf);
    }
    std::sort(out.begin(), out.end());
    return out;
}

void add_environment(const fs::path& prefix, std::vector<fs::path>& out) {
    for (auto& d : lib_python_dirs(prefix, {"site-packages"})) out.push_back(d);
}

}  // namespace

std::vector<fs::path> python_site_packages(const PythonEnvInputs& in) {
    std::vector<fs::path> found;
    if (auto interpreter = python_interpreter_of(in.program, in.path_env)) {
        // bin/python of a venv is a link to the base interpreter: the environment is where the path says, not
        // where it leads.
        fs::path bin = interpreter->parent_path();
        fs::path prefix = bin.parent_path();
        std::error_code ec;
        if (bin.filename() == "bin" && !prefix.empty()) {
            if (fs::exists(prefix / "pyvenv.cfg", ec)) {
                add_environment(prefix, found);
            } else {  // a distribution's or conda's interpreter: what it imports from besides its own lib
                for (auto& d : lib_python_dirs(prefix, {"site-packages", "dist-packages"})) found.push_back(d);
                if (prefix == "/usr")
                    for (auto& d : lib_python_dirs("/usr/local", {"dist-packages", "site-packages"}))
                        found.push_back(d);
                if (!in.home.empty())
                    for (auto& d : lib_python_dirs(fs::path(in.home) / ".local", {"site-packages"}))
                        found.push_back(d);
            }
        }
    }
    if (!in.virtual_env.empty()) add_environment(in.virtual_env, found);
    if (!in.conda_prefix.empty()) add_environment(in.conda_prefix, found);
    // pip installed gprof-run as <site-packages>/gprof_run/bin/gprof-run (the wheel, docs/install.md).
    fs::path bin = in.self_exe.parent_path(), package = bin.parent_path(), site = package.parent_path();
    if (bin.filename() == "bin" && package.filename() == "gprof_run" &&
        (site.filename() == "site-packages" || site.filename() == "dist-packages"))
        found.push_back(site);

    std::vector<fs::path> out;
    for (const auto& d : found) {
        std::error_code ec;
        fs::path canonical = fs::canonical(d, ec);
        if (ec || !fs::is_directory(canonical, ec)) continue;
        if (std::find(out.begin(), out.end(), canonical) == out.end()) out.push_back(canonical);
    }
    return out;
}

std::optional<std::string> site_packages_value(const std::vector<fs::path>& dirs) {
    std::string value;
    for (const auto& d : dirs) {
        if (d.string().find(':') != std::string::npos) continue;  // the list cannot carry it
        value += (value.empty() ? "" : ":") + d.string();
    }
    if (value.empty()) return std::nullopt;
    return value;
}

PythonEnvInputs python_env_inputs(const std::string& program) {
    auto env = [](const char* name) {
        const char* v = std::getenv(name);
        return std::string(v ? v : "");
    };
    PythonEnvInputs in;
    in.program = program;
    in.path_env = env("PATH");
    in.virtual_env = env("VIRTUAL_ENV");
    in.conda_prefix = env("CONDA_PREFIX");
    in.home = env("HOME");
    std::error_code ec;
    in.self_exe = fs::read_symlink("/proc/self/exe", ec);
    return in;
}

}  // namespace gprof::launcher
