#include "gprof/trace/writer.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

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

// The Nvtx record's body, byte for byte what describe(Encoder, Nvtx) writes (fields.h; format_tests round-trips
// records of every shape through the generic decoder). NVTX ranges come millions a second from a tight loop, and the
// generic walk of 13 fields was the writer's largest encoding cost per range (bench/collector_nvtx_drain, perf);
// here the fields a plain push/pop leaves at zero go out as one 8-byte store. The caller has reserved
// kMaxRecordBytes, so stores of a whole word past the body's end stay inside the chunk.
uint8_t* encode_nvtx(uint8_t* p, const Nvtx& r, DeltaState& state) {
    p = put_varint(p, zigzag(static_cast<int64_t>(r.start - state.prev_time)));
    state.prev_time = r.start;
    p = put_varint(p, zigzag(static_cast<int64_t>(r.end - r.start)));
    if (r.end_tid == r.tid && r.tid < (uint64_t(1) << 56)) {
        // The same thread ends what it began: its varint (at most 8 bytes) built in a register and stored twice.
        // (Copying the bytes put_varint had just stored stalled on store forwarding: measured, perf annotate.)
        uint64_t word = 0, v = r.tid;
        size_t n = 0;
        while (v >= 0x80) {
            word |= ((v & 0x7F) | 0x80) << (8 * n++);
            v >>= 7;
        }
        word |= v << (8 * n++);
        std::memcpy(p, &word, 8);
        std::memcpy(p + n, &word, 8);
        p += 2 * n;
    } else {
        p = put_varint(p, r.tid);
        p = put_varint(p, r.end_tid);
    }
    p = put_varint(p, r.name);
    const auto type = static_cast<uint8_t>(r.type), payload_type = static_cast<uint8_t>(r.payload_type);
    if ((r.domain | r.color | r.category | r.category_name | r.payload) == 0 && r.depth < 0x80 && type < 0x80 &&
        payload_type < 0x80) {
        // domain, color, category, category_name, payload = 0; depth, type, payload_type in one byte each
        uint64_t tail = (uint64_t{r.depth} << 40) | (uint64_t{type} << 48) | (uint64_t{payload_type} << 56);
        std::memcpy(p, &tail, 8);
        return p + 8;
    }
    p = put_varint(p, r.domain);
    p = put_varint(p, r.color);
    p = put_varint(p, r.category);
    p = put_varint(p, r.category_name);
    p = put_varint(p, r.payload);
    p = put_varint(p, r.depth);
    p = put_varint(p, type);
    return put_varint(p, payload_type);
}

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

    // The text of `id` (for defining it again after the chunk that defined it was lost).
    std::string_view text(StringId id) const {
        if (id == 0 || id > by_id_.size()) return {};
        return std::string_view(arena_ + by_id_[id - 1].first, by_id_[id - 1].second);
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
        try {
            by_id_.emplace_back(static_cast<uint32_t>(arena_used_), static_cast<uint32_t>(n));
        } catch (...) {
            return 0;
        }
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
    std::vector<std::pair<uint32_t, uint32_t>> by_id_;  // [id - 1]: offset and length in the arena
    char* arena_ = nullptr;
    size_t arena_used_ = 0;
    size_t arena_capacity_ = 0;
};

// The descriptor for one file operation: the guard's (checked, maybe opened again) or the writer's own. A guard
// that has none to give is a write error, noted once as the descriptor taken by the program.
struct TraceWriter::FileUse {
    explicit FileUse(TraceWriter& w) noexcept : guard(w.options_.guard), fd(guard ? guard->acquire() : w.fd_) {
        if (fd < 0 && guard && w.error_ == 0) {
            w.error_ = errno ? errno : EBADF;
            w.descriptor_lost_ = true;
        }
    }
    ~FileUse() {
        if (guard) guard->release();
    }
    FileUse(const FileUse&) = delete;
    FileUse& operator=(const FileUse&) = delete;
    DescriptorGuard* guard;
    int fd;
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
    {
        FileUse file(*this);
        if (file.fd < 0 || !write_all(file.fd, preamble, sizeof preamble, error_)) return false;
    }
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
    // The header chunk must fit with the tail reserve: a trace that could not even say it was cut short is not
    // started at all.
    return write_open_chunk(false);
}

