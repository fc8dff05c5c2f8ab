// `gprof-report timeline [-o FILE] [--format json|perfetto] [--gzip] [filters] RUN...`: the timeline of a run.
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "output/cli_options.h"
#include "output/output_file.h"
#include "output/table.h"
#include "timeline/timeline.h"

namespace gprof::report {

namespace {

namespace fs = std::filesystem;

struct TimelineArgs {
    std::vector<std::string> inputs;
    std::string output, format;
    bool gzip = false;
    bool force = false;
    bool no_analysis = false;
    bool all_processes = false;
    bool no_samples = false;
    FilterArgs filters;
};

int run_timeline(const TimelineArgs& a) {
    try {
        Filter f = a.filters.build();
        std::vector<fs::path> in(a.inputs.begin(), a.inputs.end());
        const fs::path asked = !a.output.empty() ? fs::path(a.output)
                               : a.format == "perfetto" ? fs::path("timeline.pftrace")
                               : a.gzip                 ? fs::path("timeline.json.gz")
                                                        : fs::path("timeline.json");
        // Refused before the run is read (output/output_file.h: the one policy for every output).
        if (auto e = OutputFile::check(asked, OutputPolicy{a.force}); !e.empty()) return cli_error(e);
        auto traces = expand_inputs(in);
        if (auto e = check_processes(traces, f.pids); !e.empty()) return cli_error(e);
        LoadOptions lo;
        lo.filter = f;
        Run run = load_run(traces, lo);
        for (const auto& w : run.all_warnings()) cli_warning(w);
        if (run.processes.empty()) return cli_error("no readable trace among the inputs");
        TimelineOptions to;
        to.format = !a.format.empty()  ? (a.format == "perfetto" ? TimelineFormat::Perfetto : TimelineFormat::ChromeJson)
                    : a.output.empty() ? TimelineFormat::ChromeJson
                                       : timeline_format_for(a.output);
        if (to.format == TimelineFormat::Perfetto && a.gzip) return cli_error("--gzip applies to the JSON timeline only");
        fs::path out = !a.output.empty()                         ? fs::path(a.output)
                       : to.format == TimelineFormat::Perfetto ? fs::path("timeline.pftrace")
                       : a.gzip                                 ? fs::path("timeline.json.gz")
                                                                : fs::path("timeline.json");
        to.gzip = a.gzip;
        to.output.force = a.force;
        to.analysis_track = !a.no_analysis;
        to.all_processes = a.all_processes;
        to.cpu_samples = !a.no_samples;
        TimelineStats st = write_timeline(run, out, to);
        for (const auto& w : st.warnings) cli_warning(w);
        if (st.slices == 0)
            if (std::string hint = time_range_hint(f); !hint.empty()) cli_warning(hint);
        std::cerr << "gprof-report: wrote " << out.string() << " (" << st.events << " events, "
                  << format_fixed(static_cast<double>(st.file_bytes) / 1e6, 1) << " MB)\n";
        return 0;
    } catch (const std::exception& e) {
        return cli_error(e.what());
    }
}

}  // namespace

void register_timeline_command(CLI::App& app, int* exit_code) {
    auto* cmd = app.add_subcommand("timeline", "Timeline of a run: Chrome Trace Event JSON or Perfetto protobuf "
                                               "(open either in ui.perfetto.dev)");
    auto a = std::make_shared<TimelineArgs>();
    cmd->add_option("inputs", a->inputs, "Run directories or trace files")->required();
    cmd->add_option("-o,--output", a->output,
                    "Output file (default: timeline.json, timeline.json.gz with --gzip, timeline.pftrace with "
                    "--format perfetto); a name ending in .pftrace or .perfetto-trace selects the protobuf");
    cmd->add_option("--format", a->format, "json (Chrome Trace Event) or perfetto (Perfetto's native protobuf, "
                                           "about 1/5 the size); default: by the output's name, else json")
        ->check(CLI::IsMember({"json", "perfetto"}));
    cmd->add_flag("--gzip", a->gzip, "Write gzip-compressed JSON (Perfetto reads it directly)");
    add_force_flag(cmd, a->force, "Replace the output file");
    cmd->add_flag("--no-analysis", a->no_analysis, "Leave out the analysis track (verdict, idle gaps, findings)");
    cmd->add_flag("--all-processes", a->all_processes,
                  "Draw every helper process with no GPU or NVTX activity (compilers, shells) as a process of its own; "
                  "otherwise they are one process named like the summary's line");
    cmd->add_flag("--no-samples", a->no_samples,
                  "Leave out the CPU samples (an instant each on its thread, with its stack)");
    a->filters.add_to(cmd);
    cmd->callback([a, exit_code] { *exit_code = run_timeline(*a); });
}

}  // namespace gprof::report
