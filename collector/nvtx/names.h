// Names that NVTX calls define once and events refer to later: domains, registered strings, category names.
// Defined from application threads (rare calls: a mutex is fine), read by the writer thread when it decodes
// events. Ids start at 1; 0 means "default domain" / "none".
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gprof::collector::nvtx {

class Names {
public:
    // Same name, same id (a domain created twice is one domain).
    uint32_t domain(std::string_view name);
    uint32_t register_string(uint32_t domain, std::string_view text);
    void name_category(uint32_t domain, uint32_t category, std::string_view name);

    // Copies out under the lock; false when unknown.
    bool domain_name(uint32_t id, std::string& out);
    bool string_text(uint32_t id, std::string& out);
    bool category_name(uint32_t domain, uint32_t category, std::string& out);
    // Changes whenever a category is (re)named, so the writer can drop cached ids.
    uint64_t category_version();

    void reset_after_fork() noexcept;  // the mutex may be held by a thread that is gone

private:
    std::mutex mutex_;
    std::vector<std::string> domains_{std::string()};
    std::unordered_map<std::string, uint32_t> domain_ids_;
    std::vector<std::string> strings_{std::string()};
    std::map<std::pair<uint32_t, uint32_t>, std::string> categories_;
    uint64_t category_version_ = 0;
};

Names& names() noexcept;

}  // namespace gprof::collector::nvtx