void TraceWriter::begin_chunk() {
    used_ = 0;
    count_ = 0;
    chunk_strings_ = 0;
    chunk_string_ids_.clear();
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
    // After a lost chunk, the strings it defined are defined again first; a chunk lost while making room for this
    // record may have held definitions it uses, so that is checked again (a few times at most: on a disk that
    // takes nothing, what follows is lost anyway).
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (!undefined_.empty()) [[unlikely]] define_lost_strings();
        if (!reserve(kMaxRecordBytes)) {
            ++records_lost_;
            return;
        }
        if (undefined_.empty()) [[likely]] break;
    }
    uint8_t* rec = buffer_ + kChunkHeaderBytes + used_;
    rec[0] = static_cast<uint8_t>(RecordKindOf<R>::value);
    DeltaState state{prev_time_, prev_correlation_};
    size_t body;
    if constexpr (std::is_same_v<R, Nvtx>) {
        body = static_cast<size_t>(encode_nvtx(rec + 2, r, state) - (rec + 2));
    } else {
        Encoder enc(rec + 2, state);
        describe(enc, const_cast<R&>(r));  // the encoder only reads
        body = static_cast<size_t>(enc.position() - (rec + 2));
    }
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
    define_string(id, s, len);
    return id;
}

void TraceWriter::define_string(StringId id, const char* s, size_t len) {
    uint8_t* rec = buffer_ + kChunkHeaderBytes + used_;
    rec[0] = static_cast<uint8_t>(RecordKind::String);
    uint8_t* p = put_varint(rec + 1, varint_size(id) + len);
    p = put_varint(p, id);
    std::memcpy(p, s, len);
    used_ = static_cast<size_t>(p + len - (buffer_ + kChunkHeaderBytes));
    ++count_;
    ++chunk_strings_;
    try {
        chunk_string_ids_.push_back(id);
    } catch (...) {
    }
    committed_.store((static_cast<uint64_t>(count_) << 32) | used_, std::memory_order_release);
}

void TraceWriter::define_lost_strings() {
    // Defined again under the same ids, before any record that uses them: the callers' cached ids stay valid.
    std::vector<StringId> pending;
    pending.swap(undefined_);
    for (StringId id : pending) {
        std::string_view t = strings_ ? strings_->text(id) : std::string_view();
        if (!reserve(1 + 3 + 5 + t.size())) continue;
        define_string(id, t.data(), t.size());
    }
}

#define GPROF_TRACE_ADD_RECORD(Kind, number, member, name) template void TraceWriter::add_record(const Kind&);
GPROF_TRACE_RECORD_KINDS(GPROF_TRACE_ADD_RECORD)
#undef GPROF_TRACE_ADD_RECORD

namespace {

// Whether the file may grow to `size` bytes: a write past RLIMIT_FSIZE would send SIGXFSZ, which ends the program.
bool within_file_size_limit(uint64_t size) noexcept {
    rlimit limit{};
    return ::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
           size <= static_cast<uint64_t>(limit.rlim_cur);
}

}  // namespace

bool TraceWriter::make_room(int fd, size_t bytes) {
    uint64_t want = bytes_written_ + bytes + kTailReserveBytes;
    if (!can_preallocate_ || want <= allocated_to_) return true;
    // fallocate, not posix_fallocate: the glibc fallback would write zeros into a file opened O_APPEND.
    if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(bytes_written_),
                    static_cast<off_t>(want - bytes_written_)) == 0) {
        allocated_to_ = want;
        return true;
    }
    int err = errno;
    if (err == EINTR) return make_room(fd, bytes);
    if (err == ENOSPC || err == EDQUOT || err == EFBIG) {
        if (error_ == 0) error_ = err;  // the chunk does not fit beside the reserve: not written, counted
        return false;
    }
    // EOPNOTSUPP (a filesystem without it), ESPIPE (a pipe), ENODEV, ...: write, and cut back a torn write instead.
    can_preallocate_ = false;
    return true;
}

