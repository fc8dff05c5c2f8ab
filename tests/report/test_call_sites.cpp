// Call sites to file:line (issue 18), on real stacks of tests/apps/callsite_app.cpp (callsite_fixture.h): the
// user's frame first (the runtime stand-in's frames dropped), an inlined frame and the frame it was inlined into,
// Python frames first, old Backtrace traces, a module without debug info (one warning), its debug file found by
// build id, and the cuda_callsite_sum report in JSON and CSV.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>

#include "callsite_fixture.h"
#include "every_output.h"
#include "html/escape.h"
#include "html/html.h"
#include "model/resolved_call_sites.h"
#include "reports/reports.h"
#include "timeline/args.h"
#include "timeline/timeline.h"

using namespace gprof::report;
using namespace gprof::testing;
namespace tr = gprof::trace;

namespace {

constexpr uint64_t kT0 = 1'000'000'000;

const CallsiteApp& app() {
    static CallsiteApp a = run_callsite_app(GPROF_CALLSITE_APP);
    return a;
}

struct TraceOptions {
    std::string module_path;  // default: the app itself
    bool legacy = false;      // Backtrace records (format <= 1.3) instead of Stack + CallSite
    bool python = false;      // a Python call site (PyFrame/PyStack) for the fourth call
};

void api(tr::TraceWriter& w, uint32_t corr, const char* name, uint64_t start, uint64_t end) {
    tr::ApiCall a;
    a.tid = 1;
    a.correlation = corr;
    a.name = w.intern(name);
    a.start = kT0 + start;
    a.end = kT0 + end;
    w.add(a);
}

void write_app_trace(const std::string& file, const TraceOptions& o = {}) {
    write_trace(file, [&](tr::TraceWriter& w) {
        w.add(tr::Thread{1, w.intern("main")});
        w.add(module_record(w, app(), o.module_path.empty() ? app().path : o.module_path));
        const char* names[] = {"launch", "copy", "sync"};
        for (uint32_t i = 0; i < 3; ++i) {
            const auto& frames = app().stacks.at(names[i]);
            if (o.legacy) {
                tr::Backtrace bt;
                bt.tid = 1;
                bt.correlation = i + 1;
                bt.frame_count = static_cast<uint32_t>(std::min<size_t>(frames.size(), tr::kMaxBacktraceFrames));
                std::copy(frames.begin(), frames.begin() + bt.frame_count, bt.frames);
                w.add(bt);
            } else {
                tr::Stack s;
                s.id = i + 1;
                s.frame_count = static_cast<uint32_t>(std::min<size_t>(frames.size(), tr::kMaxBacktraceFrames));
                std::copy(frames.begin(), frames.begin() + s.frame_count, s.frames);
                w.add(s);
                w.add(tr::CallSite{1, i + 1, i + 1, 0});
            }
        }
        api(w, 1, "cudaLaunchKernel", 1000, 3000);
        tr::Kernel k;
        k.correlation = 1;
        k.stream = 7;
        k.name = w.intern("_Z6kernelPf");
        k.start = kT0 + 4000;
        k.end = kT0 + 9000;
        w.add(k);
        api(w, 2, "cudaMemcpy", 10000, 20000);
        tr::Memcpy m;
        m.correlation = 2;
        m.bytes = 4096;
        m.copy_kind = tr::MemcpyKind::HtoD;
        m.src_kind = tr::MemoryKind::Pageable;
        m.dst_kind = tr::MemoryKind::Device;
        m.start = kT0 + 12000;
        m.end = kT0 + 18000;
        w.add(m);
        api(w, 3, "cudaDeviceSynchronize", 21000, 41000);
        if (o.python) {
            w.add(tr::PyFrame{1, w.intern("/srv/train.py"), w.intern("Trainer.step"), 12});
            w.add(tr::PyFrame{2, w.intern("/srv/train.py"), w.intern("main"), 30});
            tr::PyStack ps;
            ps.id = 1;
            ps.frame_count = 2;
            ps.frames[0] = 1;
            ps.frames[1] = 2;
            w.add(ps);
            w.add(tr::CallSite{1, 4, 1, 1});
            api(w, 4, "cudaLaunchKernel", 50000, 51000);
            k.correlation = 4;
            k.start = kT0 + 52000;
            k.end = kT0 + 55000;
            w.add(k);
        }
    });
}

// The app's trace written to `file` with `o`, and loaded.
Run app_run(const std::string& file, const TraceOptions& o = {}) {
    write_app_trace(file, o);
    return load_run({file});
}

std::string run_report(const std::string& trace, const std::string& report, OutputFormat format,
                       std::string* err_out = nullptr, int want_status = 0) {
    ReportOptions ro;
    ro.reports = {report};
    ro.format = format;
    std::ostringstream out, err;
    REQUIRE(run_reports({trace}, ro, out, err) == want_status);
    if (err_out) *err_out = err.str();
    return out.str();
}

}  // namespace

