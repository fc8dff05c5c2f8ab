#include "analyze/rank_inputs.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace gprof::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A figures file holds a few numbers per step of a few ranks: 512 MiB is more than any can need.
constexpr uintmax_t kMaxFiguresFileBytes = uintmax_t(512) << 20;

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

// The run directories at or below `dir` (itself, else up to three levels down, as expand_inputs looks for traces):
// those holding traces or, when figures are used, a figures file.
void run_dirs_under(const fs::path& dir, bool use_figures, RankInputs& out) {
    auto take = [&](const fs::path& d) {
        if (use_figures && is_file(d / kRankFiguresFile)) {
            out.figures_files.push_back(d / kRankFiguresFile);
            return true;
        }
        auto traces = find_traces(d);
        if (traces.empty()) return false;
        out.run_dirs.push_back(std::move(traces));
        return true;
    };
    if (take(dir)) return;
    std::vector<fs::path> subdirs;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        if (it.depth() >= 2) it.disable_recursion_pending();
        if (it->is_directory(ec) && !it->is_symlink(ec)) subdirs.push_back(it->path());
    }
    std::sort(subdirs.begin(), subdirs.end());
    bool any = false;
    for (const auto& sub : subdirs) any |= take(sub);
    if (!any)
        throw std::runtime_error("'" + dir.string() + "' holds no *.gprof traces and no " + kRankFiguresFile +
                                 " (is it a gprof-run run directory?)");
}

}  // namespace

std::vector<RankFigures> read_figures_file(const fs::path& p) {
    std::error_code ec;
    uintmax_t size = fs::file_size(p, ec);
    if (ec) throw std::runtime_error("cannot read '" + p.string() + "': " + ec.message());
    if (size > kMaxFiguresFileBytes)
        throw std::runtime_error("'" + p.string() + "' is " + std::to_string(size >> 20) +
                                 " MiB: larger than any rank figures file (512 MiB at most)");
    std::ifstream in(p, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw std::runtime_error("cannot read '" + p.string() + "'");
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error("'" + p.string() + "' is not valid JSON");
    if (j.is_object() && j.contains("ranks") && j["ranks"].is_object()) j = j["ranks"];  // analyze's JSON
    if (!j.is_object() || !j.contains("ranks") || !j["ranks"].is_array())
        throw std::runtime_error("'" + p.string() + "' holds no rank figures (write them with gprof-report ranks "
                                 "--format json)");
    std::vector<RankFigures> out;
    try {
        for (const json& f : j["ranks"]) out.push_back(rank_figures_from_json(f));
    } catch (const std::exception& e) {
        throw std::runtime_error("'" + p.string() + "': " + e.what());
    }
    return out;
}

void write_figures_file(const std::vector<RankFigures>& figures, std::ostream& out) {
    json ranks = json::array();
    for (const auto& f : figures) ranks.push_back(rank_figures_to_json(f));
    // One line per rank: small, and still readable with jq.
    out << "{\"schema_version\": " << kRankFiguresSchemaVersion << ", \"ranks\": [";
    for (size_t i = 0; i < ranks.size(); ++i)
        out << (i ? ",\n  " : "\n  ") << ranks[i].dump(-1, ' ', false, json::error_handler_t::replace);
    out << "\n]}\n";
}

RankInputs rank_inputs(const std::vector<fs::path>& inputs, bool use_figures) {
    RankInputs out;
    for (const auto& in : inputs) {
        std::error_code ec;
        auto st = fs::status(in, ec);
        if (ec || !fs::exists(st)) {
            // expand_inputs words it (a missing path, a loop, a directory we may not enter).
            expand_inputs({in});
            throw std::runtime_error("'" + in.string() + "' cannot be read");
        }
        if (fs::is_directory(st)) {
            run_dirs_under(in, use_figures, out);
        } else if (in.extension() == ".json") {
            out.figures_files.push_back(in);
        } else {
            // A trace file: with the other traces named from its directory, one run directory.
            fs::path dir = in.parent_path();
            bool joined = false;
            if (!out.run_dirs.empty() && !out.run_dirs.back().empty() && out.run_dirs.back().back().parent_path() == dir) {
                out.run_dirs.back().push_back(in);
                joined = true;
            }
            if (!joined) out.run_dirs.push_back({in});
        }
    }
    return out;
}

std::optional<RankInputs> large_job(const std::vector<fs::path>& inputs, const std::string& step_pattern) {
    try {
        RankInputs where = rank_inputs(inputs, step_pattern.empty());
        if (where.figures_files.size() + where.run_dirs.size() > kRanksListedWhole) return where;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

JobFigures job_figures(const std::vector<fs::path>& inputs, const std::string& step_pattern,
                       const LoadOptions& options) {
    return job_figures(rank_inputs(inputs, step_pattern.empty()), step_pattern, options);
}

JobFigures job_figures(const RankInputs& where, const std::string& step_pattern, const LoadOptions& options) {
    JobFigures job;
    job.figures_files = where.figures_files.size();
    job.trace_dirs = where.run_dirs.size();
    for (const auto& file : where.figures_files) {
        for (RankFigures& f : read_figures_file(file)) {
            // Figures carry their host's own clock: the correction applies here, as it does to traces.
            auto it = options.filter.clock_offsets.find(f.host);
            if (it != options.filter.clock_offsets.end()) {
                f.first_ns += it->second;
                f.last_ns += it->second;
                for (auto& s : f.steps) s.start_ns += it->second;
            }
            job.ranks.push_back(std::move(f));
            ++job.from_figures;
        }
    }
    // One run directory at a time: its records are let go before the next is read.
    for (const auto& traces : where.run_dirs) {
        Run run = load_run(traces, options);
        for (auto& w : run.all_warnings()) job.warnings.push_back(std::move(w));
        job.processes += run.processes.size();
        for (RankFigures& f : rank_figures(run, step_pattern)) {
            job.ranks.push_back(std::move(f));
            ++job.from_traces;
        }
    }
    return job;
}

std::string job_sources(const JobFigures& job) {
    auto dirs = [](size_t n) { return std::to_string(n) + (n == 1 ? " run directory" : " run directories"); };
    if (job.trace_dirs == 0) return "the rank figures of " + dirs(job.figures_files);
    if (job.figures_files == 0) return "the traces of " + dirs(job.trace_dirs) + ", read one at a time";
    return "the rank figures of " + dirs(job.figures_files) + " and the traces of " + std::to_string(job.trace_dirs) +
           ", read one run directory at a time";
}

}  // namespace gprof::report
