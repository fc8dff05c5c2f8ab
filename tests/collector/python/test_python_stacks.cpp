// Python stacks (collector/python/): the layout tables against each interpreter's headers, the stacks a Python
// program gets with the GIL released (the way PyTorch calls CUDA), the limits, and no cost without Python.
// Runs once per CPython the build found (tests/collector/python/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector_run.h"
#include "gprof/trace/reader.h"
#include "pipeline/pipeline.h"
#include "python/layout.h"
#include "python/python_stack.h"
#include "sample_spread.h"
#include "trace_fixture.h"

using namespace gprof;
using namespace gprof::testing;
namespace py = gprof::collector::python;

namespace {

struct PythonSet {
    std::string interpreter, module_dir, layout_probe;
};

std::vector<PythonSet> python_sets() {
    std::vector<PythonSet> sets;
    std::stringstream all(GPROF_TEST_PYTHON_SETS);
    std::string one;
    while (std::getline(all, one, ',')) {
        PythonSet s;
        size_t a = one.find('|'), b = one.find('|', a + 1);
        s.interpreter = one.substr(0, a);
        s.module_dir = one.substr(a + 1, b - a - 1);
        s.layout_probe = one.substr(b + 1);
        sets.push_back(s);
    }
    return sets;
}

// "3.11": the interpreter's major.minor.
std::string python_version(const std::string& interpreter) {
    TempDir dir;
    auto run = run_program({interpreter, "-c", "import sys;print(f'{sys.version_info[0]}.{sys.version_info[1]}')"}, {},
                           dir.path().string());
    return run.out.substr(0, run.out.find('\n'));
}

std::string script(const std::string& name) { return std::string(GPROF_TEST_PYTHON_SCRIPTS) + "/" + name; }

// The line of `path` that carries "# CAPTURE:<tag>" (1-based), 0 when none.
uint32_t marked_line(const std::string& path, const std::string& tag) {
    std::ifstream in(path);
    std::string line;
    for (uint32_t n = 1; std::getline(in, line); ++n) {
        auto at = line.find("# CAPTURE:" + tag);
        if (at != std::string::npos && at + 10 + tag.size() == line.size()) return n;
    }
    return 0;
}

struct Frame {
    std::string file, function;
    uint32_t line = 0;
};

struct PyTrace {
    std::map<uint32_t, Frame> frames;
    std::map<uint32_t, std::vector<uint32_t>> stacks;
    std::vector<std::string> statuses;
    size_t duplicate_frames = 0, duplicate_stacks = 0;

    std::vector<Frame> stack(uint32_t id) const {
        std::vector<Frame> out;
        auto it = stacks.find(id);
        if (it == stacks.end()) return out;
        for (uint32_t f : it->second) out.push_back(frames.count(f) ? frames.at(f) : Frame{"<missing>", "", 0});
        return out;
    }
};

PyTrace read_python_records(const std::string& path) {
    trace::TraceReader reader(path);
    PyTrace t;
    trace::Record r;
    std::set<std::tuple<std::string, std::string, uint32_t>> seen;
    std::set<std::vector<uint32_t>> seen_stacks;
    while (reader.next(r)) {
        if (r.kind == trace::RecordKind::PyFrame) {
            Frame f{std::string(reader.string(r.py_frame.file)), std::string(reader.string(r.py_frame.function)),
                    r.py_frame.line};
            t.duplicate_frames += !seen.insert({f.file, f.function, f.line}).second;
            t.frames[r.py_frame.id] = f;
        } else if (r.kind == trace::RecordKind::PyStack) {
            std::vector<uint32_t> ids(r.py_stack.frames, r.py_stack.frames + r.py_stack.frame_count);
            t.duplicate_stacks += !seen_stacks.insert(ids).second;
            t.stacks[r.py_stack.id] = ids;
        } else if (r.kind == trace::RecordKind::Status) {
            t.statuses.emplace_back(reader.string(r.status.message));
        }
    }
    return t;
}

void check_frame(const Frame& f, const std::string& file, const std::string& function, uint32_t line) {
    INFO("frame " << f.file << ":" << f.line << " " << f.function);
    CHECK(f.file == file);
    CHECK(f.function == function);
    CHECK(f.line == line);
}

}  // namespace

TEST_CASE("python stacks: the build found a CPython to test with") {
    // CI installs python3-dev (scripts/setup); without one every test below would pass vacuously.
    REQUIRE(!python_sets().empty());
}