TEST_CASE("call sites: the user's line first, the inlined frame and its caller, no runtime frame", "[callsite]") {
    clear_symbol_cache();
    TempDir dir;
    Run run = app_run(dir.file("a.gprof"));
    REQUIRE(run.processes.size() == 1);
    CallSites cs(run.processes[0]);

    const ResolvedStack* launch = cs.of_correlation(1);
    REQUIRE(launch);
    REQUIRE(launch->frames.size() >= 3);
    INFO(launch->frames[0].text() << " | " << launch->frames[1].text());
    CHECK(launch->frames[0].location() == app().expect.at("launch").first);
    CHECK(launch->frames[0].function == app().expect.at("launch").second);
    CHECK(launch->frames[0].inlined);
    CHECK(launch->frames[1].location() == app().expect_inlined.at("launch").first);
    CHECK(launch->frames[1].function == app().expect_inlined.at("launch").second);
    CHECK_FALSE(launch->frames[1].inlined);
    CHECK(launch->frames[2].function == "main");
    CHECK(launch->site == app().expect.at("launch").first);
    for (const auto& f : launch->frames) {
        CHECK(f.function.find("cudart::") == std::string::npos);
        CHECK(f.function != "cudaLaunchKernel");
    }
    for (const char* name : {"copy", "sync"}) {
        const ResolvedStack* r = cs.of_correlation(std::string(name) == "copy" ? 2 : 3);
        REQUIRE(r);
        CHECK(r->site == app().expect.at(name).first);
        CHECK(r->function == app().expect.at(name).second);
    }
    CHECK(take_symbol_warnings().empty());
}

TEST_CASE("call sites: each distinct address resolved once, the module opened once", "[callsite]") {
    clear_symbol_cache();
    TempDir dir;
    write_app_trace(dir.file("a.gprof"));
    write_app_trace(dir.file("b.gprof"));
    Run run = load_run({dir.file("a.gprof"), dir.file("b.gprof")});
    REQUIRE(run.processes.size() == 2);
    std::set<uint64_t> distinct;
    for (const auto& [name, frames] : app().stacks) distinct.insert(frames.begin(), frames.end());
    for (const auto& p : run.processes) {
        CallSites cs(p);
        for (uint32_t c = 1; c <= 3; ++c) REQUIRE(cs.of_correlation(c));
    }
    CHECK(symbol_cache_stats().modules_opened == 1);
    // Addresses outside the module (libc's) are not resolved through it: at most the distinct ones inside.
    CHECK(symbol_cache_stats().addresses_resolved > 0);
    CHECK(symbol_cache_stats().addresses_resolved <= distinct.size());
}

TEST_CASE("call sites: a Python thread's frames come first, innermost first", "[callsite]") {
    TempDir dir;
    Run run = app_run(dir.file("p.gprof"), {.python = true});
    CallSites cs(run.processes.at(0));
    const ResolvedStack* r = cs.of_correlation(4);
    REQUIRE(r);
    REQUIRE(r->frames.size() >= 3);
    CHECK(r->frames[0].python);
    CHECK(r->site == "/srv/train.py:12");
    CHECK(r->function == "Trainer.step");
    CHECK(r->frames[1].location() == "/srv/train.py:30");
    CHECK(r->frames[2].location() == app().expect.at("launch").first);  // then the native frames
}

TEST_CASE("call sites: an old Backtrace trace still prints file:line", "[callsite]") {
    TempDir dir;
    Run run = app_run(dir.file("old.gprof"), {.legacy = true});
    CallSites cs(run.processes.at(0));
    const ResolvedStack* r = cs.of_correlation(2);
    REQUIRE(r);
    CHECK(r->site == app().expect.at("copy").first);
    std::string csv = run_report(dir.file("old.gprof"), "cuda_api_trace", OutputFormat::Csv);
    CHECK(csv.find(app().expect.at("copy").first) != std::string::npos);
}

