// report.html and the diff as HTML (report/html/): escaping of hostile names, the figures the page draws (computed
// in C++, checked here against hand-worked answers), the page's sections and its size bound, the end-of-run file
// and the CLI. What a real browser makes of the pages is checked by check_html_in_browser.py.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "diff/diff.h"
#include "end_of_run/end_of_run.h"
#include "html/escape.h"
#include "output/text.h"
#include "html/figures.h"
#include "html/html.h"
#include "html/svg.h"
#include "record_builders.h"
#include "report_fixture.h"

using namespace gprof::report;
using namespace gprof::testing;
namespace h = gprof::report::html;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

size_t occurrences(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

std::string read(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), {});
}

// A run whose names try to break out of the page: markup in a kernel, an NVTX range, a thread name and argv, and
// bytes that are not UTF-8.
void fill_hostile_run(gprof::trace::TraceWriter& w) {
    using namespace gprof::trace;
    w.add(Thread{100, w.intern("<img src=x onerror=alert(1)>")});
    Device d;
    d.name = w.intern("GPU \"quoted\" & <b>bold</b>");
    d.sm_count = 4;
    w.add(d);
    const StringId launch = w.intern("cudaLaunchKernel");
    const StringId evil = w.intern("<script>alert('kernel')</script>");
    const StringId bad_utf8 = w.intern("kern\xff\xfe\xc0\xaf\xed\xa0\x80_end\xe2\x82");
    for (uint32_t i = 0; i < 20; ++i) {
        uint64_t base = kT0 + 1000 + i * 10'000;
        w.add(api_call(100, base, base + 2000, i + 1, launch));
        Kernel k = kernel_op(base + 3000, base + 6000, i + 1, i % 2 ? evil : bad_utf8);
        k.stream = 7;
        k.grid_x = k.grid_y = k.grid_z = 1;
        k.block_x = 64;
        k.block_y = k.block_z = 1;
        w.add(k);
        Nvtx n = nvtx_range(100, base, base + 9000, w.intern("step</title><script>alert(2)</script>"));
        n.end_tid = 100;
        w.add(n);
    }
}

gprof::trace::HeaderInfo hostile_header() {
    static const char* argv[] = {"./app", "--name=<script>alert(3)</script>"};
    gprof::trace::HeaderInfo h = test_header(77);
    h.argv = argv;
    h.argc = 2;
    return h;
}

}  // namespace

TEST_CASE("escape: markup and quotes become references, invalid UTF-8 and controls become U+FFFD", "[html]") {
    CHECK(h::escape("<script>alert('x')</script> & \"y\"") ==
          "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;");
    // Valid multi-byte text passes unchanged: 2, 3 and 4-byte sequences.
    CHECK(h::escape("Gr\xC3\xB6\xC3\x9F" "e \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80") ==
          "Gr\xC3\xB6\xC3\x9F" "e \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x9A\x80");
    CHECK(h::escape("a\xff" "b") == "a" + kFffd + "b");                        // never a UTF-8 byte
    CHECK(h::escape("\xc0\xaf") == kFffd + kFffd);                             // overlong '/'
    CHECK(h::escape("\xed\xa0\x80") == kFffd + kFffd + kFffd);                 // a surrogate
    CHECK(h::escape("x\xe2\x82") == "x" + kFffd + kFffd);                      // cut short at the end
    CHECK(h::escape("\xf4\x90\x80\x80") == kFffd + kFffd + kFffd + kFffd);     // above U+10FFFF
    CHECK(h::escape(std::string("a\0b\x01\x7f\tc\n", 8)) == "a" + kFffd + "b" + kFffd + kFffd + "\tc\n");
    CHECK(gprof::report::valid_utf8("ok\xff<") == "ok" + kFffd + "<");
    CHECK(h::utf8_length("\xE6\x97\xA5\xE6\x9C\xAC!") == 3);
}