TEST_CASE("python stacks: the layout tables are each interpreter's own offsets") {
    size_t checked = 0;
    for (const auto& set : python_sets()) {
        if (set.layout_probe.empty()) continue;  // internal headers not installed for this one
        TempDir dir;
        auto run = run_program({set.layout_probe}, {}, dir.path().string());
        REQUIRE(run.exit_code() == 0);
        std::map<std::string, long> got;
        std::istringstream in(run.out);
        std::string name;
        long value;
        while (in >> name >> value) got[name] = value;
        INFO(set.interpreter << "\n" << run.out);
        const py::Layout* l = py::layout_for(static_cast<unsigned>(got["major"]), static_cast<unsigned>(got["minor"]));
        REQUIRE(l != nullptr);
        CHECK(got.at("tstate_frame") == l->tstate_frame);
        CHECK(got.at("cframe_frame") == l->cframe_frame);
        CHECK(got.at("frame_previous") == l->frame_previous);
        CHECK(got.at("frame_code") == l->frame_code);
        CHECK(got.at("frame_instr") == l->frame_instr);
        CHECK(got.at("frame_owner") == l->frame_owner);
        CHECK(got.at("owner_cstack") == l->owner_cstack);
        CHECK(got.at("tstate_datastack_chunk") == l->tstate_datastack_chunk);
        if (l->model == py::FrameModel::InterpreterFrames) {
            CHECK(got.at("chunk_previous") == 0);
            CHECK(got.at("chunk_size") == 8);
            CHECK(got.at("chunk_data") == 24);
            CHECK(got.at("owner_thread") == 0);
            CHECK(got.at("owner_generator") == 1);
        }
        CHECK(got.at("code_filename") == l->code_filename);
        CHECK(got.at("code_name") == l->code_name);
        CHECK(got.at("code_qualname") == l->code_qualname);
        CHECK(got.at("code_bytecode") == l->code_bytecode);
        CHECK(got.at("str_length") == l->str_length);
        CHECK(got.at("str_state") == l->str_state);
        CHECK(got.at("ascii_header") == static_cast<long>(l->ascii_header));
        CHECK(got.at("compact_header") == static_cast<long>(l->compact_header));
        // What walk.cpp assumes of every version: ob_type at 8, ob_size at 16, the str state bits.
        CHECK(got.at("ob_type") == 8);
        CHECK(got.at("var_size") == 16);
        CHECK(got.at("str_state_bits") == 0x7C);
        ++checked;
    }
    CHECK(checked > 0);
}

