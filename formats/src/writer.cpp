#include "gprof/trace/writer.h"

#include <cerrno>
#include <cstdlib>
#include <unistd.h>

#include "codec.h"

namespace gprof::trace {

using namespace codec;

namespace {

constexpr uint64_t kSealed = ~0ull;

// Short-string hash: 8 bytes a step, multiply-xorshift mixing. Kernel names are hashed once per record, so
// this is on the translation hot path.
uint64_t hash_bytes(const char* s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xFF51AFD7ED558CCDull);
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, s, 8);
        h = (h ^ v) * 0xC4CEB9FE1A85EC53ull;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    std::memcpy(&tail, s, n);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 32);
}

size_t varint_size(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

bool write_all(int fd, const uint8_t* data, size_t size, int& error) noexcept {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            error = errno;
            return false;
        }
        if (n == 0) {
            error = EIO;
            return false;
        }
        data += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

// Room the header record needs: its texts at their length plus 10, the numbers within a fixed 128 bytes.
struct HeaderBound {
    size_t bytes = 128;
    template <class T> void u(const char*, const T&) {}
    template <class T> void s(const char*, const T&) {}
    void text(const char*, const char* t) { bytes += 10 + (t ? std::strlen(t) : 0); }
    void texts(const char* name, const HeaderInfo& h) {
        bytes += varint_size(h.argc);
        for (uint32_t i = 0; i < h.argc; ++i) text(name, h.argv ? h.argv[i] : nullptr);
    }
};

}  // namespace

// Open-addressing table from string contents to ids; the bytes live in one growing arena.
class StringInterner {
public:
    ~StringInterner() {
        std::free(slots_);
        std::free(arena_);
    }

    // Returns the id (found = true) or 0 with found = false when s is new; then call insert().
    StringId find(const char* s, size_t n, uint64_t h) const {
        if (!slots_) return 0;
        for (size_t i = h & mask_;; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.id == 0) return 0;
            if (slot.hash == h && slot.length == n && std::memcmp(arena_ + slot.offset, s, n) == 0) return slot.id;
        }
    }

    StringId insert(const char* s, size_t n, uint64_t h) {
        if ((count_ + 1) * 2 > capacity_ && !grow_slots()) return 0;
        if (arena_used_ + n > arena_capacity_) {
            size_t cap = arena_capacity_ ? arena_capacity_ : 64 * 1024;
            while (cap < arena_used_ + n) cap *= 2;
            auto* p = static_cast<char*>(std::realloc(arena_, cap));
            if (!p) return 0;
            arena_ = p;
            arena_capacity_ = cap;
        }
        std::memcpy(arena_ + arena_used_, s, n);
        StringId id = ++count_;
        place(Slot{h, static_cast<uint32_t>(arena_used_), static_cast<uint32_t>(n), id});
        arena_used_ += n;
        return id;
    }

private:
    struct Slot {
        uint64_t hash;
        uint32_t offset;
        uint32_t length;
        StringId id;  // 0 = empty slot
    };

    void place(const Slot& s) {
        size_t i = s.hash & mask_;
        while (slots_[i].id != 0) i = (i + 1) & mask_;
        slots_[i] = s;
    }

    bool grow_slots() {
        size_t cap = capacity_ ? capacity_ * 2 : 1024;
        auto* fresh = static_cast<Slot*>(std::calloc(cap, sizeof(Slot)));
        if (!fresh) return false;
        Slot* old = slots_;
        size_t old_cap = capacity_;
        slots_ = fresh;
        capacity_ = cap;
        mask_ = cap - 1;
        for (size_t i = 0; i < old_cap; ++i)
            if (old[i].id != 0) place(old[i]);
        std::free(old);
        return true;
    }

    Slot* slots_ = nullptr;
    size_t capacity_ = 0;
    size_t mask_ = 0;
    uint32_t count_ = 0;
    char* arena_ = nullptr;
    size_t arena_used_ = 0;
    size_t arena_capacity_ = 0;
};

TraceWriter::TraceWriter() = default;

TraceWriter::~TraceWriter() {
    if (fd_ >= 0) close();
    std::free(buffer_);
    delete strings_;
}