TEST_CASE("shorten_name: readable kernel names with the full name kept for the hover text", "[html]") {
    CHECK(h::shorten_name("short_kernel(float*)") == "short_kernel(float*)");
    std::string name =
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
        "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
        "(at::native::ADAM_MODE)1, false>, float*, double, double>(at::native::(anonymous "
        "namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>, "
        "float*, double, double)";
    std::string s = h::shorten_name(name, 100);
    INFO(s);
    CHECK(h::utf8_length(s) <= 100);
    // "void ", the namespaces and the parameters dropped; the first template level, which tells the instances of
    // the template apart, kept.
    CHECK(s == "multi_tensor_apply_kernel<TensorListMetadata<\xE2\x80\xA6>, FusedAdamMathFunctor<\xE2\x80\xA6>, float*, "
               "double, double>(\xE2\x80\xA6)");
    // Still too long after all that: cut in the middle, by code points, with the cut shown.
    std::string cut = h::shorten_name(std::string(200, 'k'), 50);
    CHECK(cut == std::string(32, 'k') + "\xE2\x80\xA6" + std::string(17, 'k'));
    // operator<< is a name, not a template bracket: no damage, and still cut to length.
    std::string op = "std::basic_ostream<char>& operator<< <Foo>(std::basic_ostream<char>&, Foo const&)" +
                     std::string(80, 'x');
    std::string so = h::shorten_name(op, 60);
    CHECK(h::utf8_length(so) <= 60);
    // Cut by code points, never inside one.
    std::string wide;
    for (int i = 0; i < 100; ++i) wide += "\xE6\x97\xA5";
    std::string sw = h::shorten_name(wide, 20);
    CHECK(h::utf8_length(sw) == 20);
    CHECK(gprof::report::valid_utf8(sw) == sw);
}

TEST_CASE("busy_fractions: the share of each bin covered by busy intervals", "[html]") {
    // Window [0, 1000) in 4 bins of 250: busy [0,125) [200,300) [900,1000).
    auto f = h::busy_fractions({{0, 125}, {200, 300}, {900, 1000}}, {0, 1000}, 4);
    REQUIRE(f.size() == 4);
    CHECK(f[0] == Approx(0.7));   // 125 + 50 of 250
    CHECK(f[1] == Approx(0.2));   // 50 of 250
    CHECK(f[2] == Approx(0.0));
    CHECK(f[3] == Approx(0.4));   // 100 of 250
    // A window that does not divide evenly: the last bin's share is of its part inside the window.
    auto g = h::busy_fractions({{0, 10}}, {0, 10}, 3);  // bins of 4: [0,4) [4,8) [8,10)
    CHECK(g[0] == Approx(1.0));
    CHECK(g[1] == Approx(1.0));
    CHECK(g[2] == Approx(1.0));
}

TEST_CASE("axes: round ticks in one unit", "[html]") {
    h::Axis t = h::time_axis(7.3e6);
    CHECK(t.unit == "ms");
    CHECK(t.max >= 7.3e6);
    CHECK(t.ticks.front() == 0);
    CHECK(t.ticks.back() == Approx(t.max));
    CHECK(h::axis_label(t, 2e6) == "2 ms");
    h::Axis b = h::bytes_axis(240.68 * 1024 * 1024);
    CHECK(b.unit == "MiB");
    CHECK(h::axis_label(b, 100.0 * 1024 * 1024) == "100 MiB");
    CHECK(h::trim_number(1.50, 3) == "1.5");
    CHECK(h::trim_number(20.0, 3) == "20");
}