TEST_CASE("python stacks: a Python program's frames with the GIL released, innermost first") {
    for (const auto& set : python_sets()) {
        DYNAMIC_SECTION(set.interpreter) {
            TempDir dir;
            std::string trace_path = dir.file("probe.gprof");
            std::string path = script("stack_script.py");
            auto run = run_program({set.interpreter, path, trace_path}, {{"PYTHONPATH", set.module_dir}},
                                   dir.path().string());
            INFO(run.err);
            REQUIRE(run.exit_code() == 0);
            auto out = nlohmann::json::parse(run.out);
            std::string version = python_version(set.interpreter);
            CHECK(out["support"].get<std::string>().rfind("CPython " + version + ".", 0) == 0);
            bool qualnames = version != "3.10";  // co_qualname from 3.11

            PyTrace t = read_python_records(trace_path);
            CHECK(t.duplicate_frames == 0);  // each (file, function, line) once
            CHECK(t.duplicate_stacks == 0);

            // Three calls from the same place: one stack, interned.
            auto forward = out["forward"];
            REQUIRE(forward.size() == 3);
            uint32_t id = forward[0].get<uint32_t>();
            REQUIRE(id != 0);
            CHECK(forward[1].get<uint32_t>() == id);
            CHECK(forward[2].get<uint32_t>() == id);
            auto s = t.stack(id);
            REQUIRE(s.size() == 4);
            check_frame(s[0], path, "inner", marked_line(path, "inner"));
            check_frame(s[1], path, "middle", marked_line(path, "middle"));
            check_frame(s[2], path, qualnames ? "Model.forward" : "forward", marked_line(path, "forward"));
            check_frame(s[3], path, "<module>", marked_line(path, "module"));

            // With the GIL held the same reader gives the same kind of answer.
            s = t.stack(out["with_gil"].get<uint32_t>());
            REQUIRE(s.size() == 2);
            check_frame(s[0], path, "with_gil", marked_line(path, "with_gil"));

            // A generator's frame (its frame lives in the generator object, not on the thread's frame stack).
            s = t.stack(out["gen"].get<uint32_t>());
            REQUIRE(s.size() == 2);
            check_frame(s[0], path, "gen", marked_line(path, "gen"));

            // 102 frames deep: cut at 64, the innermost 63 kept, the 64th says so.
            s = t.stack(out["deep"].get<uint32_t>());
            REQUIRE(s.size() == trace::kMaxBacktraceFrames);
            check_frame(s[0], path, "deep", marked_line(path, "deep_bottom"));
            for (size_t i = 1; i + 1 < s.size(); ++i) check_frame(s[i], path, "deep", marked_line(path, "deep"));
            CHECK(s.back().function.find("outer Python frames cut") != std::string::npos);
            CHECK(out["counts"]["truncated"].get<uint64_t>() == 1);

            // A threading.Thread: its own frames (innermost in_thread), none of the main thread's.
            s = t.stack(out["thread"].get<uint32_t>());
            REQUIRE(s.size() >= 2);
            check_frame(s[0], path, "in_thread", marked_line(path, "in_thread"));
            for (const auto& f : s) CHECK(f.function != "<module>");

            // 4 threads x 50 rounds x 20 depths at once: one id per depth, the same in every thread, 20 distinct.
            std::map<uint32_t, std::set<uint32_t>> ids_by_depth;
            for (auto& pair : out["hammer"]) ids_by_depth[pair[0].get<uint32_t>()].insert(pair[1].get<uint32_t>());
            CHECK(out["hammer"].size() == 4 * 50 * 20);
            REQUIRE(ids_by_depth.size() == 20);
            std::set<uint32_t> distinct;
            for (auto& [k, ids] : ids_by_depth) {
                INFO("depth " << k);
                REQUIRE(ids.size() == 1);
                CHECK(*ids.begin() != 0);
                distinct.insert(*ids.begin());
                auto hs = t.stack(*ids.begin());
                REQUIRE(hs.size() >= k + 3);  // thread_bottom, k x thread_depth, hammer, threading's frames
                check_frame(hs[0], path, "thread_depth", marked_line(path, "thread_bottom"));
                CHECK(hs[k + 1].function == "hammer");
            }
            CHECK(distinct.size() == 20);

            // A thread Python never saw: no stack.
            CHECK(out["native"].get<uint32_t>() == 0);
            CHECK(out["counts"]["no_python"].get<uint64_t>() >= 1);
            CHECK(out["counts"]["frames_full"].get<uint64_t>() == 0);
            // counts() was read before the "twice" capture, which added one stack and one frame (its <module> line).
            CHECK(out["counts"]["py_stacks"].get<uint32_t>() + 1 == t.stacks.size());
            CHECK(out["counts"]["py_frames"].get<uint32_t>() + 1 == t.frames.size());

            auto c = out["counts"];
            CHECK(out["summary"].get<std::string>() ==
                  "Python stacks (" + out["support"].get<std::string>() + "): " +
                      std::to_string(c["captured"].get<uint64_t>()) + " calls with a Python stack, " +
                      std::to_string(c["no_python"].get<uint64_t>()) + " from threads without Python frames; " +
                      std::to_string(t.frames.size() - 1) + " code locations, " + std::to_string(t.stacks.size() - 1) +
                      " distinct stacks; 1 cut at 64 frames; 0 left without a stack because the tables were full");

            // The same stack again, in this trace and then in a second trace of the same process: the thread's
            // last stack is the same, but its id belongs to the first trace; the second numbers from 1 again.
            auto twice = out["twice"];
            REQUIRE(twice.size() == 2);
            CHECK(twice[0].get<uint32_t>() > 1);
            CHECK(twice[1].get<uint32_t>() == 1);
            s = t.stack(twice[0].get<uint32_t>());
            REQUIRE(s.size() == 4);
            check_frame(s[3], path, "<module>", marked_line(path, "twice"));
            PyTrace second = read_python_records(trace_path + ".second");
            CHECK(second.stacks.size() == 1);
            CHECK(second.frames.size() == 4);
            s = second.stack(twice[1].get<uint32_t>());
            REQUIRE(s.size() == 4);
            check_frame(s[0], path, "inner", marked_line(path, "inner"));
            check_frame(s[3], path, "<module>", marked_line(path, "twice"));

            // After Py_FinalizeEx (Py_AtExit, where CUDA's own exit handlers run): nothing to read, 0.
            CHECK(slurp(trace_path + ".at_exit") == "0\n");
        }
    }
}

