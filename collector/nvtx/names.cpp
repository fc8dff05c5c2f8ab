#include "nvtx/names.h"

#include <new>

namespace gprof::collector::nvtx {

uint32_t Names::domain(std::string_view name) {
    std::lock_guard lock(mutex_);
    std::string key(name);
    auto it = domain_ids_.find(key);
    if (it != domain_ids_.end()) return it->second;
    auto id = static_cast<uint32_t>(domains_.size());
    domains_.push_back(key);
    domain_ids_.emplace(std::move(key), id);
    return id;
}

uint32_t Names::register_string(uint32_t /*domain*/, std::string_view text) {
    // Ids are global rather than per domain: a handle is then meaningful on its own.
    std::lock_guard lock(mutex_);
    auto id = static_cast<uint32_t>(strings_.size());
    strings_.emplace_back(text);
    return id;
}

void Names::name_category(uint32_t domain, uint32_t category, std::string_view name) {
    std::lock_guard lock(mutex_);
    categories_[{domain, category}] = std::string(name);
    ++category_version_;
}

bool Names::domain_name(uint32_t id, std::string& out) {
    std::lock_guard lock(mutex_);
    if (id >= domains_.size()) return false;
    out = domains_[id];
    return true;
}

bool Names::string_text(uint32_t id, std::string& out) {
    std::lock_guard lock(mutex_);
    if (id == 0 || id >= strings_.size()) return false;
    out = strings_[id];
    return true;
}

bool Names::category_name(uint32_t domain, uint32_t category, std::string& out) {
    std::lock_guard lock(mutex_);
    auto it = categories_.find({domain, category});
    if (it == categories_.end()) return false;
    out = it->second;
    return true;
}

uint64_t Names::category_version() {
    std::lock_guard lock(mutex_);
    return category_version_;
}

void Names::reset_after_fork() noexcept {
    // The child keeps the names (handles the app holds stay valid); only the lock is made fresh.
    new (&mutex_) std::mutex();
}

Names& names() noexcept {
    static Names* instance = new Names();  // leaked: NVTX calls may come during exit
    return *instance;
}

}  // namespace gprof::collector::nvtx
