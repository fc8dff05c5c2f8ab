#include "gprof/trace/reader.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "gprof/trace/names.h"
#include "record_step.h"

namespace gprof::trace {

using namespace codec;

namespace {

using record_step::kMaxDetailedWarnings;

std::string version_text(uint16_t major, uint16_t minor) {
    return std::to_string(major) + "." + std::to_string(minor);
}

// A file with no size (procfs, sysfs) is read up to this much; a trace that large is never such a file.
constexpr size_t kMaxUnsizedRead = size_t(64) << 20;

// Reads a regular file that could not be mapped, at most `limit` bytes; false with errno set on a read error, or
// with errno = EFBIG when there was more than `limit`.
bool read_all(int fd, size_t limit, std::vector<uint8_t>& out) {
    uint8_t block[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd, block, sizeof block);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) return true;
        if (static_cast<size_t>(n) > limit - out.size()) {  // keep what fits: a file that grew reads to its size
            out.insert(out.end(), block, block + (limit - out.size()));
            errno = EFBIG;
            return false;
        }
        out.insert(out.end(), block, block + n);
    }
}

// What a path that is not a regular file is, for the message that refuses it.
const char* file_type_name(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

}  // namespace

TraceReader::TraceReader(const std::string& path) : path_(path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer that may never come (it is refused just below).
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        throw TraceError("cannot open trace '" + path + "': " + std::strerror(e) +
                         (e == ELOOP ? " (a symbolic link loop)" : ""));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        throw TraceError("cannot read trace '" + path + "': " + std::strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw TraceError("'" + path + "' is a directory, not a trace file");
    }
    // Traces are files: a FIFO could block forever and /dev/zero never ends, so anything else is refused.
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw TraceError("'" + path + "' is " + file_type_name(st.st_mode) +
                         ", not a trace file (gprof-report reads trace files: save the stream to a file first)");
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void* m = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            data_ = static_cast<const uint8_t*>(m);
            size_ = static_cast<size_t>(st.st_size);
            mapped_ = true;
            ::madvise(m, size_, MADV_SEQUENTIAL);
        }
    }
    if (!mapped_) {
        size_t limit = st.st_size > 0 ? static_cast<size_t>(st.st_size) : kMaxUnsizedRead;
        if (!read_all(fd, limit, owned_) && !(errno == EFBIG && st.st_size > 0)) {  // a file that grew: its size
            int e = errno;
            ::close(fd);
            throw TraceError(e == EFBIG ? "'" + path + "' has no size and holds more than " +
                                              std::to_string(kMaxUnsizedRead >> 20) + " MiB: not a trace file"
                                        : "cannot read trace '" + path + "': " + std::strerror(e));
        }
        data_ = owned_.data();
        size_ = owned_.size();
    }
    ::close(fd);
    parse_start();
}

TraceReader::TraceReader(const std::string& name, std::vector<uint8_t> bytes) : path_(name), owned_(std::move(bytes)) {
    data_ = owned_.data();
    size_ = owned_.size();
    parse_start();
}

void TraceReader::parse_start() {
    const std::string& path = path_;
    stats_.file_bytes = size_;
    if (size_ == 0) throw TraceError("'" + path + "' is empty: not a gprof-run trace");
    Preamble preamble;
    if (!load_preamble(data_, size_, preamble))
        throw TraceError("'" + path + "' is not a gprof-run trace (no GPROFTRC signature at its start)");
    header_.version_major = preamble.major;
    header_.version_minor = preamble.minor;
    header_.features = preamble.features;
    std::string theirs = version_text(header_.version_major, header_.version_minor);
    std::string ours = version_text(kFormatMajor, kFormatMinor);
    if (header_.version_major > kFormatMajor)
        throw TraceError("'" + path + "' uses trace format " + theirs + ", newer than this reader's " + ours +
                         ": use a gprof-report at least as new as the gprof-run that wrote it");
    if (header_.version_major < 1)
        throw TraceError("'" + path + "' uses trace format " + theirs + ", older than any this reader supports (" +
                         ours + ")");
    if ((header_.features & kFeatureRequiredMask) != 0) {
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%04x", header_.features & kFeatureRequiredMask);
        throw TraceError("'" + path + "' needs format features " + hex + " that this reader (format " + ours +
                         ") does not know: update gprof-report");
    }
    if (header_.version_minor > kFormatMinor)
        warn("trace format " + theirs + " is newer than this reader's " + ours +
             ": fields and record kinds added since are skipped");
    offset_ = kPreambleBytes;

    // The header record opens the first chunk.
    if (!next_chunk())
        throw TraceError("'" + path + "' holds no readable header: the process ended before the collector wrote it" +
                         (warnings_.empty() ? std::string() : " (" + warnings_.back() + ")"));
    if (chunk_end_ - cursor_ < 2 || *cursor_ != static_cast<uint8_t>(RecordKind::Header))
        throw TraceError("'" + path + "' is damaged: its first record is not the trace header");
    bool ok = true;
    uint64_t len = 0;
    const uint8_t* p = get_varint(cursor_ + 1, chunk_end_, len, ok);
    if (!ok || len > static_cast<uint64_t>(chunk_end_ - p)) throw TraceError("'" + path + "': trace header is damaged");
    const uint8_t* end = p + len;
    DeltaState no_deltas;  // the header has no delta-coded fields
    Decoder d(p, end, no_deltas);
    describe_header(d, header_);
    ok = d.ok();
    if (!ok) throw TraceError("'" + path + "': trace header is damaged");
    cursor_ = end;
}