TEST_CASE("python stacks: a program without Python gets 0, at no cost, and says nothing") {
    // This test program has no CPython in it.
    CHECK(std::string(py::python_support()).empty());
    CHECK(py::python_stack_summary().empty());
    collector::Pipeline pipeline;  // never started: nothing may be posted to it
    constexpr int kCalls = 1000000;
    uint64_t sum = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) sum += py::current_python_stack(pipeline);
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / kCalls;
    CHECK(sum == 0);
    UNSCOPED_INFO("current_python_stack without Python: " << ns << " ns per call");
    CHECK(ns < 200);  // one load and a branch; a syscall or a lock per call would cost more than this
    CHECK(py::python_stack_counts().captured == 0);
}

TEST_CASE("python stacks: full tables are counted and said, never silent") {
    auto sets = python_sets();
    REQUIRE(!sets.empty());
    const PythonSet& set = sets.front();  // the limits are the same code for every version
    auto run_mode = [&](const std::string& mode, PyTrace& t) {
        TempDir dir;
        std::string trace_path = dir.file("overflow.gprof");
        auto run = run_program({set.interpreter, script("overflow_script.py"), trace_path, mode},
                               {{"PYTHONPATH", set.module_dir}}, dir.path().string());
        INFO(run.err);
        REQUIRE(run.exit_code() == 0);
        t = read_python_records(trace_path);
        return nlohmann::json::parse(run.out);
    };
    auto said = [](const PyTrace& t, const std::string& text) {
        size_t n = 0;
        for (auto& m : t.statuses) n += m.find(text) != std::string::npos;
        return n;
    };
    SECTION("more code locations than the table holds") {
        PyTrace t;
        auto out = run_mode("locations", t);
        auto c = out["counts"];
        // 17000 lines, each a new location: the first ones got ids until the table was full, the rest counted.
        CHECK(c["py_frames"].get<uint32_t>() == py::kMaxPyFrames);
        CHECK(c["frames_full"].get<uint64_t>() > 17000 - py::kMaxPyFrames);
        CHECK(c["frames_full"].get<uint64_t>() + c["captured"].get<uint64_t>() == 17000);
        CHECK(t.frames.size() == py::kMaxPyFrames);
        CHECK(said(t, "table of 16384 code locations is full") == 1);  // once, not per call
    }
    SECTION("more distinct stacks than the table holds") {
        PyTrace t;
        auto out = run_mode("stacks", t);
        auto c = out["counts"];
        // 2^15 distinct stacks of 32 frames over a handful of locations: each that did not fit got 0, counted.
        uint64_t stacks_full = c["stacks_full"].get<uint64_t>();
        CHECK(stacks_full > 0);
        CHECK(stacks_full == out["zero_ids"].get<uint64_t>());
        CHECK(c["frames_full"].get<uint64_t>() == 0);
        CHECK(c["py_stacks"].get<uint32_t>() <= py::kMaxPyStacks);
        CHECK(c["py_stacks"].get<uint32_t>() + stacks_full == (1u << 15));
        CHECK(t.stacks.size() == c["py_stacks"].get<uint32_t>());
        CHECK(said(t, "stack table is full") == 1);
    }
}