bool TraceWriter::write_chunk(const uint8_t* data, size_t size, bool final) {
    // Under RLIMIT_FSIZE the tail reserve is kept below the limit too, so that finish() never passes it.
    if (!within_file_size_limit(bytes_written_ + size + (final ? 0 : kTailReserveBytes))) {
        if (error_ == 0) error_ = EFBIG;
        return false;
    }
    FileUse file(*this);
    if (file.fd < 0) return false;  // the program took the descriptor and the trace could not be opened again
    if (!final && !make_room(file.fd, size)) return false;
    size_t done = 0;
    while (done < size) {
        ssize_t n = ::write(file.fd, data + done, size - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (error_ == 0) error_ = n < 0 ? errno : EIO;
        // A chunk written in part would make every later chunk unreachable for the reader: cut it off.
        if (done > 0 && ::ftruncate(file.fd, static_cast<off_t>(bytes_written_)) != 0) {
            bytes_written_ += done;  // could not cut: the reader will skip the torn tail with a warning
            can_preallocate_ = false;
        }
        return false;
    }
    bytes_written_ += size;
    if (bytes_written_ > allocated_to_) allocated_to_ = bytes_written_;
    return true;
}

bool TraceWriter::write_open_chunk(bool final) {
    // Claim the chunk: a signal handler that runs from here on finds it sealed and leaves it to us.
    uint64_t seen = committed_.exchange(kSealed, std::memory_order_acq_rel);
    if (seen == kSealed) return false;  // a signal handler already wrote it; the process is going down
    uint8_t* head = buffer_;
    const uint8_t* payload = buffer_ + kChunkHeaderBytes;
    store_u32(head, kChunkMagic);
    store_u32(head + 4, static_cast<uint32_t>(used_));
    store_u32(head + 8, count_);
    store_u32(head + 12, crc32c(payload, used_));
    uint64_t offset = bytes_written_;
    uint32_t records = count_ - chunk_strings_;
    bool ok = write_chunk(buffer_, kChunkHeaderBytes + used_, final);
    if (!ok) {
        records_lost_ += records;
        bytes_lost_ += kChunkHeaderBytes + used_;
        // The strings this chunk defined are not in the file: define them again before the next record.
        try {
            undefined_.insert(undefined_.end(), chunk_string_ids_.begin(), chunk_string_ids_.end());
        } catch (...) {
        }
    }
    if (ok) last_chunk_string_ids_.swap(chunk_string_ids_);
    begin_chunk();
    if (!ok) return false;
    last_chunk_offset_ = offset;
    last_chunk_records_ = records;
    return true;
}

bool TraceWriter::flush() {
    if (fd_ < 0) return false;
    if (count_ == 0) return error_ == 0;
    if (!write_open_chunk(false)) return false;
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

void TraceWriter::add_end_records(Timestamp timestamp, uint32_t ended_by_signal) {
    if (records_lost_ > records_lost_reported_) {
        Dropped gap;
        gap.timestamp = timestamp;
        gap.count = records_lost_ - records_lost_reported_;
        gap.source = DropSource::WriteError;
        records_lost_reported_ = records_lost_;
        add(gap);
    }
    if (records_lost_ > 0) {
        // One line for the reports: what failed and what it cost. Never allocates more than this once.
        bool full = error_ == ENOSPC || error_ == EDQUOT;
        std::string cause = full ? std::string(error_ == EDQUOT ? "disk quota exceeded" : "disk full") : "write error";
        if (descriptor_lost_)  // error_ is then why the trace could not be opened again
            cause = "the program closed or replaced the trace's descriptor and the trace could not be opened again";
        std::string text = cause +
                           ": " + std::to_string(records_lost_) + " records could not be written to this trace (" +
                           (bytes_lost_ ? std::to_string(bytes_lost_) + " bytes; " : std::string()) +
                           std::strerror(error_ ? error_ : EIO) + ")";
        Status st;
        st.timestamp = timestamp;
        st.code = error_;
        st.component = Component::Writer;
        st.level = StatusLevel::Error;
        st.message = intern(text.data(), text.size());
        add(st);
    }
    End e;
    e.timestamp = timestamp;
    e.records_written = records_written_;
    e.records_dropped = records_dropped_;
    e.signal = ended_by_signal;
    add_record(e);
    --records_written_;  // End is not counted among the records it reports
}

bool TraceWriter::finish(Timestamp timestamp, uint32_t ended_by_signal) {
    if (fd_ < 0) return false;
    // Records still in the open chunk go out as any other chunk: they may not take the tail reserve.
    if (count_ > 0) write_open_chunk(false);
    const uint64_t lost = records_lost_, reported = records_lost_reported_, dropped = records_dropped_;
    const uint64_t lost_bytes = bytes_lost_;
    add_end_records(timestamp, ended_by_signal);
    bool ok = write_open_chunk(true);
    auto cut_to = [this](uint64_t offset) {
        FileUse file(*this);
        return file.fd >= 0 && ::ftruncate(file.fd, static_cast<off_t>(offset)) == 0;
    };
    if (!ok && (error_ == ENOSPC || error_ == EDQUOT) && !can_preallocate_ && last_chunk_records_ > 0 &&
        last_chunk_offset_ > 0 && cut_to(last_chunk_offset_)) {
        // No reserve on this filesystem: give up the last data chunk so that the End, and the count of what was
        // lost (that chunk included), fit where it was.
        records_lost_ = lost + last_chunk_records_;
        bytes_lost_ = lost_bytes + (bytes_written_ - last_chunk_offset_);
        records_lost_reported_ = reported;
        records_dropped_ = dropped;
        bytes_written_ = last_chunk_offset_;
        last_chunk_records_ = 0;
        try {  // the strings that chunk defined are gone with it
            undefined_.insert(undefined_.end(), last_chunk_string_ids_.begin(), last_chunk_string_ids_.end());
        } catch (...) {
        }
        add_end_records(timestamp, ended_by_signal);
        ok = write_open_chunk(true);
    }
    close();
    return ok && error_ == 0;
}

void TraceWriter::close() {
    if (fd_ < 0) return;
    if (count_ > 0) write_open_chunk(false);
    // Give back what was allocated beyond the end for the reserve.
    if (allocated_to_ > bytes_written_) {
        FileUse file(*this);
        if (file.fd >= 0)
            ::fallocate(file.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(bytes_written_),
                        static_cast<off_t>(allocated_to_ - bytes_written_));
    }
    if (options_.guard) options_.guard->close();
    else ::close(fd_);
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
    // One write(2): an atomic append on O_APPEND. If the disk takes only part of it, cut the part off again
    // (ftruncate is async-signal-safe); the file then ends with its last whole chunk.
    if (!within_file_size_limit(bytes_written_ + kChunkHeaderBytes + bytes)) return;  // SIGXFSZ would follow
    DescriptorGuard* guard = options_.guard;  // no FileUse: it would note an error, and this runs in a handler
    int fd = guard ? guard->acquire() : fd_;
    if (fd >= 0 && !write_all(fd, buffer_, kChunkHeaderBytes + bytes, err)) {
        [[maybe_unused]] int cut = ::ftruncate(fd, static_cast<off_t>(bytes_written_));
    }
    if (guard) guard->release();
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