TraceReader::~TraceReader() {
    if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

// Reading only moves forward (resync included): pages of a mapped file before `upto` are not looked at again.
// Dropping them from this process's page tables keeps a large trace's resident size small; the page cache keeps
// the data, so nothing is read twice.
void TraceReader::release_behind(size_t upto) {
    constexpr size_t kStep = size_t(32) << 20;
    if (!mapped_ || upto < released_ + kStep) return;
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    size_t end = upto / page * page;
    if (end > released_) ::madvise(const_cast<uint8_t*>(data_) + released_, end - released_, MADV_DONTNEED);
    released_ = end;
}

void TraceReader::warn(std::string message) { warnings_.push_back(std::move(message)); }

std::string_view TraceReader::string(StringId id) const {
    if (id == 0) return {};
    if (id < strings_.size() && !strings_[id].empty()) return strings_[id];
    placeholder_ = "<string #" + std::to_string(id) + ">";
    return placeholder_;
}

// Finds the next offset at or after `from` where an intact chunk starts. Returns false when there is none.
bool TraceReader::resync(size_t from) {
    for (size_t q = from; q + kChunkHeaderBytes <= size_; ++q) {
        const void* hit = std::memchr(data_ + q, 'G', size_ - q);
        if (!hit) break;
        q = static_cast<size_t>(static_cast<const uint8_t*>(hit) - data_);
        if (q + kChunkHeaderBytes > size_) break;
        if (load_u32(data_ + q) != kChunkMagic) continue;
        uint32_t psize = load_u32(data_ + q + 4);
        if (psize > size_ - q - kChunkHeaderBytes) continue;
        if (crc32c(data_ + q + kChunkHeaderBytes, psize) != load_u32(data_ + q + 12)) continue;
        uint64_t skipped = q - offset_;
        stats_.corrupt_bytes += skipped;
        ++stats_.corrupt_chunks;
        if (stats_.corrupt_chunks <= kMaxDetailedWarnings)
            warn(std::to_string(skipped) + " damaged bytes at offset " + std::to_string(offset_) +
                 " skipped (not a valid chunk); reading resumes at offset " + std::to_string(q));
        offset_ = q;
        return true;
    }
    return false;
}

bool TraceReader::next_chunk() {
    cursor_ = chunk_end_ = nullptr;
    while (offset_ < size_) {
        size_t remaining = size_ - offset_;
        uint32_t psize = remaining >= kChunkHeaderBytes ? load_u32(data_ + offset_ + 4) : 0;
        bool magic_ok = remaining >= 4 && load_u32(data_ + offset_) == kChunkMagic;
        bool cut = remaining < kChunkHeaderBytes || (magic_ok && psize <= kMaxChunkPayload &&
                                                     psize > remaining - kChunkHeaderBytes);
        if (cut && !resync(offset_ + 1)) {
            stats_.truncated_bytes = remaining;
            warn("trace cut at byte " + std::to_string(size_) + ": the last " + std::to_string(remaining) +
                 " bytes are an incomplete chunk and were discarded; the " + std::to_string(stats_.chunks) +
                 " chunks before them are intact");
            offset_ = size_;
            return false;
        }
        if (cut) continue;  // a damaged size field, not the end of the file: resync moved offset_
        if (!magic_ok || psize > kMaxChunkPayload) {
            if (!resync(offset_ + 1)) {
                stats_.corrupt_bytes += remaining;
                ++stats_.corrupt_chunks;
                warn(std::to_string(remaining) + " damaged bytes at the end of the trace (offset " +
                     std::to_string(offset_) + ") were skipped");
                offset_ = size_;
                return false;
            }
            continue;
        }
        const uint8_t* payload = data_ + offset_ + kChunkHeaderBytes;
        uint32_t count = load_u32(data_ + offset_ + 8);
        if (crc32c(payload, psize) != load_u32(data_ + offset_ + 12)) {
            ++stats_.corrupt_chunks;
            stats_.corrupt_bytes += kChunkHeaderBytes + psize;
            if (stats_.corrupt_chunks <= kMaxDetailedWarnings)
                warn("chunk at offset " + std::to_string(offset_) + " fails its checksum: its " +
                     std::to_string(count) + " records were skipped");
            offset_ += kChunkHeaderBytes + psize;
            continue;
        }
        cursor_ = payload;
        chunk_end_ = payload + psize;
        offset_ += kChunkHeaderBytes + psize;
        release_behind(offset_ - kChunkHeaderBytes - psize);
        prev_time_ = 0;
        prev_correlation_ = 0;
        ++stats_.chunks;
        ++chunk_index_;
        return true;
    }
    return false;
}

void TraceReader::finish_file() {
    if (done_) return;
    done_ = true;
    if (stats_.corrupt_chunks > kMaxDetailedWarnings)
        warn(std::to_string(stats_.corrupt_chunks) + " damaged regions in all (" +
             std::to_string(stats_.corrupt_bytes) + " bytes) were skipped");
    if (stats_.malformed_records > kMaxDetailedWarnings)
        warn(std::to_string(stats_.malformed_records) + " malformed records in all were skipped");
    if (stats_.out_of_range_records > kMaxDetailedWarnings)
        warn(std::to_string(stats_.out_of_range_records) +
             " records in all named string ids beyond any the file could define, and were skipped");
    for (int k = 0; k < 256; ++k) {
        if (unknown_kind_counts_[k] == 0) continue;
        warn(std::to_string(unknown_kind_counts_[k]) + " records of unknown kind " + std::to_string(k) +
             " skipped (written by format " + version_text(header_.version_major, header_.version_minor) +
             ", this reader knows " + version_text(kFormatMajor, kFormatMinor) + ")");
    }
    if (!stats_.has_end)
        warn("the trace has no end record: the process did not finish normally (crash, kill, or still running); "
             "what it recorded after its last complete chunk is lost");
}

bool TraceReader::next_chunk_span(ChunkSpan& out) {
    // The first chunk's records after the header are still to be handed out; then chunk by chunk.
    if (!(cursor_ && cursor_ < chunk_end_) && !next_chunk()) return false;
    out.begin = cursor_;
    out.end = chunk_end_;
    out.end_offset = offset_;
    out.begin_offset = static_cast<uint64_t>(cursor_ - data_);
    cursor_ = chunk_end_;
    return true;
}

void TraceReader::finish_chunks(const ChunkTally& tally) {
    stats_.records += tally.records;
    stats_.unknown_records += tally.unknown_records;
    for (int k = 0; k < 256; ++k) unknown_kind_counts_[k] += tally.unknown_kind_counts[k];
    stats_.has_end = stats_.has_end || tally.has_end;
    stats_.malformed_records += tally.malformed_records;
    stats_.out_of_range_records += tally.out_of_range_records;
    for (const auto& w : tally.warnings) warn(w);
    finish_file();
}

// The record step itself is record_step.h's, shared with ChunkDecoder::next(); this walks the chunks and keeps the
// string definitions.
bool TraceReader::next(Record& out) {
    record_step::Tally<ReadStats> tally{stats_, unknown_kind_counts_, warnings_};
    record_step::StringDefinition def;
    for (;;) {
        if (cursor_ == nullptr || cursor_ >= chunk_end_) {
            if (!next_chunk()) {
                finish_file();
                return false;
            }
            continue;
        }
        static constexpr uint64_t kFileStart = 0;  // data_ is the file's first byte
        const uint64_t chunk_end_offset = offset_;  // next_chunk() left offset_ just past this chunk
        record_step::ChunkWalk walk{cursor_, chunk_end_, prev_time_, prev_correlation_, data_, kFileStart, chunk_end_offset};
        switch (record_step::next_in_chunk(walk, tally, out, def)) {
            case record_step::Found::Record: return true;
            case record_step::Found::String:  // kept here, not surfaced
                if (strings_.size() <= def.id) strings_.resize(static_cast<size_t>(def.id) + 1);
                strings_[def.id] = def.text;
                continue;
            case record_step::Found::EndOfChunk: continue;
        }
    }
}

}  // namespace gprof::trace