TEST_CASE("python stacks: gprof-run --backtrace python3 script.py: the CUDA call's CallSite names the script's lines") {
    for (const auto& set : python_sets()) {
        DYNAMIC_SECTION(set.interpreter) {
            TempDir dir;
            std::string run_dir = dir.file("run");
            std::string path = script("cuda_script.py");
            auto run = run_program({std::string(GPROF_BINARY_DIR) + "/bin/gprof-run", "--backtrace", "--summary", "none",
                                    "--no-html", "--no-timeline", "-o", run_dir, set.interpreter, path},
                                   {{"PYTHONPATH", set.module_dir},
                                    {"GPROF_CUPTI_LIB", GPROF_TEST_CUPTI_STANDIN},
                                    {"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}},
                                   dir.path().string());
            INFO(run.err);
            REQUIRE(run.exit_code() == 0);
            uint32_t correlation = static_cast<uint32_t>(std::stoul(run.out));  // what the launch returned
            REQUIRE(correlation != 0);
            // The trace of the process that made the launch (an interpreter started through a wrapper leaves more).
            std::vector<trace::CallSite> sites;
            std::string launch_trace;
            for (const auto& path_of_trace : traces_in(run_dir)) {
                trace::TraceReader reader(path_of_trace.string());
                trace::Record r;
                std::vector<trace::CallSite> here;
                bool launch = false;
                while (reader.next(r)) {
                    if (r.kind == trace::RecordKind::CallSite && r.call_site.correlation == correlation)
                        here.push_back(r.call_site);
                    if (r.kind == trace::RecordKind::ApiCall && r.api.correlation == correlation)
                        launch = reader.string(r.api.name) == "cudaLaunchKernel";
                }
                if (!launch) continue;
                CHECK(launch_trace.empty());  // one process made it
                launch_trace = path_of_trace.string();
                sites = here;
            }
            REQUIRE(!launch_trace.empty());
            PyTrace t = read_python_records(launch_trace);
            REQUIRE(sites.size() == 1);
            REQUIRE(sites[0].py_stack != 0);
            auto s = t.stack(sites[0].py_stack);
            REQUIRE(s.size() == 3);
            bool qualnames = python_version(set.interpreter) != "3.10";
            check_frame(s[0], path, "launch_step", marked_line(path, "launch"));
            check_frame(s[1], path, qualnames ? "Trainer.step" : "step", marked_line(path, "step"));
            check_frame(s[2], path, "<module>", marked_line(path, "main"));
            // The end of the trace says what the Python side did.
            size_t said = 0;
            for (auto& m : t.statuses)
                said += m.rfind("call sites: Python stacks (CPython " + python_version(set.interpreter) + ".", 0) == 0;
            CHECK(said == 1);

            // Where users look: gprof-report's call-site report and the timeline name the script's line.
            const std::string site = path + ":" + std::to_string(marked_line(path, "launch"));
            const std::string report = std::string(GPROF_BINARY_DIR) + "/bin/gprof-report";
            auto sum = run_program({report, "cuda_callsite_sum", "--format", "json", run_dir}, {}, dir.path().string());
            INFO(sum.err);
            REQUIRE(sum.exit_code() == 0);
            auto doc = nlohmann::json::parse(sum.out);
            size_t launch_rows = 0;
            for (const auto& row : doc["reports"]["cuda_callsite_sum"]["rows"])
                if (row["site"] == site) {
                    ++launch_rows;
                    CHECK(row["function"] == "launch_step");
                }
            CHECK(launch_rows == 1);
            std::string timeline = dir.file("timeline.json");
            auto tl = run_program({report, "timeline", run_dir, "-o", timeline}, {}, dir.path().string());
            INFO(tl.err);
            REQUIRE(tl.exit_code() == 0);
            std::ifstream in(timeline);
            auto events = nlohmann::json::parse(in);
            size_t launch_slices = 0;
            for (const auto& e : events["traceEvents"])
                if (e.value("name", "") == "cudaLaunchKernel" && e.contains("args") && e["args"].contains("call site")) {
                    CHECK(e["args"]["call site"].get<std::string>().find(site) != std::string::npos);
                    ++launch_slices;
                }
            CHECK(launch_slices == 1);
        }
    }
}

TEST_CASE("python stacks: a CPython the reader does not support says so once and gives no Python stack") {
    std::string unsupported = GPROF_TEST_UNSUPPORTED_PYTHON;
    if (unsupported.empty()) {
        WARN("no CPython 3.9 found at build time: not checked here");
        return;
    }
    std::string interpreter = unsupported.substr(0, unsupported.find('|'));
    std::string module_dir = unsupported.substr(unsupported.find('|') + 1);
    TempDir dir;
    std::string run_dir = dir.file("run");
    auto run = run_program({std::string(GPROF_BINARY_DIR) + "/bin/gprof-run", "--backtrace", "--summary", "none",
                            "--no-html", "--no-timeline", "-o", run_dir, interpreter, script("cuda_script.py")},
                           {{"PYTHONPATH", module_dir},
                            {"GPROF_CUPTI_LIB", GPROF_TEST_CUPTI_STANDIN},
                            {"GPROF_TEST_CUDA_STANDIN", GPROF_TEST_CUDA_STANDIN}},
                           dir.path().string());
    INFO(run.err);
    REQUIRE(run.exit_code() == 0);
    uint32_t correlation = static_cast<uint32_t>(std::stoul(run.out));
    auto traces = traces_in(run_dir);
    REQUIRE(traces.size() == 1);
    trace::TraceReader reader(traces[0].string());
    trace::Record r;
    size_t sites = 0, py_records = 0, said = 0;
    std::string version = python_version(interpreter);
    while (reader.next(r)) {
        if (r.kind == trace::RecordKind::CallSite && r.call_site.correlation == correlation) {
            ++sites;
            CHECK(r.call_site.stack != 0);  // the native stack is still there
            CHECK(r.call_site.py_stack == 0);
        }
        py_records += r.kind == trace::RecordKind::PyFrame || r.kind == trace::RecordKind::PyStack;
        if (r.kind == trace::RecordKind::Status)
            said += std::string(reader.string(r.status.message))
                        .rfind("CPython " + version + ".", 0) == 0 &&
                    std::string(reader.string(r.status.message)).find("no Python stacks") != std::string::npos;
    }
    CHECK(sites == 1);
    CHECK(py_records == 0);
    CHECK(said == 1);
}

// CPU sampling of a Python program (issue 35): two lines that take 70 % and 30 % of the thread's CPU time come out
// within 5 points in gprof-report cpu_sample_sum --by line, named file.py:LINE. The first interpreter found runs it
// long enough for the statistics (4 s of CPU: ~1000 samples at a 250 Hz tick); the others for 1 s, where the hotter
// line must still lead.
TEST_CASE("python stacks: CPU samples name a Python program's hot lines, 70/30 within 5 points",
          "[sampling][e2e]") {
    const auto sets = python_sets();
    for (size_t k = 0; k < sets.size(); ++k) {
        const auto& set = sets[k];
        DYNAMIC_SECTION(set.interpreter) {
            TempDir dir;
            std::string path = script("hot_lines.py");
            // 4 s of CPU for the first interpreter (about 1000 signals), 1 s for the others. By index: Catch runs
            // the test case again for each section, so a flag set in one pass is fresh in the next.
            double seconds = k == 0 ? 4 : 1;
            auto run = run_program({set.interpreter, path, std::to_string(seconds)}, collector_env(dir.path().string()),
                                   dir.path().string());
            INFO(run.err);
            REQUIRE(run.exit_code() == 0);
            // The program measures each line's real share with the thread's CPU clock: the known answer.
            double measured_a = 0, measured_b = 0;
            REQUIRE(std::sscanf(run.out.c_str(), "measured a=%lf b=%lf", &measured_a, &measured_b) == 2);
            CHECK(std::abs(measured_a - 70) < 5);  // the program is what it says
            TempDir cwd;
            auto report = run_program({std::string(GPROF_BINARY_DIR) + "/bin/gprof-report", "cpu_sample_sum", "--by",
                                       "line", "--format", "json", dir.path().string()},
                                      {}, cwd.path().string());
            INFO(report.err);
            REQUIRE(report.exit_code() == 0);
            auto rows = nlohmann::json::parse(report.out)["reports"]["cpu_sample_sum"]["rows"];
            const std::string where_a = path + ":" + std::to_string(marked_line(path, "hot_a"));
            const std::string where_b = path + ":" + std::to_string(marked_line(path, "hot_b"));
            auto self_at = [&](const std::string& where) {
                for (const auto& row : rows)
                    if (row["location"] == where) {
                        CHECK(row["name"] == "spin");
                        return row["self_samples"].get<double>();
                    }
                return 0.0;
            };
            double a = self_at(where_a), b = self_at(where_b);
            REQUIRE(a + b > 0);
            double share = 100 * a / (a + b);

            auto spread = sample_spread(dir.path().string(), [&](const std::string& leaf) {
                return leaf.find(where_a) != std::string::npos ? 1 : leaf.find(where_b) != std::string::npos ? 2 : 0;
            }, share);
            REQUIRE(spread.signals > 50);
            INFO("line A " << a << " periods, line B " << b << ", sampled a=" << share << " measured a=" << measured_a
                           << "; " << spread.signals << " signals, standard error " << spread.stderr_points
                           << " points");
            CHECK(std::abs(share - measured_a) <= spread.tolerance());
        }
    }
}
