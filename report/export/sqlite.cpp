// nsys's SQLite export schema, for a gprof-run run (nsys Analysis Guide, "SQLite Schema Reference"). Where a
// gprof-run trace has the fact, the table and column carry nsys's name and meaning:
//   times            ns on the run axis (since the earliest session start, TARGET_INFO_SESSION_START_TIME)
//   globalTid        pid * 2^24 + tid (nsys: <hw:8><vm:8><pid:24><tid:24>, hw and vm 0); globalPid = pid * 2^24
//   names            StringIds (id, value); kernels' demangledName/shortName/mangledName, API nameId point there
//   enums            nsys's values (memcpy kinds as CUPTI's, memory kinds remapped: PAGEABLE = 0), ENUM_* tables
// Driver API calls are rows of CUPTI_ACTIVITY_KIND_RUNTIME with eventClass 1 (runtime 0), as in nsys; the view
// CUPTI_ACTIVITY_KIND_DRIVER selects them. Everything is written in one transaction with prepared statements.
#include "export/sqlite.h"

#include "output/output_file.h"

#include <cmath>
#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "gprof/version.h"
#include "model/names.h"
#include "output/text.h"

namespace gprof::report {

using namespace gprof::trace;

namespace {

// ----- a thin RAII layer over the C API --------------------------------------------------------------------

class Db {
public:
    explicit Db(const std::filesystem::path& path) {
        // NOFOLLOW: the temporary file's name is predictable; a link planted there is refused, not written through.
        if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                            nullptr) != SQLITE_OK) {
            std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
            sqlite3_close(db_);
            throw std::runtime_error("cannot create " + path.string() + ": " + why);
        }
    }
    ~Db() { sqlite3_close(db_); }
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;

    void exec(const std::string& sql) {
        char* err = nullptr;
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
            std::string why = err ? err : "unknown error";
            sqlite3_free(err);
            throw std::runtime_error("SQLite: " + why + " (in: " + sql.substr(0, 80) + ")");
        }
    }
    sqlite3* get() { return db_; }

private:
    sqlite3* db_ = nullptr;
};

// One prepared INSERT; bind by position (1-based), then step().
class Insert {
public:
    Insert(Db& db, const std::string& table, int columns) : db_(db) {
        std::string sql = "INSERT INTO " + table + " VALUES (";
        for (int i = 0; i < columns; ++i) sql += i ? ",?" : "?";
        sql += ")";
        if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &st_, nullptr) != SQLITE_OK)
            throw std::runtime_error(std::string("SQLite: ") + sqlite3_errmsg(db.get()) + " (in: " + sql + ")");
    }
    ~Insert() { sqlite3_finalize(st_); }
    Insert(const Insert&) = delete;
    Insert& operator=(const Insert&) = delete;

    Insert& i(int col, int64_t v) {
        sqlite3_bind_int64(st_, col, v);
        return *this;
    }
    Insert& u(int col, uint64_t v) { return i(col, static_cast<int64_t>(v)); }  // ids and counts below 2^63
    Insert& dbl(int col, double v) {
        sqlite3_bind_double(st_, col, v);
        return *this;
    }
    Insert& null(int col) {
        sqlite3_bind_null(st_, col);
        return *this;
    }
    // Text columns hold valid UTF-8 (SQLite does not check; readers such as Python's sqlite3 fail on invalid bytes).
    Insert& s(int col, std::string_view v) {
        std::string text = valid_utf8(v);
        sqlite3_bind_text(st_, col, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
        return *this;
    }
    void step(uint64_t& rows) {
        if (sqlite3_step(st_) != SQLITE_DONE)
            throw std::runtime_error(std::string("SQLite: ") + sqlite3_errmsg(db_.get()));
        sqlite3_reset(st_);
        sqlite3_clear_bindings(st_);
        ++rows;
    }

private:
    Db& db_;
    sqlite3_stmt* st_ = nullptr;
};

// ----- schema ----------------------------------------------------------------------------------------------

struct TableDef {
    const char* name;
    const char* columns;  // the CREATE TABLE column list
    bool gpu_metrics_only = false;  // made only for a run with GPU metrics, as nsys makes them only with its option
};