bool TraceWriter::open(int fd, const HeaderInfo& h, const Options& options) {
    if (fd < 0) {
        error_ = EBADF;
        return false;
    }
    fd_ = fd;
    options_ = options;
    capacity_ = options.chunk_bytes < 4096 ? 4096 : options.chunk_bytes;
    buffer_ = static_cast<uint8_t*>(std::malloc(kChunkHeaderBytes + capacity_));
    strings_ = new (std::nothrow) StringInterner();
    if (!buffer_ || !strings_) {
        error_ = ENOMEM;
        return false;
    }

    uint8_t preamble[kPreambleBytes];
    store_preamble(preamble, Preamble{kFormatMajor, kFormatMinor, h.features});
    if (!write_all(fd_, preamble, sizeof preamble, error_)) return false;
    bytes_written_ += sizeof preamble;

    // The header record: strings inline (the interner is for repeated names).
    HeaderBound bound;
    describe_header(bound, h);
    begin_chunk();
    if (!reserve(bound.bytes + 12)) return false;
    uint8_t* body = buffer_ + kChunkHeaderBytes + 12;  // room for kind + a length of up to 11 bytes
    DeltaState no_deltas;  // the header has no delta-coded fields
    Encoder enc(body, no_deltas);
    describe_header(enc, h);
    uint8_t* p = enc.position();
    size_t body_len = static_cast<size_t>(p - body);
    uint8_t* rec = buffer_ + kChunkHeaderBytes;
    rec[0] = static_cast<uint8_t>(RecordKind::Header);
    uint8_t* after_len = put_varint(rec + 1, body_len);
    std::memmove(after_len, body, body_len);
    used_ = static_cast<size_t>(after_len - rec) + body_len;
    count_ = 1;
    return flush();
}

void TraceWriter::begin_chunk() {
    used_ = 0;
    count_ = 0;
    prev_time_ = 0;
    prev_correlation_ = 0;
    committed_.store(0, std::memory_order_release);
}

bool TraceWriter::reserve(size_t bytes) {
    if (used_ + bytes <= capacity_) return true;
    if (count_ > 0) flush();
    if (bytes <= capacity_) return true;
    auto* p = static_cast<uint8_t*>(std::realloc(buffer_, kChunkHeaderBytes + bytes));
    if (!p) return false;
    buffer_ = p;
    capacity_ = bytes;
    return true;
}

template <RecordStruct R> void TraceWriter::add_record(const R& r) {
    if (fd_ < 0) return;
    if (!reserve(kMaxRecordBytes)) {
        ++records_lost_;
        return;
    }
    uint8_t* rec = buffer_ + kChunkHeaderBytes + used_;
    rec[0] = static_cast<uint8_t>(RecordKindOf<R>::value);
    DeltaState state{prev_time_, prev_correlation_};
    Encoder enc(rec + 2, state);
    describe(enc, const_cast<R&>(r));  // the encoder only reads
    size_t body = static_cast<size_t>(enc.position() - (rec + 2));
    size_t total;
    if (body < 0x80) {
        rec[1] = static_cast<uint8_t>(body);
        total = 2 + body;
    } else {  // rare (backtraces, modules): make room for a two-byte length
        std::memmove(rec + 3, rec + 2, body);
        put_varint(rec + 1, body);
        total = 3 + body;
    }
    prev_time_ = state.prev_time;
    prev_correlation_ = state.prev_correlation;
    used_ += total;
    ++count_;
    ++records_written_;
    committed_.store((static_cast<uint64_t>(count_) << 32) | used_, std::memory_order_release);
}

StringId TraceWriter::intern(const char* s, size_t len) {
    if (fd_ < 0 || !strings_) return 0;
    if (len == 0) return 0;
    if (len > kMaxStringBytes) len = kMaxStringBytes;
    uint64_t h = hash_bytes(s, len);
    if (StringId id = strings_->find(s, len, h)) return id;
    if (!reserve(1 + 3 + 5 + len)) return 0;
    StringId id = strings_->insert(s, len, h);
    if (id == 0) return 0;
    uint8_t* rec = buffer_ + kChunkHeaderBytes + used_;
    rec[0] = static_cast<uint8_t>(RecordKind::String);
    uint8_t* p = put_varint(rec + 1, varint_size(id) + len);
    p = put_varint(p, id);
    std::memcpy(p, s, len);
    used_ = static_cast<size_t>(p + len - (buffer_ + kChunkHeaderBytes));
    ++count_;
    committed_.store((static_cast<uint64_t>(count_) << 32) | used_, std::memory_order_release);
    return id;
}

#define GPROF_TRACE_ADD_RECORD(Kind, number, member, name) template void TraceWriter::add_record(const Kind&);
GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_ADD_RECORD)
#undef GPROF_TRACE_ADD_RECORD

