#include "output_path.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace gprof::launcher {

PatternContext current_pattern_context() {
    PatternContext ctx;
    ctx.pid = static_cast<long>(::getpid());
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof host - 1) == 0) ctx.host = host;
    if (ctx.host.empty()) ctx.host = "localhost";
    ctx.getenv = [](const char* name) -> const char* { return ::getenv(name); };
    return ctx;
}

std::optional<std::string> expand_pattern(std::string_view pattern, const PatternContext& ctx, std::string& error) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        if (c != '%') {
            out += c;
            continue;
        }
        if (i + 1 >= pattern.size()) {
            error = "'" + std::string(pattern) + "': a lone % at the end (write %% for a literal %)";
            return std::nullopt;
        }
        char k = pattern[++i];
        switch (k) {
        case '%': out += '%'; break;
        case 'p': out += std::to_string(ctx.pid); break;
        case 'h': out += ctx.host; break;
        case 'q': {
            size_t close = pattern.find('}', i);
            if (i + 1 >= pattern.size() || pattern[i + 1] != '{' || close == std::string_view::npos ||
                close == i + 2) {
                error = "'" + std::string(pattern) + "': %q must be written %q{VARIABLE}";
                return std::nullopt;
            }
            std::string name(pattern.substr(i + 2, close - i - 2));
            const char* value = ctx.getenv ? ctx.getenv(name.c_str()) : nullptr;
            if (!value) {
                error = "'" + std::string(pattern) + "': environment variable " + name + " is not set";
                return std::nullopt;
            }
            out += value;
            i = close;
            break;
        }
        default:
            error = "'" + std::string(pattern) + "': unknown pattern %" + std::string(1, k) +
                    " (known: %p %h %q{VAR} %%)";
            return std::nullopt;
        }
    }
    return out;
}

std::string default_run_dir_name(std::string_view app, std::time_t when) {
    std::string_view base = app;
    while (!base.empty() && base.back() == '/') base.remove_suffix(1);
    if (size_t slash = base.rfind('/'); slash != std::string_view::npos) base = base.substr(slash + 1);
    std::string name;
    for (char c : base) {
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '+';
        name += keep ? c : '_';
    }
    if (name.empty() || name == "." || name == "..") name = "app";
    std::tm tm{};
    ::localtime_r(&when, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    return "gprof-" + name + "-" + stamp;
}

}  // namespace gprof::launcher