// The one list of tables: their nsys names and columns (nsys types: INTEGER for ids, times and counts).
const TableDef kTables[] = {
    {"META_DATA_EXPORT", "name TEXT NOT NULL, value TEXT"},
    {"StringIds", "id INTEGER PRIMARY KEY, value TEXT NOT NULL"},
    {"TARGET_INFO_SESSION_START_TIME", "utcEpochNs INTEGER, utcTime TEXT, localTime TEXT"},
    {"ANALYSIS_DETAILS", "globalVid INTEGER, duration INTEGER, startTime INTEGER, stopTime INTEGER"},
    {"PROCESSES", "globalPid INTEGER, pid INTEGER, name TEXT"},
    {"ThreadNames", "nameId INTEGER, priority INTEGER, globalTid INTEGER"},
    {"TARGET_INFO_GPU", "id INTEGER, name TEXT, busLocation TEXT, totalMemory INTEGER, smCount INTEGER, uuid TEXT, "
                        "cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER"},
    {"TARGET_INFO_CUDA_DEVICE", "gpuId INTEGER, cudaId INTEGER, pid INTEGER"},
    {"ENUM_CUDA_MEMCPY_OPER", "id INTEGER PRIMARY KEY, name TEXT, label TEXT"},
    {"ENUM_CUDA_MEM_KIND", "id INTEGER PRIMARY KEY, name TEXT, label TEXT"},
    {"ENUM_NSYS_EVENT_TYPE", "id INTEGER PRIMARY KEY, name TEXT, label TEXT"},
    {"ENUM_NSYS_EVENT_CLASS", "id INTEGER PRIMARY KEY, name TEXT, label TEXT"},
    {"ENUM_CUPTI_SYNC_TYPE", "id INTEGER PRIMARY KEY, name TEXT, label TEXT"},
    {"CUPTI_ACTIVITY_KIND_KERNEL",
     "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, contextId INTEGER, streamId INTEGER, "
     "correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, mangledName INTEGER, "
     "gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER, "
     "registersPerThread INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, localMemoryPerThread "
     "INTEGER, launchType INTEGER, graphNodeId INTEGER, graphId INTEGER"},
    {"CUPTI_ACTIVITY_KIND_MEMCPY",
     "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, contextId INTEGER, streamId INTEGER, "
     "correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER, "
     "srcDeviceId INTEGER, dstDeviceId INTEGER, graphNodeId INTEGER, graphId INTEGER"},
    {"CUPTI_ACTIVITY_KIND_MEMSET",
     "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, contextId INTEGER, streamId INTEGER, "
     "correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER, memKind INTEGER, graphNodeId INTEGER, "
     "graphId INTEGER"},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
     "start INTEGER NOT NULL, end INTEGER NOT NULL, contextId INTEGER, streamId INTEGER, correlationId INTEGER, "
     "globalPid INTEGER, syncType INTEGER, eventId INTEGER"},
    {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
     "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, contextId INTEGER, streamId INTEGER, "
     "correlationId INTEGER, globalPid INTEGER, graphId INTEGER"},
    {"CUPTI_ACTIVITY_KIND_RUNTIME",
     "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, "
     "correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER, "
     "cbid INTEGER"},
    {"NVTX_EVENTS",
     "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, "
     "color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, "
     "uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, "
     "floatValue REAL, jsonTextId INTEGER, jsonText TEXT"},
    // GPU metrics (issue 37): a type per process and device sampled, its metrics; a row per sample and metric.
    {"TARGET_INFO_GPU_METRICS",
     "typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL, typeName TEXT NOT NULL, metricId INTEGER NOT NULL, "
     "metricName TEXT NOT NULL", true},
    {"GPU_METRICS", "timestamp INTEGER, typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value REAL", true},
};

constexpr int64_t kTidBits = 0x1000000;  // 2^24

int64_t global_pid(int64_t pid) { return (pid % kTidBits) * kTidBits; }
int64_t global_tid(int64_t pid, uint64_t tid) { return global_pid(pid) + static_cast<int64_t>(tid % kTidBits); }

// CUPTI's memory kinds (trace) -> nsys's ENUM_CUDA_MEM_KIND (PAGEABLE = 0 ... UNKNOWN = 7).
int64_t nsys_mem_kind(MemoryKind k) {
    int v = static_cast<int>(k);
    return v == 0 || v > 7 ? 7 : v - 1;
}