TEST_CASE("call sites: a module without debug info gives one warning, its debug file found by build id", "[callsite]") {
    clear_symbol_cache();
    TempDir dir;
    std::string stripped = dir.file("stripped-app");
    command_stdout("objcopy --strip-debug '" + app().path + "' '" + stripped + "'");
    write_app_trace(dir.file("s.gprof"), {.module_path = stripped});
    std::string err;
    std::string csv = run_report(dir.file("s.gprof"), "cuda_callsite_sum", OutputFormat::Csv, &err);
    INFO(err << csv);
    size_t first = err.find("no debug info for stripped-app");
    REQUIRE(first != std::string::npos);
    CHECK(err.find("no debug info", first + 1) == std::string::npos);  // once, for three stacks
    CHECK(err.find(".build-id") == std::string::npos);
    CHECK(csv.find("train_step()+0x") != std::string::npos);  // function+offset from the symbol table
    CHECK(csv.find(".cpp:") == std::string::npos);

    // The debug file of the same build under <dir>/.build-id/xx/rest.debug: lines again.
    std::string id;
    for (uint8_t b : app().build_id) {
        char h[3];
        std::snprintf(h, sizeof h, "%02x", b);
        id += h;
    }
    REQUIRE(id.size() > 2);
    std::filesystem::path debug_dir = dir.path() / "debug";
    std::filesystem::create_directories(debug_dir / ".build-id" / id.substr(0, 2));
    command_stdout("objcopy --only-keep-debug '" + app().path + "' '" +
                   (debug_dir / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug")).string() + "'");
    // The module file gone too: the debug file alone serves.
    std::filesystem::remove(stripped);
    set_debug_file_directories({debug_dir.string()});
    csv = run_report(dir.file("s.gprof"), "cuda_callsite_sum", OutputFormat::Csv, &err);
    set_debug_file_directories({"/usr/lib/debug"});
    INFO(err << csv);
    CHECK(err.find("no debug info") == std::string::npos);
    CHECK(csv.find(app().expect.at("copy").first) != std::string::npos);
}

TEST_CASE("cuda_callsite_sum: kernel time, sync time and memcpy bytes per call site, full stack in JSON", "[callsite]") {
    TempDir dir;
    write_app_trace(dir.file("a.gprof"), {.python = true});
    auto doc = nlohmann::json::parse(run_report(dir.file("a.gprof"), "cuda_callsite_sum", OutputFormat::Json));
    const auto& rows = doc["reports"]["cuda_callsite_sum"]["rows"];
    REQUIRE(rows.size() == 4);
    std::map<std::string, nlohmann::json> by_site;
    for (const auto& r : rows) by_site[r["site"].get<std::string>()] = r;
    // Ordered by kernel time: the C++ launch (5000 ns) before the Python one (3000 ns), then sync, then the copy.
    CHECK(rows[0]["site"] == app().expect.at("launch").first);
    CHECK(rows[1]["site"] == "/srv/train.py:12");
    CHECK(rows[2]["site"] == app().expect.at("sync").first);
    CHECK(rows[3]["site"] == app().expect.at("copy").first);
    const auto& launch = by_site.at(app().expect.at("launch").first);
    CHECK(launch["kernels"] == 1);
    CHECK(launch["kernel_time_ns"] == 5000);
    CHECK(launch["api_time_ns"] == 2000);
    CHECK(launch["function"] == app().expect.at("launch").second);
    REQUIRE(launch["stack"].size() >= 3);
    CHECK(launch["stack"][0]["inlined"] == true);
    CHECK(launch["stack"][1]["location"] == app().expect_inlined.at("launch").first);
    const auto& sync = by_site.at(app().expect.at("sync").first);
    CHECK(sync["sync_calls"] == 1);
    CHECK(sync["sync_time_ns"] == 20000);
    CHECK(sync["kernel_time_ns"] == 0);
    const auto& copy = by_site.at(app().expect.at("copy").first);
    CHECK(copy["memcpy_count"] == 1);
    CHECK(copy["memcpy_bytes"] == 4096);
    CHECK(copy["memcpy_time_ns"] == 6000);
    CHECK(by_site.at("/srv/train.py:12")["stack"][0]["python"] == true);

    std::string text = run_report(dir.file("a.gprof"), "cuda_callsite_sum", OutputFormat::Table);
    CHECK(text.find(app().expect.at("sync").first) != std::string::npos);
}

// Hostile call sites (issue 15's rule for the 1.4 kinds): stacks naming nothing, Python stacks naming unknown frames
// and strings, modules that are a FIFO, a device, a directory or missing, and 10^5 distinct addresses in one module:
// warnings, never a crash or a hang, through every output.
TEST_CASE("call sites: hostile stacks and modules give warnings, never a crash or a hang", "[callsite][hostile]") {
    clear_symbol_cache();
    TempDir dir;
    std::string fifo = dir.file("fifo.so");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string trace = dir.file("app.1.gprof");
    const uint32_t kCalls = 100'000;
    write_trace(trace, [&](tr::TraceWriter& w) {
        w.add(tr::Thread{1, w.intern("main")});
        uint64_t base = 0x10000000;
        for (const char* path : {"/dev/zero", "/", "/nonexistent/lib.so", ""}) {
            tr::Module m;
            m.base = base;
            m.size = 0x1000000;
            m.path = w.intern(path);
            w.add(m);
            base += 0x1000000;
        }
        tr::Module m = module_record(w, app(), fifo);
        m.base = 0x20000000;
        w.add(m);
        w.add(module_record(w, app(), app().path));  // the real app, at its real base
        tr::Module overflow;
        overflow.base = ~0ull - 10;
        overflow.size = ~0ull;
        overflow.path = w.intern("/nonexistent/wraps.so");
        w.add(overflow);
        w.add(tr::PyFrame{7, 0xFFFFFFF0u, 0xFFFFFFF1u, 0xFFFFFFFFu});
        tr::PyStack ps;
        ps.id = 3;
        ps.frame_count = tr::kMaxBacktraceFrames;
        for (uint32_t i = 0; i < ps.frame_count; ++i) ps.frames[i] = i % 2 ? 7 : 0xFFFFFFFFFFFFull;
        w.add(ps);
        for (uint32_t i = 1; i <= kCalls; ++i) {
            tr::Stack s;
            s.id = i;
            s.frame_count = 4;
            s.frames[0] = 0x10000000 + i * 16;                 // /dev/zero, /, missing, ""
            s.frames[1] = 0x20000000 + (i % 4096) * 8;        // the FIFO
            s.frames[2] = app().base + (i % app().size);       // distinct addresses in a real module
            s.frames[3] = i % 3 ? ~0ull - 1 : 0;               // the wrapping module, or 0
            w.add(s);
            w.add(tr::CallSite{1, i, i % 1000 == 0 ? 0xFFFFFFFFu : i, i % 2 ? 3u : 0xFFFFFFFEu});
            api(w, i, i % 2 ? "cudaMemcpy" : "cudaLaunchKernel", 1000 + i * 100, 1050 + i * 100);
        }
        w.add(tr::CallSite{1, kCalls + 1, 0, 0});  // a call site without an API call
    });
    auto started = std::chrono::steady_clock::now();
    Run run = load_run({trace});
    auto baseline = extract_figures(run, {});
    EveryOutput o = run_every_output(dir.path(), trace, baseline);
    CHECK(o.report_bytes > 0);
    CHECK(o.timeline_json_bytes > 0);
    std::string err;
    // Exit 2: the PyFrame's string ids beyond the file are damage the reader reports (and skips). The warnings of
    // the outputs above were taken by them (once per module per gprof-report run): start afresh.
    clear_symbol_cache();
    std::string csv = run_report(trace, "cuda_callsite_sum", OutputFormat::Csv, &err, 2);
    INFO(err.substr(0, 4000));
    CHECK(csv.find("cudaMemcpy") == std::string::npos);  // sites, not API names
    CHECK(err.find("no debug info for fifo.so") != std::string::npos);
    CHECK(err.find("no debug info for zero") != std::string::npos);
    CHECK(err.find("no debug info for zero", err.find("no debug info for zero") + 1) == std::string::npos);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(120));
    CHECK(symbol_cache_stats().modules_opened <= 8);
}

TEST_CASE("call sites: the timeline's API and GPU slices carry the call site and stack, in JSON and Perfetto", "[callsite][timeline]") {
    TempDir dir;
    Run run = app_run(dir.file("a.gprof"));
    timeline::TimelineModel m = timeline::build_timeline_model(run);
    const std::string& launch = app().expect.at("launch").first;
    size_t api = 0, kernel = 0, copy = 0;
    for (const auto& sl : m.slices) {
        if (sl.stack == timeline::kNone) continue;
        const auto& st = m.stacks.at(sl.stack);
        if (sl.source == timeline::SliceSource::Api && m.name(sl.name) == "cudaLaunchKernel") {
            ++api;
            CHECK(st.site == launch);
            // The stack: the inlined frame, the one it was inlined into, then main; one frame per line.
            CHECK(st.text.rfind("launch_step at " + launch + " [inlined]\ntrain_step() at " +
                                app().expect_inlined.at("launch").first, 0) == 0);
        }
        if (sl.source == timeline::SliceSource::Kernel) {
            ++kernel;
            CHECK(st.site == launch);
        }
        if (sl.source == timeline::SliceSource::Memcpy) {
            ++copy;
            CHECK(st.site == app().expect.at("copy").first);
        }
    }
    CHECK(api == 1);
    CHECK(kernel == 1);
    CHECK(copy == 1);
    CHECK(m.stacks.size() == 3);  // one per distinct stack, however many slices share it

    std::string json_text, perfetto;
    TimelineOptions to;
    timeline_to_string(run, json_text, to);
    auto doc = nlohmann::json::parse(json_text);
    size_t with_site = 0;
    for (const auto& e : doc["traceEvents"])
        if (e.contains("args") && e["args"].contains("call site")) {
            ++with_site;
            CHECK(e["args"].contains("stack"));
        }
    CHECK(with_site == 5);  // the 3 API calls, the kernel and the copy
    to.format = TimelineFormat::Perfetto;
    timeline_to_string(run, perfetto, to);
    CHECK(perfetto.find(launch) != std::string::npos);
    CHECK(perfetto.find("call site") != std::string::npos);
}

TEST_CASE("call sites: a finding names the program line behind it", "[callsite][analyze]") {
    TempDir dir;
    Run run = app_run(dir.file("a.gprof"));
    AnalysisResult a = analyze_run(run, {});
    const Finding* pageable = nullptr;
    for (const auto& f : a.findings)
        if (f.rule == "pageable_memcpy") pageable = &f;
    REQUIRE(pageable);
    REQUIRE(pageable->sites.size() == 1);
    CHECK(pageable->sites[0].site == app().expect.at("copy").first);
    CHECK(pageable->sites[0].function == "train_step()");
    CHECK(pageable->sites[0].count == 1);
    CHECK(pageable->sites[0].time_ns == 6000);
    std::ostringstream text;
    render_analysis_table(a, text);
    CHECK(text.str().find("at: " + app().expect.at("copy").first + " train_step() x1") != std::string::npos);
    auto j = analysis_to_json(a);
    bool found = false;
    for (const auto& f : j["findings"])
        if (f["rule"] == "pageable_memcpy") found = f["call_sites"][0]["site"] == app().expect.at("copy").first;
    CHECK(found);
}

// Not a check: the figures of docs/performance.md (symbolisation per distinct address; cuda_callsite_sum and the
// timeline on 10^5 call sites). Run by hand: report_callsite_tests "[.measure]" -s
TEST_CASE("call sites: measure", "[.measure]") {
    TempDir dir;
    std::string trace = dir.file("m.1.gprof");
    const uint32_t kCalls = 100'000, kStacks = 1000;
    const auto& launch = app().stacks.at("launch");
    write_trace(trace, [&](tr::TraceWriter& w) {
        w.add(tr::Thread{1, w.intern("main")});
        w.add(module_record(w, app(), app().path));
        for (uint32_t s = 1; s <= kStacks; ++s) {  // distinct stacks: the real frames plus a distinct address each
            tr::Stack st;
            st.id = s;
            st.frame_count = static_cast<uint32_t>(launch.size());
            std::copy(launch.begin(), launch.end(), st.frames);
            st.frames[st.frame_count - 1] = app().base + (s * 7) % app().size;
            w.add(st);
        }
        for (uint32_t i = 1; i <= kCalls; ++i) {
            w.add(tr::CallSite{1, i, 1 + i % kStacks, 0});
            api(w, i, "cudaLaunchKernel", 1000 + i * 100, 1050 + i * 100);
            tr::Kernel k;
            k.correlation = i;
            k.stream = 7;
            k.start = kT0 + 1060 + i * 100;
            k.end = k.start + 30;
            w.add(k);
        }
    });
    clear_symbol_cache();
    Run run = load_run({trace});
    auto t0 = std::chrono::steady_clock::now();
    {
        CallSites cs(run.processes[0]);
        for (uint32_t s = 1; s <= kStacks; ++s) cs.of(BacktraceFrames{1, 0, s, 0});
    }
    auto t1 = std::chrono::steady_clock::now();
    auto st = symbol_cache_stats();
    double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    WARN("symbolised " << st.addresses_resolved << " distinct addresses in " << us << " us: "
                       << us / double(st.addresses_resolved) << " us per address (module opened " << st.modules_opened << "x)");
    clear_symbol_cache();
    auto t2 = std::chrono::steady_clock::now();
    std::string csv = run_report(trace, "cuda_callsite_sum", OutputFormat::Csv);
    auto t3 = std::chrono::steady_clock::now();
    std::string tl;
    timeline_to_string(run, tl, {});
    auto t4 = std::chrono::steady_clock::now();
    double report_ms = std::chrono::duration<double, std::milli>(t3 - t2).count();
    double timeline_ms = std::chrono::duration<double, std::milli>(t4 - t3).count();
    WARN("cuda_callsite_sum on 1e5 call sites (load + report): " << report_ms << " ms; timeline JSON with stacks: "
         << timeline_ms << " ms, " << tl.size() << " bytes");
    CHECK(csv.find(app().expect.at("launch").first) != std::string::npos);
}

TEST_CASE("call sites: a program's own cudaX function is its call site, the runtime's entry points are not",
          "[callsite]") {
    // A statically linked runtime's public entry point lies in the program's image: it is known by the API names
    // the trace's calls carry, not by the shape of the name, so the program's wrapper around it stays the site.
    auto frame = [](std::string function, std::string module = "app") {
        SourceFrame f;
        f.function = std::move(function);
        f.module = std::move(module);
        return f;
    };
    const auto api = ApiEntryNames::of("cudaMalloc", "cudaLaunchKernel", "cuLaunchKernel");
    CHECK(is_cuda_internal_frame(frame("cudaMalloc"), api));
    CHECK(is_cuda_internal_frame(frame("cudaLaunchKernel<char>(char const*, dim3, dim3, void**, unsigned long, "
                                       "CUstream_st*)"),
                                 api));
    CHECK(is_cuda_internal_frame(frame("cuLaunchKernel"), api));
    CHECK(is_cuda_internal_frame(frame("cudart::cudaApiMalloc(void**, unsigned long)"), api));
    CHECK(is_cuda_internal_frame(frame("__cudart1234"), api));
    CHECK(is_cuda_internal_frame(frame("__device_stub__Z6kernelPf(float*)"), api));
    CHECK(is_cuda_internal_frame(frame("anything", "libcudart.so.13"), api));
    CHECK_FALSE(is_cuda_internal_frame(frame("cudaSafeMalloc(void**, unsigned long)"), api));
    CHECK_FALSE(is_cuda_internal_frame(frame("cuHelper::launch()"), api));
    CHECK_FALSE(is_cuda_internal_frame(frame("cudaMallocManaged"), api));  // not called in this trace
    CHECK_FALSE(is_cuda_internal_frame(frame("main"), api));
    // API calls not traced: the shape of the name decides.
    const ApiEntryNames none;
    CHECK(is_cuda_internal_frame(frame("cudaMalloc"), none));
    CHECK(is_cuda_internal_frame(frame("cuLaunchKernel"), none));
    CHECK_FALSE(is_cuda_internal_frame(frame("cuda_helper"), none));
    CHECK_FALSE(is_cuda_internal_frame(frame("main"), none));
}

TEST_CASE("call sites: report.html lists them (stack on hover) when recorded, and has no such section otherwise",
          "[callsite][html]") {
    TempDir dir;
    write_app_trace(dir.file("a.gprof"));
    const std::string page = html::render_run_page({dir.file("a.gprof")}, Filter{}, AnalysisOptions{});
    const size_t at = page.find("<section id=\"callsites\">");
    REQUIRE(at != std::string::npos);
    CHECK(page.find("href=\"#callsites\"") != std::string::npos);
    const std::string section = page.substr(at, page.find("</section>", at) - at);
    // The three sites of the app's trace, the launching one first (it has the kernel time), each with its function.
    const size_t launch = section.find(html::escape(app().expect.at("launch").first));
    const size_t copy = section.find(html::escape(app().expect.at("copy").first));
    REQUIRE(launch != std::string::npos);
    REQUIRE(copy != std::string::npos);
    CHECK(launch < copy);
    CHECK(section.find("train_step()") != std::string::npos);
    CHECK(section.find(">" + format_time_auto(5000) + "<") != std::string::npos);  // the launch row's kernel time

    // The same run without call sites: no section, no link to one.
    write_trace(dir.file("b.gprof"), [&](tr::TraceWriter& w) {
        w.add(tr::Thread{1, w.intern("main")});
        api(w, 1, "cudaLaunchKernel", 1000, 3000);
    });
    const std::string plain = html::render_run_page({dir.file("b.gprof")}, Filter{}, AnalysisOptions{});
    CHECK(plain.find("<section id=\"api\">") != std::string::npos);
    CHECK(plain.find("callsites") == std::string::npos);
}

namespace {

// The traces of the H200 run of 2026-11-27 (tests/data/h200/call-sites-*: gprof-test-ka's kernels mode under
// --backtrace, recorded by the collector of main at feb3415), symbolised from the debug files of the binaries that
// ran. Per API call name, the source lines of tests/apps/known_answer.cu (as built then) that make it, and how
// many calls each: read from that source (mode_kernels, require_device) and the trace's ApiCall records.
using LineCounts = std::map<std::string, std::map<uint32_t, size_t>>;

LineCounts sites_by_api(const std::string& variant, const std::string& program, size_t* stacks_out) {
    clear_symbol_cache();
    const std::string dir = std::string(GPROF_H200_DATA) + "/call-sites-" + variant;
    set_debug_file_directories({dir + "/debug"});
    Run run = load_run({dir});
    struct Restore {  // the default debug dirs again, after the frames are resolved (also when a REQUIRE ends it)
        ~Restore() { set_debug_file_directories({"/usr/lib/debug"}); }
    } restore;
    REQUIRE(run.processes.size() == 1);
    const ProcessTrace& p = run.processes[0];
    CallSites cs(p);
    std::map<uint32_t, std::string> api_name;
    for (const auto& c : p.api_calls) api_name[c.correlation] = std::string(p.str(c.name));
    LineCounts out;
    size_t stacks = 0;
    for (const BacktraceFrames& bt : p.backtraces) {
        if (!bt.stack) continue;
        ++stacks;
        const ResolvedStack& r = cs.of(bt);
        REQUIRE_FALSE(r.frames.empty());
        const SourceFrame& first = r.frames[0];
        INFO(api_name[bt.correlation] << ": " << first.text());
        CHECK(first.module == program);
        CHECK(first.file.ends_with("/tests/apps/known_answer.cu"));
        CHECK_FALSE(first.inlined);  // the user's function itself, not a CUDA or nvcc helper inlined into it
        ++out[api_name[bt.correlation]][first.line];
    }
    if (stacks_out) *stacks_out = stacks;
    return out;
}

}  // namespace

TEST_CASE("call sites on an H200's stacks, static runtime: the user's line, never the runtime's, its headers' or "
          "the kernel's stub", "[callsite][h200]") {
    size_t stacks = 0;
    LineCounts got = sites_by_api("static", "gprof-test-ka", &stacks);
    CHECK(stacks == 155);
    // mode_kernels: cudaMalloc at 288-291, the <<<>>> launches at 292-296 (10, 5, 3, 7 and 2 of them; never the
    // kernels' definition lines, where nvcc's host function for each kernel says it is), cudaGetLastError 297,
    // cudaDeviceSynchronize 298, the four cudaFree 299; require_device: cudaGetDeviceCount 256,
    // cudaGetDeviceProperties 263.
    CHECK(got["cudaMalloc"] == std::map<uint32_t, size_t>{{288, 1}, {289, 1}, {290, 1}, {291, 1}});
    // The template kernel's (ka_scale<float>, <double>) go through nvcc's __wrapper__device_stub_ka_scale<T> and
    // ka_scale<T>, both inlined into mode_kernels: two nested inlines, which libdw's dwarf_getscopes alone lost.
    CHECK(got["cudaLaunchKernel"] == std::map<uint32_t, size_t>{{292, 10}, {293, 5}, {294, 3}, {295, 7}, {296, 2}});
    CHECK(got["cudaGetLastError"] == std::map<uint32_t, size_t>{{297, 1}});
    CHECK(got["cudaDeviceSynchronize"] == std::map<uint32_t, size_t>{{298, 1}});
    CHECK(got["cudaFree"] == std::map<uint32_t, size_t>{{299, 4}});
    CHECK(got["cudaGetDeviceCount"] == std::map<uint32_t, size_t>{{256, 1}});
    CHECK(got["cudaGetDeviceProperties"] == std::map<uint32_t, size_t>{{263, 1}});
    // The runtime's own driver calls (its initialisation, the kernels' loading, cuKernelGetName before each
    // launch): at the program's call that needed them, always a line of the two functions above.
    for (const auto& [name, lines] : got) {
        if (!name.starts_with("cu") || name.starts_with("cuda")) continue;
        for (const auto& [line, n] : lines) {
            INFO(name << " at " << line);
            CHECK(((line >= 256 && line <= 263) || (line >= 288 && line <= 299)));
        }
    }
}

TEST_CASE("call sites on an H200's stacks, shared runtime: libc's pthread_once between libcudart's frames is not "
          "the site", "[callsite][h200]") {
    LineCounts got = sites_by_api("shared", "gprof-test-ka-shared", nullptr);
    CHECK(got["cudaLaunchKernel"] == std::map<uint32_t, size_t>{{292, 10}, {293, 5}, {294, 3}, {295, 7}, {296, 2}});
    CHECK(got["cudaGetDeviceCount"] == std::map<uint32_t, size_t>{{256, 1}});
    CHECK(got["cudaFree"] == std::map<uint32_t, size_t>{{299, 4}});
}

TEST_CASE("call sites on an H200's PyTorch stacks: Python frames first, the autograd thread's GEMMs at libtorch, "
          "never inside cuBLASLt", "[callsite][h200]") {
    clear_symbol_cache();
    Run run = load_run({std::string(GPROF_H200_DATA) + "/python-frames"});
    REQUIRE(run.processes.size() == 1);
    const ProcessTrace& p = run.processes[0];
    CallSites cs(p);
    size_t python = 0, native = 0, torch = 0, cublas = 0;
    for (const BacktraceFrames& bt : p.backtraces) {
        if (!bt.stack) continue;
        const ResolvedStack& r = cs.of(bt);
        REQUIRE_FALSE(r.frames.empty());
        const SourceFrame& first = r.frames[0];
        INFO(first.text());
        if (bt.py_stack) {
            ++python;
            CHECK(first.python);
            continue;
        }
        ++native;
        for (const char* never : {"libcublasLt", "libcudnn", "libnccl", "libcuda", "libcupti", "libc.so"})
            CHECK_FALSE(first.module.starts_with(never));
        if (first.module.starts_with("libtorch_cuda.so")) ++torch;
        // The collector of then kept cuBLAS's frames: some stacks hold nothing past them in their 16 frames; their
        // site is the outermost recorded, cuBLAS's (the collector now drops those frames, and the depth reaches
        // PyTorch's).
        if (first.module.starts_with("libcublas.so")) {
            ++cublas;
            CHECK(first.location() == first.module + "+0x" + [&] {
                char h[32];
                std::snprintf(h, sizeof h, "%llx", static_cast<unsigned long long>(first.offset));
                return std::string(h);
            }());
        }
    }
    // The main thread's 2573 calls carry Python frames; the autograd thread's 1681 do not (tid 871 and 900).
    CHECK(python == 2573);
    CHECK(native == 1681);
    CHECK(torch > 0);
    CHECK(torch > cublas);  // (3 more start in other PyTorch libraries)
}
