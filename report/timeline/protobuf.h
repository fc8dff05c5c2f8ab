// Protobuf's wire format as the Perfetto encoder writes it (perfetto.cpp): the field numbers it uses (Perfetto's
// protos/perfetto/trace/..., the subset in perfetto_trace_subset.proto) and Proto, a message written field by field
// into a buffer. Varints are the trace format's own (gprof/trace/varint.h): protobuf's are the same LEB128.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "gprof/trace/varint.h"
#include "output/text.h"

namespace gprof::report::timeline::protobuf {

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2 };

// Field numbers (protos/perfetto/trace/... in Perfetto; perfetto_trace_subset.proto here).
namespace f {
constexpr uint32_t kTracePacket = 1;
// TracePacket
constexpr uint32_t kTimestamp = 8, kSequenceId = 10, kSequenceFlags = 13, kInternedData = 12, kTrackEvent = 11,
                   kTrackDescriptor = 60, kClockSnapshot = 6, kDefaults = 59, kFirstPacketOnSequence = 87;
// TracePacketDefaults / TrackEventDefaults
constexpr uint32_t kDefaultsClockId = 58, kDefaultsTrackEvent = 11, kDefaultsTrackUuid = 11;
// ClockSnapshot / Clock
constexpr uint32_t kClocks = 1, kPrimaryTraceClock = 2, kClockId = 1, kClockTimestamp = 2, kClockIncremental = 3;
// TrackDescriptor
constexpr uint32_t kUuid = 1, kName = 2, kProcess = 3, kThread = 4, kParentUuid = 5, kCounter = 8,
                   kChildOrdering = 11, kSiblingOrderRank = 12, kSiblingMergeBehavior = 15;
// ProcessDescriptor / ThreadDescriptor / CounterDescriptor
constexpr uint32_t kPid = 1, kProcessName = 6, kTid = 2, kThreadName = 5, kCounterUnit = 3;
// TrackEvent
constexpr uint32_t kType = 9, kEventNameIid = 10, kCategoryIids = 3, kDebugAnnotations = 4, kCounterValue = 30,
                   kDoubleCounterValue = 44, kFlowIds = 47, kTerminatingFlowIds = 48;
// DebugAnnotation
constexpr uint32_t kAnnNameIid = 1, kAnnName = 10, kBool = 2, kUint = 3, kInt = 4, kDouble = 5, kString = 6,
                   kStringIid = 17, kDictEntries = 11, kArrayValues = 12;
// InternedData and its entries ({iid 1, name/str 2})
constexpr uint32_t kEventCategories = 1, kEventNames = 2, kAnnotationNames = 3, kAnnotationStringValues = 29,
                   kIid = 1, kIidName = 2;
}  // namespace f

constexpr uint32_t kSeqIncrementalStateCleared = 1, kSeqNeedsIncrementalState = 2;
constexpr uint32_t kClockRealtime = 1, kClockBoottime = 6, kClockIncremental = 64;  // 64: sequence-scoped
constexpr uint32_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounterEvent = 4;
constexpr uint32_t kChildOrderingExplicit = 3, kMergeNone = 2, kUnitSizeBytes = 3;

class Proto {
public:
    void varint(uint64_t v) {
        uint8_t b[10];
        buf_.append(reinterpret_cast<const char*>(b), static_cast<size_t>(trace::varint::put(b, v) - b));
    }
    void key(uint32_t field, Wire wire) { varint((static_cast<uint64_t>(field) << 3) | wire); }
    void uint(uint32_t field, uint64_t v) {
        key(field, kVarint);
        varint(v);
    }
    void sint(uint32_t field, int64_t v) { uint(field, static_cast<uint64_t>(v)); }  // int64: two's complement
    void fixed64(uint32_t field, uint64_t v) {
        key(field, kFixed64);
        char b[8];
        for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
        buf_.append(b, 8);
    }
    void dbl(uint32_t field, double v) {
        uint64_t bits;
        std::memcpy(&bits, &v, 8);
        fixed64(field, bits);
    }
    // Every length-delimited field written here is text (names, annotation strings): kept valid UTF-8, invalid
    // bytes replaced by U+FFFD, as the JSON timeline does.
    void bytes(uint32_t field, std::string_view s) {
        if (!is_valid_utf8(s)) {
            std::string fixed = valid_utf8(s);
            bytes(field, fixed);
            return;
        }
        key(field, kLength);
        varint(s.size());
        buf_.append(s.data(), s.size());
    }
    // A nested message: begin() writes the key and a one-byte length placeholder; end() writes the length,
    // moving the body when it needs more bytes (most bodies here are under 128 bytes).
    size_t begin(uint32_t field) {
        key(field, kLength);
        buf_.push_back(0);
        return buf_.size();
    }
    void end(size_t body) {
        size_t len = buf_.size() - body;
        if (len < 0x80) {
            buf_[body - 1] = static_cast<char>(len);
            return;
        }
        uint8_t tmp[10];
        size_t n = static_cast<size_t>(trace::varint::put(tmp, len) - tmp);
        buf_.insert(body - 1, n - 1, '\0');
        std::memcpy(&buf_[body - 1], tmp, n);
    }
    std::string& buf() { return buf_; }
    size_t size() const { return buf_.size(); }

private:
    std::string buf_;
};

}  // namespace gprof::report::timeline::protobuf