bool TraceWriter::write_chunk(const uint8_t* data, size_t size) {
    int err = 0;
    if (!write_all(fd_, data, size, err)) {
        error_ = err;
        return false;
    }
    bytes_written_ += size;
    return true;
}

bool TraceWriter::flush() {
    if (fd_ < 0) return false;
    if (count_ == 0) return error_ == 0;
    // Claim the chunk: a signal handler that runs from here on finds it sealed and leaves it to us.
    uint64_t seen = committed_.exchange(kSealed, std::memory_order_acq_rel);
    if (seen == kSealed) return false;  // a signal handler already wrote it; the process is going down
    uint8_t* head = buffer_;
    const uint8_t* payload = buffer_ + kChunkHeaderBytes;
    store_u32(head, kChunkMagic);
    store_u32(head + 4, static_cast<uint32_t>(used_));
    store_u32(head + 8, count_);
    store_u32(head + 12, crc32c(payload, used_));
    uint32_t records = count_;
    bool ok = write_chunk(buffer_, kChunkHeaderBytes + used_);
    begin_chunk();
    if (!ok) {
        records_lost_ += records;
        return false;
    }
    if (records_lost_ > records_lost_reported_) {
        // The disk took writes again: say in the trace itself what the gap cost.
        Dropped gap;
        gap.count = records_lost_ - records_lost_reported_;
        gap.source = DropSource::WriteError;
        records_lost_reported_ = records_lost_;
        add(gap);
    }
    return true;
}

bool TraceWriter::finish(Timestamp timestamp) {
    if (fd_ < 0) return false;
    End e;
    e.timestamp = timestamp;
    e.records_written = records_written_;
    e.records_dropped = records_dropped_ + (records_lost_ - records_lost_reported_);
    add_record(e);
    --records_written_;  // End is not counted among the records it reports
    bool ok = flush();
    close();
    return ok && error_ == 0;
}

void TraceWriter::close() {
    if (fd_ < 0) return;
    flush();
    ::close(fd_);
    fd_ = -1;
}

void TraceWriter::flush_from_signal_handler() noexcept {
    if (fd_ < 0 || !buffer_) return;
    uint64_t c = committed_.exchange(kSealed, std::memory_order_acq_rel);
    if (c == kSealed || c == 0) return;  // the writer thread is mid-write, or there is nothing to write
    uint32_t count = static_cast<uint32_t>(c >> 32);
    uint32_t bytes = static_cast<uint32_t>(c & 0xFFFFFFFFu);
    store_u32(buffer_, kChunkMagic);
    store_u32(buffer_ + 4, bytes);
    store_u32(buffer_ + 8, count);
    store_u32(buffer_ + 12, crc32c(buffer_ + kChunkHeaderBytes, bytes));
    int err = 0;
    write_all(fd_, buffer_, kChunkHeaderBytes + bytes, err);  // one write(2): atomic append on O_APPEND
}

bool TraceWriter::holds_only_header(int fd, int64_t pid) {
    uint8_t head[kPreambleBytes + kChunkHeaderBytes];
    Preamble preamble;
    if (::pread(fd, head, sizeof head, 0) != static_cast<ssize_t>(sizeof head) ||
        !load_preamble(head, sizeof head, preamble) || load_u32(head + kPreambleBytes) != kChunkMagic)
        return false;
    uint32_t payload = load_u32(head + kPreambleBytes + 4);
    off_t size = ::lseek(fd, 0, SEEK_END);
    if (size < 0 || static_cast<uint64_t>(size) != sizeof head + uint64_t{payload} || payload < 2 ||
        payload > kMaxChunkPayload)
        return false;
    auto* chunk = static_cast<uint8_t*>(std::malloc(payload));
    if (!chunk) return false;
    bool ours = false;
    if (::pread(fd, chunk, payload, sizeof head) == static_cast<ssize_t>(payload) && chunk[0] == uint8_t(RecordKind::Header)) {
        bool ok = true;
        uint64_t len = 0;
        const uint8_t* body = get_varint(chunk + 1, chunk + payload, len, ok);
        if (ok && len <= static_cast<uint64_t>(chunk + payload - body)) {
            DeltaState no_deltas;
            Decoder d(body, body + len, no_deltas);
            HeaderView header;
            describe_header(d, header);
            ours = d.ok() && header.pid == pid;
        }
    }
    std::free(chunk);
    return ours;
}

}  // namespace gprof::trace