TEST_CASE("memory_figures: device memory in use over time, its peak and the budgets", "[html]") {
    TempDir dir;
    write_small_run(dir);
    Run run = load_run({dir.path()});
    // The small run allocates 1 MB at +900 ns and 2 MB at +950 ns and frees 1 MB at +445 us.
    auto f = h::memory_figures(run, {0, 500'000}, h::Limits{});
    REQUIRE(f.devices.size() == 1);
    const auto& d = f.devices.front();
    CHECK(d.device == 0);
    CHECK(d.peak_bytes == 3'000'000);
    CHECK(d.peak_at == 950);
    CHECK(d.capacity == (80ull << 30));
    REQUIRE(d.max_in_use.size() == 400);
    CHECK(d.max_in_use.front() == 3'000'000);   // bin 0 holds both allocations
    CHECK(d.max_in_use[100] == 3'000'000);      // carried on until the release
    CHECK(d.max_in_use.back() == 2'000'000);    // after it
    CHECK(d.pool_reserved.empty());
    REQUIRE(f.budgets.size() == 1);
    CHECK(f.budgets.front().allocations == 2);
    CHECK(f.budgets.front().live_bytes == 2'000'000);
}

TEST_CASE("step_figures: one bar per step, or bins of consecutive steps, the histogram counts every step", "[html]") {
    StepView v;
    for (int i = 0; i < 1000; ++i) {
        v.steps.push_back({0, 1, i * 100, i * 100 + 10 + (i % 10), "step"});
        v.gpu_ns.push_back(5);
    }
    v.min = 10;
    v.max = 19;
    auto f = h::step_figures(v, h::Limits{});
    REQUIRE(f.bars.size() == 334);  // 3 steps a bar
    CHECK(f.bars.front().count == 3);
    CHECK(f.bars.front().mean_ns == Approx(11));
    CHECK(f.bars.front().min_ns == 10);
    CHECK(f.bars.front().max_ns == 12);
    CHECK(f.bars.back().count == 1);
    uint64_t total = 0;
    for (auto c : f.histogram) total += c;
    CHECK(total == 1000);
    CHECK(f.histogram.back() == 100);  // the 19 ns steps land in the last bin, not past it
}

TEST_CASE("the run page: every section, the run's own names, nothing fetched", "[html]") {
    TempDir dir;
    write_small_run(dir);
    std::string page = h::render_run_page({dir.path()}, {});
    CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
    for (const char* id : {"verdict", "utilisation", "kernels", "copies", "memory", "steps", "nvtx", "api", "processes"})
        CHECK(page.find("<section id=\"" + std::string(id) + "\">") != std::string::npos);
    CHECK(page.find("kernel(float*, int)") != std::string::npos);        // demangled
    CHECK(page.find("[CUDA memcpy HtoD]") != std::string::npos);
    CHECK(page.find("Test GPU") != std::string::npos);
    CHECK(page.find("forward") != std::string::npos);                    // a module inside the steps
    CHECK(page.find("class=\"chart time-chart\"") != std::string::npos);
    CHECK(page.find("class=\"chart bar-chart\"") != std::string::npos);
    CHECK(page.find("id=\"warnings\"") != std::string::npos);            // 5 dropped records
    CHECK(page.find("5 records were dropped") != std::string::npos);
    // Offline: no URL to fetch from, and a policy that forbids it.
    CHECK(page.find("default-src 'none'") != std::string::npos);
    CHECK(page.find("http://") == std::string::npos);
    CHECK(page.find("https://") == std::string::npos);
    CHECK(page.find(" src=") == std::string::npos);
    CHECK(occurrences(page, "<script") == 1);
}

TEST_CASE("the run page escapes hostile names and replaces invalid UTF-8", "[html]") {
    TempDir dir;
    write_trace(dir.file("app.77.gprof"), fill_hostile_run, true, hostile_header());
    std::string page = h::render_run_page({dir.path()}, {});
    CHECK(occurrences(page, "<script") == 1);  // ours only
    CHECK(page.find("<script>alert") == std::string::npos);
    CHECK(page.find("</title><script>") == std::string::npos);
    CHECK(page.find("<img") == std::string::npos);
    CHECK(page.find("<b>bold") == std::string::npos);
    CHECK(page.find("&lt;script&gt;alert(&#39;kernel&#39;)&lt;/script&gt;") != std::string::npos);
    CHECK(page.find("--name=&lt;script&gt;alert(3)&lt;/script&gt;") != std::string::npos);
    CHECK(page.find("kern" + kFffd + kFffd) != std::string::npos);
    CHECK(gprof::report::valid_utf8(page) == page);  // the whole page is valid UTF-8
}

TEST_CASE("the run page stays the same size however many events the run holds", "[html]") {
    auto page_for = [](uint32_t kernels) {
        TempDir dir;
        write_trace(dir.file("app.1.gprof"), [&](gprof::trace::TraceWriter& w) {
            using namespace gprof::trace;
            const StringId launch = w.intern("cudaLaunchKernel");
            StringId names[8];
            for (int i = 0; i < 8; ++i) names[i] = w.intern(("_Z7kernel" + std::to_string(i) + "Pf").c_str());
            for (uint32_t i = 0; i < kernels; ++i) {
                uint64_t base = kT0 + i * 10'000ull;
                w.add(api_call(1, base, base + 2000, i + 1, launch));
                Kernel k = kernel_op(base + 3000, base + 3000 + 1000 + (i * 37) % 5000, i + 1, names[i % 8]);
                k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
                w.add(k);
                Nvtx n = nvtx_range(1, base, base + 9000, w.intern("step"));
                n.end_tid = 1;
                w.add(n);
            }
        });
        return h::render_run_page({dir.path()}, {}).size();
    };
    size_t small = page_for(2'000), large = page_for(50'000);
    INFO("2k kernels: " << small << " bytes, 50k kernels: " << large << " bytes");
    CHECK(large < 400'000);
    CHECK(large < small * 3 / 2);  // 25x the events, not 25x the page
}

TEST_CASE("finish_run writes report.html 0600, and never through a planted symlink", "[html][end_of_run]") {
    TempDir dir;
    write_small_run(dir);
    std::ostringstream out;
    const OutputPolicy private_new{false, FileMode::Private};
    EndOfRunOptions o{.run_dir = dir.path(), .summary_out = &out,
                      .outputs = {{"html", dir.path() / "report.html", private_new}}};
    auto r = finish_run(o);
    CHECK(r.ok);
    REQUIRE(r.path_of("html"));
    struct stat st {};
    REQUIRE(::stat(r.path_of("html")->c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    std::string page = read(*r.path_of("html"));
    CHECK(page.find("kernel(float*, int)") != std::string::npos);
    CHECK(page.find("</html>") != std::string::npos);

    TempDir dir2, elsewhere;
    write_small_run(dir2);
    std::string victim = elsewhere.file("victim.txt");
    { std::ofstream(victim) << "precious\n"; }
    std::filesystem::create_symlink(victim, dir2.path() / "report.html");
    o.run_dir = dir2.path();
    o.outputs = {{"html", dir2.path() / "report.html", private_new}};
    auto bad = finish_run(o);
    CHECK_FALSE(bad.ok);
    CHECK_FALSE(bad.path_of("html"));
    CHECK(read(victim) == "precious\n");

    o.outputs.clear();  // --no-html
    TempDir dir3;
    write_small_run(dir3);
    o.run_dir = dir3.path();
    auto none = finish_run(o);
    CHECK_FALSE(none.path_of("html"));
    CHECK_FALSE(std::filesystem::exists(dir3.path() / "report.html"));
}

TEST_CASE("the diff page: regressions first, bars with the threshold, escaped keys", "[html][diff]") {
    RunFigures base, cand;
    base.label = "base-run";
    cand.label = "new-run";
    base.instances["kernel:slow<script>"] = {100'000, 100'000};
    cand.instances["kernel:slow<script>"] = {200'000, 200'000};  // +100 %, +200 us: fails
    base.instances["kernel:same"] = {50'000};
    cand.instances["kernel:same"] = {50'000};
    cand.instances["kernel:brand_new"] = {30'000};
    Thresholds th;
    DiffResult r = compare_runs({base}, {cand}, th);
    REQUIRE(r.failures() == 1);
    std::string page = h::render_diff_page(r, false);
    CHECK(page.find("1 regression fails the thresholds") != std::string::npos);
    CHECK(page.find("kernel:slow&lt;script&gt;") != std::string::npos);
    CHECK(occurrences(page, "<script") == 1);
    size_t regression = page.find("REGRESSION"), fresh = page.find(">new<");
    REQUIRE(regression != std::string::npos);
    REQUIRE(fresh != std::string::npos);
    CHECK(regression < fresh);                                  // regressions first
    CHECK(page.find("class=\"threshold\"") != std::string::npos);
    CHECK(page.find("1 unchanged keys") != std::string::npos);  // folded away
}

TEST_CASE("gprof-report html and diff --format html from the command line", "[html][cli]") {
    TempDir dir, out;
    write_small_run(dir);
    std::string exe = GPROF_REPORT_EXE;
    std::string file = out.file("r.html");
    CHECK(std::system((exe + " html " + dir.path().string() + " -o " + file + " 2>/dev/null").c_str()) == 0);
    CHECK(read(file).find("<section id=\"kernels\">") != std::string::npos);
    // A missing run is a usage error.
    int rc = std::system((exe + " html " + out.file("nope") + " -o " + out.file("x.html") + " 2>/dev/null").c_str());
    CHECK(WEXITSTATUS(rc) == 2);
    std::string diff_file = out.file("d.html");
    rc = std::system((exe + " diff " + dir.path().string() + " " + dir.path().string() + " --format html -o " +
                      diff_file + " 2>/dev/null").c_str());
    CHECK(WEXITSTATUS(rc) == 0);
    CHECK(read(diff_file).find("No regression beyond the thresholds") != std::string::npos);
}
