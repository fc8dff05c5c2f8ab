// PodBuf: the growable array the streaming aggregation keeps its values in.
//
// A 10 M-record summary keeps ~10 M durations and ~5 M call/op entries while it reads. Faulting that memory in
// was a third of the summary's time, and growing std::vectors copied it again: values are kept in 32 bits where
// they fit, and large buffers are anonymous mappings that grow with mremap (no copy). docs/performance.md has the
// measurements (transparent huge pages were tried and not taken).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace gprof::report::aggregation {

constexpr size_t kPage = size_t(2) << 20;      // mapped buffers grow in these steps
constexpr size_t kMapBytes = size_t(4) << 20;  // smaller buffers stay on the heap

// A growable array of trivially copyable values (push_back, index, sort in place).
template <class T> class PodBuf {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    PodBuf() = default;
    PodBuf(const PodBuf&) = delete;
    PodBuf& operator=(const PodBuf&) = delete;
    PodBuf(PodBuf&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_), mapped_(o.mapped_) { o.forget(); }
    PodBuf& operator=(PodBuf&& o) noexcept {
        if (this != &o) {
            release();
            p_ = o.p_, n_ = o.n_, cap_ = o.cap_, mapped_ = o.mapped_;
            o.forget();
        }
        return *this;
    }
    ~PodBuf() { release(); }

    void push_back(const T& v) {
        if (n_ == cap_) grow(n_ + 1);
        p_[n_++] = v;
    }
    void reserve(size_t n) {
        if (n > cap_) grow(n);
    }
    void assign(size_t n, const T& v) {
        n_ = 0;
        reserve(n);
        std::fill(p_, p_ + n, v);
        n_ = n;
    }
    // Room for k more values at end(); added(k) then counts those written there.
    T* room(size_t k) {
        if (n_ + k > cap_) grow(n_ + k);
        return p_ + n_;
    }
    void added(size_t k) { n_ += k; }
    // Gives back the unused capacity of a heap buffer (mapped ones grow in 2 MiB steps: little to gain).
    void shrink() {
        if (mapped_ || cap_ == n_ || !p_) return;
        if (n_ == 0) {
            release();
            return;
        }
        if (void* q = std::realloc(p_, n_ * sizeof(T))) {
            p_ = static_cast<T*>(q);
            cap_ = n_;
        }
    }
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    T* begin() { return p_; }
    T* end() { return p_ + n_; }
    const T* begin() const { return p_; }
    const T* end() const { return p_ + n_; }
    T& operator[](size_t i) { return p_[i]; }
    const T& operator[](size_t i) const { return p_[i]; }
    void release() {
        if (p_) {
            if (mapped_) ::munmap(p_, cap_ * sizeof(T));
            else std::free(p_);
        }
        forget();
    }

private:
    void forget() {
        p_ = nullptr;
        n_ = cap_ = 0;
        mapped_ = false;
    }
    void grow(size_t need) {
        size_t cap = std::max(need, cap_ ? cap_ + cap_ / 2 : size_t(16));
        size_t bytes = cap * sizeof(T);
        if (bytes < kMapBytes) {
            void* q = std::realloc(p_, bytes);
            if (!q) throw std::bad_alloc();
            p_ = static_cast<T*>(q);
            cap_ = cap;
            return;
        }
        bytes = (bytes + kPage - 1) & ~(kPage - 1);
        void* q;
        if (mapped_) {
            q = ::mremap(p_, cap_ * sizeof(T), bytes, MREMAP_MAYMOVE);
            if (q == MAP_FAILED) throw std::bad_alloc();
        } else {
            q = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (q == MAP_FAILED) throw std::bad_alloc();
            if (n_) std::memcpy(q, p_, n_ * sizeof(T));
            std::free(p_);
            mapped_ = true;
        }
        p_ = static_cast<T*>(q);
        cap_ = bytes / sizeof(T);
    }

    T* p_ = nullptr;
    size_t n_ = 0, cap_ = 0;
    bool mapped_ = false;
};

}  // namespace gprof::report::aggregation
