#include "event_columns.h"

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#include "gprof/trace/fields.h"
#include "gprof/trace/names.h"
#include "model/names.h"

namespace gprof::python {
namespace {

namespace trace = gprof::trace;
using report::StreamContext;

// ----- enumerations: their display names (gprof/trace/names.h, the names the JSON reports use) ----------------
// A record field of an enumeration type without an overload here does not compile (see EnumText below).
std::string_view enum_text(trace::ApiDomain v) { return trace::api_domain_name(v); }
std::string_view enum_text(trace::MemcpyKind v) { return trace::memcpy_kind_name(v); }
std::string_view enum_text(trace::MemoryKind v) { return trace::memory_kind_name(v); }
std::string_view enum_text(trace::SyncType v) { return trace::sync_type_name(v); }
std::string_view enum_text(trace::NvtxType v) { return trace::nvtx_type_name(v); }
std::string_view enum_text(trace::NvtxPayload v) { return trace::nvtx_payload_name(v); }
std::string_view enum_text(trace::DropSource v) { return trace::drop_source_name(v); }
std::string_view enum_text(trace::CaptureAction v) { return trace::capture_action_name(v); }
std::string_view enum_text(trace::CaptureReason v) { return trace::capture_reason_name(v); }
std::string_view enum_text(trace::Component v) { return trace::component_name(v); }
std::string_view enum_text(trace::StatusLevel v) { return trace::status_level_name(v); }
std::string_view enum_text(trace::MemoryOp v) { return trace::memory_op_name(v); }
std::string_view enum_text(trace::MemoryPoolOp v) { return trace::memory_pool_op_name(v); }
std::string_view enum_text(trace::MemoryPoolType v) { return trace::memory_pool_type_name(v); }
std::string_view enum_text(trace::ExecImage v) { return trace::exec_image_name(v); }

template <class E>
concept EnumWithText = std::is_enum_v<E> && requires(E e) { enum_text(e); };

// ----- a categorical column: texts interned into codes --------------------------------------------------------
struct Categories {
    std::vector<std::string> texts;
    std::unordered_map<std::string, int32_t> code_of;
    int32_t code(std::string_view text) {
        auto [it, added] = code_of.try_emplace(std::string(text), static_cast<int32_t>(texts.size()));
        if (added) texts.emplace_back(text);
        return it->second;
    }
};

// ----- the column layout of a kind, from its field list -----------------------------------------------------
enum class Source : uint8_t { Pid, Host, Time, End, Plain, String, Enum, FrameCount, Bytes };

struct ColumnSpec {
    std::string name;
    Source source;
    ColumnData empty;  // an empty vector of the column's element type
};

// Walks a field list once to name the columns and their types (the visitor of fields.h's describe()).
struct Layout {
    std::vector<ColumnSpec> specs;
    template <class T> void plain(const char* n) { specs.push_back({n, Source::Plain, std::vector<T>{}}); }
    template <class T> void u(const char* n, T&) {
        if constexpr (std::is_enum_v<T>) {
            static_assert(EnumWithText<T>, "a record field's enumeration needs an enum_text overload (names.h)");
            specs.push_back({n, Source::Enum, std::vector<int32_t>{}});
        } else {
            plain<T>(n);
        }
    }
    template <class T> void s(const char* n, T&) { plain<T>(n); }
    void str(const char* n, trace::StringId&) { specs.push_back({n, Source::String, std::vector<int32_t>{}}); }
    void time(const char* n, trace::Timestamp&) { specs.push_back({n, Source::Time, std::vector<int64_t>{}}); }
    void end(const char* n, trace::Timestamp&, trace::Timestamp) {
        specs.push_back({n, Source::End, std::vector<int64_t>{}});
    }
    void corr(const char* n, uint32_t&) { plain<uint32_t>(n); }
    // Frames (stacks of return addresses or Python frame ids) are not columnar: their count is.
    void frames(const char*, uint64_t*, uint32_t&, uint32_t) {
        specs.push_back({"frame_count", Source::FrameCount, std::vector<uint32_t>{}});
    }
    // A GPU metric sample's values are not columnar either (their names are its set's): their count is.
    void reals(const char*, double*, uint32_t&, uint32_t) {
        specs.push_back({"value_count", Source::FrameCount, std::vector<uint32_t>{}});
    }
    void bytes(const char* n, uint8_t*, uint32_t&, uint32_t) {  // a build id: as hex text
        specs.push_back({n, Source::Bytes, std::vector<int32_t>{}});
    }
};

template <class R> std::vector<ColumnSpec> layout_of() {
    Layout l;
    l.specs.push_back({"pid", Source::Pid, std::vector<int64_t>{}});
    l.specs.push_back({"host", Source::Host, std::vector<int32_t>{}});
    R r{};
    trace::describe(l, r);
    return std::move(l.specs);
}

// ----- one kind's table, filled record by record ----------------------------------------------------------------
struct TableBase {
    virtual ~TableBase() = default;
    virtual void begin_trace(const StreamContext& ctx) = 0;
    virtual void add(const StreamContext& ctx, const trace::Record& r) = 0;
    virtual EventTable finish() = 0;
};

template <class R> class KindTable final : public TableBase {
public:
    KindTable(const std::optional<std::vector<std::string>>& wanted) : specs_(layout_of<R>()) {
        slot_.assign(specs_.size(), -1);
        cats_.resize(specs_.size());
        string_codes_.resize(specs_.size());
        if (!wanted) {
            for (size_t f = 0; f < specs_.size(); ++f) add_column(f);
            return;
        }
        for (const std::string& name : *wanted) {
            auto it = std::find_if(specs_.begin(), specs_.end(), [&](const ColumnSpec& s) { return s.name == name; });
            if (it == specs_.end()) throw std::invalid_argument(unknown_column(name));
            size_t f = static_cast<size_t>(it - specs_.begin());
            if (slot_[f] < 0) add_column(f);
        }
    }

    void begin_trace(const StreamContext& ctx) override {
        ctx_ = &ctx;
        pid_ = ctx.reader->header().pid;
        host_code_ = cats_[kHostField].code(ctx.reader->header().hostname);
        for (auto& codes : string_codes_) codes.clear();
    }

    void add(const StreamContext& ctx, const trace::Record& rec) override {
        if (rec.kind != trace::RecordKindOf<R>::value) return;
        R r{};
        trace::visit(rec, [&r](const auto& member) {
            if constexpr (std::is_same_v<std::decay_t<decltype(member)>, R>) r = member;
        });
        ctx_ = &ctx;
        field_ = 0;
        put(pid_);
        put(host_code_);
        trace::describe(*this, r);
        ++rows_;
    }

    EventTable finish() override {
        EventTable t;
        t.kind = std::string(trace::record_kind_name(trace::RecordKindOf<R>::value));
        t.rows = rows_;
        for (size_t f = 0; f < specs_.size(); ++f) {
            if (slot_[f] < 0) continue;
            Column& c = out_[static_cast<size_t>(slot_[f])];
            if (c.categorical) c.categories = std::move(cats_[f].texts);
        }
        t.columns = std::move(out_);
        return t;
    }

    // ----- the field visitor (fields.h's describe()): one record's fields onto their columns -------------------
    template <class T> void u(const char*, T& v) {
        if constexpr (std::is_enum_v<T>)
            put_text(enum_text(v));
        else
            put(v);
    }
    template <class T> void s(const char*, T& v) { put(v); }
    void str(const char*, trace::StringId& id) {
        size_t f = field_;
        if (slot_[f] < 0) {
            ++field_;
            return;
        }
        put(string_code(f, id));
    }
    void time(const char*, trace::Timestamp& ts) { put(ctx_->to_run_ns(ts)); }
    void end(const char*, trace::Timestamp& ts, trace::Timestamp) { put(ts == 0 ? int64_t{-1} : ctx_->to_run_ns(ts)); }
    void corr(const char*, uint32_t& v) { put(v); }
    void frames(const char*, uint64_t*, uint32_t& count, uint32_t) { put(count); }
    void reals(const char*, double*, uint32_t& count, uint32_t) { put(count); }
    void bytes(const char*, uint8_t* data, uint32_t& size, uint32_t max) {
        if (slot_[field_] < 0) {
            ++field_;
            return;
        }
        static const char* hex = "0123456789abcdef";
        std::string text;
        for (uint32_t i = 0; i < std::min(size, max); ++i) {
            text += hex[data[i] >> 4];
            text += hex[data[i] & 15];
        }
        put_text(text);
    }

private:
    static constexpr size_t kHostField = 1;  // layout_of: pid, host, then the record's fields

    std::string unknown_column(const std::string& name) const {
        std::string known;
        for (const auto& s : specs_) known += (known.empty() ? "" : ", ") + s.name;
        return "no column '" + name + "' in events of kind '" +
               std::string(trace::record_kind_name(trace::RecordKindOf<R>::value)) + "' (its columns: " + known + ")";
    }

    void add_column(size_t f) {
        slot_[f] = static_cast<int>(out_.size());
        Column c;
        c.name = specs_[f].name;
        c.data = specs_[f].empty;
        Source s = specs_[f].source;
        c.categorical = s == Source::String || s == Source::Enum || s == Source::Host || s == Source::Bytes;
        out_.push_back(std::move(c));
    }

    // Appends v to the current field's column (when asked for) and moves to the next field.
    template <class T> void put(T v) {
        int slot = slot_[field_++];
        if (slot >= 0) std::get<std::vector<T>>(out_[static_cast<size_t>(slot)].data).push_back(v);
    }
    void put_text(std::string_view text) {
        if (slot_[field_] < 0) {
            ++field_;
            return;
        }
        put(cats_[field_].code(text));
    }

    // A trace's string id -> the column's code, cached per trace (ids are per trace; TraceReader bounds them by the
    // file's size, so the dense table is bounded too).
    int32_t string_code(size_t f, trace::StringId id) {
        auto& codes = string_codes_[f];
        if (id >= codes.size()) codes.resize(std::max<size_t>(size_t{id} + 1, ctx_->reader->string_count()), -1);
        int32_t& code = codes[id];
        if (code < 0) {
            std::string_view text = ctx_->reader->string(id);
            // Kernel names are shown demangled everywhere else (report/model/names.h): the same here.
            if (std::is_same_v<R, trace::Kernel> && specs_[f].name == "name")
                code = cats_[f].code(report::demangle(text));
            else
                code = cats_[f].code(text);
        }
        return code;
    }

    std::vector<ColumnSpec> specs_;                     // by field index: pid, host, then the record's fields
    std::vector<int> slot_;                             // field index -> output column (-1: not asked for)
    std::vector<Column> out_;
    std::vector<Categories> cats_;                      // by field index: texts of categorical columns
    std::vector<std::vector<int32_t>> string_codes_;    // by field index: this trace's string id -> code
    const StreamContext* ctx_ = nullptr;
    int64_t pid_ = 0;
    int32_t host_code_ = 0;
    size_t field_ = 0;
    size_t rows_ = 0;
};

// ----- the kind list --------------------------------------------------------------------------------------------
// Every data kind of GPROF_TRACE_RECORD_KINDS, by its display name: a kind added there is readable here at once.
struct KindEntry {
    std::string_view name;
    std::unique_ptr<TableBase> (*make)(const std::optional<std::vector<std::string>>&);
    std::vector<ColumnSpec> (*layout)();
};

template <class R> std::unique_ptr<TableBase> make_table(const std::optional<std::vector<std::string>>& wanted) {
    return std::make_unique<KindTable<R>>(wanted);
}

const std::vector<KindEntry>& kind_list() {
    static const std::vector<KindEntry> kinds = {
#define GPROF_EVENT_KIND(Kind, number, member, name) {name, &make_table<trace::Kind>, &layout_of<trace::Kind>},
        GPROF_TRACE_RECORD_KINDS(GPROF_EVENT_KIND)
#undef GPROF_EVENT_KIND
    };
    return kinds;
}

const KindEntry& find_kind(std::string_view name) {
    for (const auto& k : kind_list())
        if (k.name == name) return k;
    std::string known;
    for (const auto& k : kind_list()) known += (known.empty() ? "" : ", ") + std::string(k.name);
    throw std::invalid_argument("no event kind '" + std::string(name) + "' (kinds: " + known + ")");
}

}  // namespace

std::vector<std::string> event_kinds() {
    std::vector<std::string> out;
    for (const auto& k : kind_list()) out.emplace_back(k.name);
    return out;
}

std::vector<std::string> event_columns(std::string_view kind) {
    std::vector<std::string> out;
    for (const auto& s : find_kind(kind).layout()) out.push_back(s.name);
    return out;
}

EventTable read_events(const EventQuery& q) {
    const KindEntry& kind = find_kind(q.kind);
    std::unique_ptr<TableBase> table = kind.make(q.columns);
    std::vector<std::filesystem::path> traces = report::expand_inputs(q.inputs);

    std::vector<std::string> warnings;
    uint64_t dropped = 0;
    report::StreamCallbacks cb;
    cb.begin = [&](const StreamContext& ctx) {
        dropped = 0;
        table->begin_trace(ctx);
    };
    cb.record = [&](const StreamContext& ctx, const trace::Record& r) {
        if (r.kind == trace::RecordKind::Dropped) dropped += r.dropped.count;
        table->add(ctx, r);
    };
    // The same lines gprof-report's JSON carries in "warnings": damage, then records lost while recording.
    cb.end = [&](const StreamContext& ctx) {
        std::string label = report::trace_label(ctx.reader->path());
        for (const auto& w : ctx.reader->warnings()) warnings.push_back(label + ": " + w);
        if (dropped)
            warnings.push_back(label + ": " + std::to_string(dropped) +
                               " records were dropped while recording; totals under-count");
    };
    cb.unreadable = [&](const std::filesystem::path& path, const std::string& message) {
        warnings.push_back(report::trace_label(path) + ": " + message);
    };
    report::stream_run(traces, q.filter, cb);

    EventTable t = table->finish();
    t.warnings = std::move(warnings);
    t.traces = traces.size();
    return t;
}

}  // namespace gprof::python