// The kernel's base name, nsys's shortName: no return type, scope, template arguments or parameters
// ("void at::native::(anonymous namespace)::vectorized_kernel<...>(int, ...)" -> "vectorized_kernel").
std::string short_name(const std::string& demangled) {
    std::string s = demangled;
    auto strip_group = [&](char open, char close) {
        if (s.empty() || s.back() != close) return;
        int depth = 0;
        for (size_t i = s.size(); i-- > 0;) {
            if (s[i] == close) ++depth;
            else if (s[i] == open && --depth == 0) {
                s.erase(i);
                return;
            }
        }
    };
    strip_group('(', ')');
    while (!s.empty() && s.back() == ' ') s.pop_back();
    strip_group('<', '>');
    // The last "::" or space outside brackets starts the base name.
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
        char c = s[i];
        if (c == ')' || c == '>') ++depth;
        else if (c == '(' || c == '<') --depth;
        else if (depth == 0 && (c == ' ' || (c == ':' && i > 0 && s[i - 1] == ':'))) return s.substr(i + 1);
    }
    return s.empty() ? demangled : s;
}

std::string utc_text(int64_t epoch_ns, bool local) {
    std::time_t t = static_cast<std::time_t>(epoch_ns / 1'000'000'000);
    std::tm tm{};
    if (local) ::localtime_r(&t, &tm);
    else ::gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, local ? "%Y-%m-%dT%H:%M:%S%z" : "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

class Exporter {
public:
    Exporter(Db& db, const Run& run) : db_(db), run_(run) {}

    SqliteExportStats write() {
        bool metrics = false;
        for (const auto& p : run_.processes) metrics |= !p.gpu_metrics.series.empty();
        for (const auto& t : kTables) {
            if (t.gpu_metrics_only && !metrics) continue;
            db_.exec(std::string("CREATE TABLE ") + t.name + " (" + t.columns + ")");
            stats_.tables.emplace_back(t.name);
        }
        db_.exec("CREATE VIEW CUPTI_ACTIVITY_KIND_DRIVER AS SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = 1");
        stats_.tables.emplace_back("CUPTI_ACTIVITY_KIND_DRIVER");
        metadata();
        enums();
        for (const auto& p : run_.processes) process(p);
        strings();
        return stats_;
    }

private:
    // Global string ids (nsys's StringIds is one table for the whole export).
    int64_t sid(std::string_view s) {
        auto [it, fresh] = string_ids_.try_emplace(std::string(s), static_cast<int64_t>(string_ids_.size()) + 1);
        return it->second;
    }

    void metadata() {
        Insert m(db_, "META_DATA_EXPORT", 2);
        auto row = [&](const char* name, const std::string& value) { m.s(1, name).s(2, value).step(stats_.rows); };
        row("GPROF_EXPORT_SCHEMA_VERSION", std::to_string(kSqliteExportSchemaVersion));
        row("EXPORT_PRODUCER", "gprof-report " GPROF_VERSION);
        row("TIME_UNIT", "ns since TARGET_INFO_SESSION_START_TIME.utcEpochNs");
        Insert st(db_, "TARGET_INFO_SESSION_START_TIME", 3);
        st.i(1, run_.base_realtime_ns).s(2, utc_text(run_.base_realtime_ns, false)).s(3, utc_text(run_.base_realtime_ns, true));
        st.step(stats_.rows);
        int64_t first = 0, last = 0;
        bool any = false;
        for (const auto& p : run_.processes) {
            if (!p.first_ns && !p.last_ns) continue;
            int64_t a = p.to_run_ns(p.first_ns), b = p.to_run_ns(p.last_ns);
            first = any ? std::min(first, a) : a;
            last = any ? std::max(last, b) : b;
            any = true;
        }
        Insert ad(db_, "ANALYSIS_DETAILS", 4);
        ad.i(1, 0).i(2, last - first).i(3, first).i(4, last).step(stats_.rows);
    }

    // nsys's GPU_METRICS: a sample's values at its start, one row per metric; sourceId the CUDA device, the value as
    // the host API evaluated it (a share of peak in percent, or a count over the sample).
    void gpu_metrics(const ProcessTrace& p) {
        Insert info(db_, "TARGET_INFO_GPU_METRICS", 5);
        Insert rows(db_, "GPU_METRICS", 4);
        for (const GpuMetricSeries& s : p.gpu_metrics.series) {
            const int64_t type = ++metric_types_;
            const std::string type_name = std::string(p.str(s.name)) + " (" + std::string(p.str(s.chip)) + ", pid " +
                                          std::to_string(p.pid()) + ")";
            for (size_t m = 0; m < s.metrics.size(); ++m)
                info.i(1, type).i(2, s.device).s(3, type_name).i(4, static_cast<int64_t>(m)).s(5, s.metrics[m])
                    .step(stats_.rows);
            for (size_t i = 0; i < s.samples(); ++i)
                for (size_t m = 0; m < s.metrics.size(); ++m) {
                    const double v = s.value(i, m);
                    if (!std::isfinite(v)) continue;  // a value the sample lacks
                    rows.i(1, p.to_run_ns(s.starts[i])).i(2, type).i(3, static_cast<int64_t>(m)).dbl(4, v)
                        .step(stats_.rows);
                }
        }
    }

    void enums() {
        auto table = [&](const char* name, const std::vector<std::pair<int, const char*>>& rows) {
            Insert e(db_, name, 3);
            for (const auto& [id, label] : rows) e.i(1, id).s(2, label).s(3, label).step(stats_.rows);
        };
        table("ENUM_CUDA_MEMCPY_OPER", {{0, "CUDA_MEMCPY_OPER_UNKNOWN"}, {1, "CUDA_MEMCPY_OPER_HTOD"}, {2, "CUDA_MEMCPY_OPER_DTOH"},
                                        {3, "CUDA_MEMCPY_OPER_HTOA"}, {4, "CUDA_MEMCPY_OPER_ATOH"}, {5, "CUDA_MEMCPY_OPER_ATOA"},
                                        {6, "CUDA_MEMCPY_OPER_ATOD"}, {7, "CUDA_MEMCPY_OPER_DTOA"}, {8, "CUDA_MEMCPY_OPER_DTOD"},
                                        {9, "CUDA_MEMCPY_OPER_HTOH"}, {10, "CUDA_MEMCPY_OPER_PTOP"}});
        table("ENUM_CUDA_MEM_KIND", {{0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE"}, {1, "CUDA_MEMOPR_MEMORY_KIND_PINNED"},
                                     {2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE"}, {3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY"},
                                     {4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED"}, {5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC"},
                                     {6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC"}, {7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN"}});
        table("ENUM_NSYS_EVENT_TYPE", {{34, "NvtxMark"}, {59, "NvtxPushPopRange"}, {60, "NvtxStartEndRange"},
                                       {75, "NvtxDomainCreate"}});
        table("ENUM_NSYS_EVENT_CLASS", {{0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME"}, {1, "TRACE_PROCESS_EVENT_CUDA_DRIVER"}});
        table("ENUM_CUPTI_SYNC_TYPE", {{0, "UNKNOWN"}, {1, "EVENT_SYNCHRONIZE"}, {2, "STREAM_WAIT_EVENT"},
                                       {3, "STREAM_SYNCHRONIZE"}, {4, "CONTEXT_SYNCHRONIZE"}});
    }

    void process(const ProcessTrace& p) {
        const int64_t gpid = global_pid(p.pid());
        auto t = [&](Timestamp ts) { return p.to_run_ns(ts); };
        {
            Insert pr(db_, "PROCESSES", 3);
            std::string name = p.header.argv.empty() ? p.header.executable : p.header.argv[0];
            pr.i(1, gpid).i(2, p.pid()).s(3, name).step(stats_.rows);
            Insert tn(db_, "ThreadNames", 3);
            for (const auto& th : p.threads)
                if (th.name) tn.i(1, sid(p.str(th.name))).i(2, 0).i(3, global_tid(p.pid(), th.tid)).step(stats_.rows);
        }
        {
            Insert gpu(db_, "TARGET_INFO_GPU", 9);
            Insert cd(db_, "TARGET_INFO_CUDA_DEVICE", 3);
            for (const auto& d : p.devices) {
                std::string uuid(d.uuid ? p.str(d.uuid) : std::string_view());
                auto key = uuid.empty() ? std::to_string(p.pid()) + "/" + std::to_string(d.id) : uuid;
                auto [it, fresh] = gpus_.try_emplace(key, static_cast<int64_t>(gpus_.size()));
                if (fresh)
                    gpu.i(1, it->second).s(2, p.str(d.name)).null(3).u(4, d.global_memory_bytes).i(5, d.sm_count)
                        .s(6, uuid).i(7, d.id).i(8, d.cc_major).i(9, d.cc_minor).step(stats_.rows);
                cd.i(1, it->second).i(2, d.id).i(3, p.pid()).step(stats_.rows);
            }
        }
        if (!p.gpu_metrics.series.empty()) gpu_metrics(p);
        {
            Insert k(db_, "CUPTI_ACTIVITY_KIND_KERNEL", 23);
            std::unordered_map<StringId, std::array<int64_t, 3>> names;  // demangled, short, mangled
            for (const auto& r : p.kernels) {
                auto [it, fresh] = names.try_emplace(r.name);
                if (fresh) {
                    std::string mangled(p.str(r.name)), dem = demangle(mangled);
                    it->second = {sid(dem), sid(short_name(dem)), sid(mangled)};
                }
                k.i(1, t(r.start)).i(2, t(r.end)).i(3, r.device).i(4, r.context).i(5, r.stream).i(6, r.correlation)
                    .i(7, gpid).i(8, it->second[0]).i(9, it->second[1]).i(10, it->second[2])
                    .i(11, r.grid_x).i(12, r.grid_y).i(13, r.grid_z).i(14, r.block_x).i(15, r.block_y).i(16, r.block_z)
                    .i(17, r.registers_per_thread).i(18, r.static_shared_bytes).i(19, r.dynamic_shared_bytes)
                    .i(20, r.local_bytes_per_thread).i(21, r.device_launched ? 1 : 0);
                if (r.graph_id) k.u(22, r.graph_node_id).i(23, r.graph_id);
                else k.null(22).null(23);
                k.step(stats_.rows);
            }
        }
        {
            Insert m(db_, "CUPTI_ACTIVITY_KIND_MEMCPY", 15);
            for (const auto& r : p.memcpys) {
                m.i(1, t(r.start)).i(2, t(r.end)).i(3, r.device).i(4, r.context).i(5, r.stream).i(6, r.correlation)
                    .i(7, gpid).u(8, r.bytes).i(9, static_cast<int>(r.copy_kind)).i(10, nsys_mem_kind(r.src_kind))
                    .i(11, nsys_mem_kind(r.dst_kind)).i(12, r.device).i(13, r.peer_device);
                if (r.graph_id) m.u(14, r.graph_node_id).i(15, r.graph_id);
                else m.null(14).null(15);
                m.step(stats_.rows);
            }
            Insert s(db_, "CUPTI_ACTIVITY_KIND_MEMSET", 12);
            for (const auto& r : p.memsets) {
                s.i(1, t(r.start)).i(2, t(r.end)).i(3, r.device).i(4, r.context).i(5, r.stream).i(6, r.correlation)
                    .i(7, gpid).i(8, r.value).u(9, r.bytes).i(10, nsys_mem_kind(r.memory_kind));
                if (r.graph_id) s.u(11, r.graph_node_id).i(12, r.graph_id);
                else s.null(11).null(12);
                s.step(stats_.rows);
            }
            Insert sy(db_, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 8);
            for (const auto& r : p.syncs)
                sy.i(1, t(r.start)).i(2, t(r.end)).i(3, r.context).i(4, r.stream == 0xFFFFFFFFu ? -1 : int64_t(r.stream))
                    .i(5, r.correlation).i(6, gpid).i(7, static_cast<int>(r.type)).i(8, r.event).step(stats_.rows);
            // Graph launches that stand for their work (no node records): nsys's graph-level trace rows.
            Insert g(db_, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", 8);
            for (size_t i = 0; i < p.graph_launches.size(); ++i) {
                if (!p.graph_launch_is_gpu_work(i)) continue;
                const auto& r = p.graph_launches[i];
                g.i(1, t(r.start)).i(2, t(r.end)).i(3, r.device).i(4, r.context).i(5, r.stream).i(6, r.correlation)
                    .i(7, gpid).i(8, r.graph_id).step(stats_.rows);
            }
        }
        {
            Insert a(db_, "CUPTI_ACTIVITY_KIND_RUNTIME", 9);
            for (const auto& r : p.api_calls)
                a.i(1, t(r.start)).i(2, t(r.end)).i(3, r.domain == ApiDomain::Driver ? 1 : 0)
                    .i(4, global_tid(p.pid(), r.tid)).i(5, r.correlation).i(6, sid(p.str(r.name))).i(7, r.result)
                    .null(8).i(9, r.cbid).step(stats_.rows);
        }
        nvtx(p);
    }

    void nvtx(const ProcessTrace& p) {
        Insert n(db_, "NVTX_EVENTS", 19);
        // Each domain once per process: a domain-create row (eventType 75) whose domainId the events carry.
        std::map<StringId, int64_t> domains;
        for (const auto& r : p.nvtx) {
            if (!r.domain || domains.count(r.domain)) continue;
            int64_t id = next_domain_++;
            domains[r.domain] = id;
            n.i(1, p.to_run_ns(r.start)).null(2).i(3, 75).null(4).null(5).null(6).s(7, p.str(r.domain))
                .i(8, global_tid(p.pid(), r.tid)).null(9).null(10).i(11, id);
            for (int c = 12; c <= 19; ++c) n.null(c);
            n.step(stats_.rows);
        }
        for (const auto& r : p.nvtx) {
            bool mark = r.type == NvtxType::Mark;
            int event_type = mark ? 34 : r.type == NvtxType::PushPop ? 59 : 60;
            n.i(1, p.to_run_ns(r.start));
            if (mark || r.end == 0) n.null(2);  // a mark, or a range that never ended
            else n.i(2, p.to_run_ns(r.end));
            n.i(3, event_type);
            if (mark) n.null(4);
            else n.i(4, ++range_id_);
            n.i(5, r.category);
            if (r.color) n.i(6, r.color);
            else n.null(6);
            n.s(7, p.str(r.name)).i(8, global_tid(p.pid(), r.tid));
            if (mark) n.null(9);
            else n.i(9, global_tid(p.pid(), r.end_tid ? r.end_tid : r.tid));
            n.null(10).i(11, r.domain ? domains[r.domain] : 0);
            for (int c = 12; c <= 19; ++c) n.null(c);
            uint64_t bits = r.payload;
            switch (r.payload_type) {
                case NvtxPayload::U64: n.u(12, bits); break;
                case NvtxPayload::I64: n.i(13, static_cast<int64_t>(bits)); break;
                case NvtxPayload::Double: {
                    double d;
                    std::memcpy(&d, &bits, sizeof d);
                    n.dbl(14, d);
                    break;
                }
                case NvtxPayload::U32: n.i(15, static_cast<uint32_t>(bits)); break;
                case NvtxPayload::I32: n.i(16, static_cast<int32_t>(static_cast<uint32_t>(bits))); break;
                case NvtxPayload::Float: {
                    float f;
                    uint32_t b32 = static_cast<uint32_t>(bits);
                    std::memcpy(&f, &b32, sizeof f);
                    n.dbl(17, f);
                    break;
                }
                case NvtxPayload::None: break;
            }
            n.step(stats_.rows);
        }
    }

    void strings() {
        Insert s(db_, "StringIds", 2);
        for (const auto& [text, id] : string_ids_) s.i(1, id).s(2, text).step(stats_.rows);
    }

    Db& db_;
    const Run& run_;
    SqliteExportStats stats_;
    std::unordered_map<std::string, int64_t> string_ids_;
    int64_t metric_types_ = 0;  // TARGET_INFO_GPU_METRICS typeIds given so far
    std::map<std::string, int64_t> gpus_;
    int64_t next_domain_ = 1;
    int64_t range_id_ = 0;
};

}  // namespace

SqliteExportStats export_sqlite(const Run& run, const std::filesystem::path& path, const OutputPolicy& policy) {
    // SQLite writes by name: into OutputFile's temporary file beside the output, moved into place when complete.
    OutputFile out(path, policy);
    if (out.staging_path() == path)
        throw std::runtime_error("cannot write '" + path.string() + "': an SQLite database needs a regular file");
    SqliteExportStats stats;
    {
        Db db(out.staging_path());
        // One transaction, no journal: nothing is visible at `path` before the commit below anyway.
        db.exec("PRAGMA journal_mode = OFF");
        db.exec("PRAGMA synchronous = OFF");
        db.exec("BEGIN");
        stats = Exporter(db, run).write();
        db.exec("COMMIT");
    }
    out.commit();
    return stats;
}

}  // namespace gprof::report
