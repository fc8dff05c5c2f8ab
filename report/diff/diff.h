// `gprof-report diff`: compares a baseline set of runs with a new one, per key, and decides which keys regressed.
//
// A key is "<kind>:<name>": kernel:<demangled name> (with " [grid AxBxC block DxExF]" under --by-launch-config),
// memcpy:HtoD, memset, api:<name>, nvtx:<name> (nvtx:<domain>:<name> outside the default domain), and the
// whole-run figures run:gpu_busy, run:wall_time, run:step_time. docs/diff-schema.md documents the JSON form.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model.h"
#include "output/text.h"

namespace gprof::report {

enum class DiffMetric { Total, Mean, Median };
const char* diff_metric_name(DiffMetric m);
DiffMetric parse_diff_metric(const std::string& text);  // throws std::invalid_argument

// "10us", "1.5ms", "2s", "250ns", "250" (ns). Throws std::invalid_argument with a message for the user.
int64_t parse_duration_ns(const std::string& text);

// ----- figures of one run ----------------------------------------------------------------------------------

// Every duration of every key in one run (a run = one run directory or one trace file).
struct RunFigures {
    std::string label;  // the input path
    std::map<std::string, std::vector<int64_t>> instances;  // key -> durations, ns
    std::vector<std::string> warnings;
};

struct FigureOptions {
    bool by_launch_config = false;
    std::string step_pattern;  // empty: analysis_steps.h's default
};

RunFigures extract_figures(const Run& run, const FigureOptions& options);

// ----- thresholds ------------------------------------------------------------------------------------------

struct KeyRule {
    std::string pattern;   // ECMAScript regex, whole key
    std::regex re;
    std::optional<double> fail_above_pct;
    std::optional<int64_t> min_delta_ns;
    std::optional<bool> gate;  // false: shown, never fails the build
    bool ignore = false;       // not shown at all
};

struct Thresholds {
    double fail_above_pct = 10.0;
    int64_t min_delta_ns = 10'000;
    DiffMetric metric = DiffMetric::Total;
    double alpha = 0.05;                 // significance level of the one-sided test
    std::vector<KeyRule> rules;          // first match wins
};

// The per-key decision inputs after rules are applied.
struct KeyThreshold {
    double fail_above_pct = 0;
    int64_t min_delta_ns = 0;
    bool gate = true;
    bool ignore = false;
    std::string rule;  // pattern of the rule that applied, "" for the defaults
};

// API keys are informational by default: their time mostly mirrors waiting for GPU work that the kernel and
// memcpy keys already gate on. A rule with "gate": true turns them on.
KeyThreshold threshold_for(const Thresholds& t, const std::string& key);

// Reads the JSON config file (docs/ci.md "Thresholds file") into t. Top-level values replace t's fields unless
// the matching `cli_set_*` flag says the command line set them. Throws std::runtime_error with a message.
struct CliOverrides {
    bool fail_above = false, min_delta = false, metric = false, alpha = false;
};
void load_thresholds_file(const std::string& path, Thresholds& t, const CliOverrides& cli);

// ----- comparison ------------------------------------------------------------------------------------------

struct DiffSide {
    size_t runs_present = 0;  // runs holding the key
    double count = 0;         // medians over runs of each per-run figure (runs without the key count 0)
    double total = 0, mean = 0, median = 0;
    std::vector<double> samples;  // per-run value of the chosen metric (the test's input)
};

// A side's figure for the metric the comparison is made on (DiffSide::total, mean or median).
double diff_metric_value(const DiffSide& s, DiffMetric m);

enum class DiffStatus { Regression, Improvement, NotSignificant, Unchanged, New, Vanished };
const char* diff_status_name(DiffStatus s);  // "regression", "improvement", "not_significant", ...

struct DiffKey {
    std::string key, kind, name;
    DiffSide base, cand;
    DiffStatus status = DiffStatus::Unchanged;
    bool fails = false;                 // status is Regression and the key gates
    std::optional<double> change_pct;   // (new - base) / base * 100 on the metric; none when base is 0
    double delta_ns = 0;                // new - base on the metric
    // One-sided Mann-Whitney U p-value of "new is slower (faster) than base by more than the threshold", in the
    // direction of the change; none without the test (fewer than 3 runs on a side).
    std::optional<double> p_value;
    std::optional<double> confidence;   // 1 - p_value
    KeyThreshold threshold;
};

// A key's status as the table, markdown and HTML renderings print it: "REGRESSION" (it fails the build),
// "regression (not gated)", "improvement", "noise?", "unchanged", "new", "vanished".
std::string diff_status_text(const DiffKey& k);

struct DiffResult {
    std::vector<std::string> base_labels, new_labels;
    Thresholds thresholds;
    bool noise_protected = false;  // both sides had enough runs for the test to reach alpha
    std::string test;              // "mann-whitney-u" or "none"
    std::string protection_note;   // why the verdict is or is not protected against noise
    std::vector<DiffKey> keys;     // ordered: failing, other regressions, new, vanished, improvements, rest
    std::vector<std::string> warnings;
    size_t failures() const;
    int exit_code() const { return failures() > 0 ? 1 : 0; }
};

DiffResult compare_runs(const std::vector<RunFigures>& base, const std::vector<RunFigures>& cand,
                        const Thresholds& thresholds);

// ----- output ----------------------------------------------------------------------------------------------

inline constexpr int kDiffSchemaVersion = 1;

struct DiffRenderOptions {
    bool colour = false;       // ANSI colours (table only; the command enables it on a tty)
    bool show_unchanged = false;  // table/markdown: list unchanged keys too
    size_t max_rows = 50;      // table/markdown rows beyond which the rest is summarised
    size_t name_width = kDefaultNameWidth;  // table/markdown: keys shortened to this many characters (0 = full)
};

void render_diff_table(const DiffResult& r, const DiffRenderOptions& o, std::ostream& out);
void render_diff_markdown(const DiffResult& r, const DiffRenderOptions& o, std::ostream& out);
nlohmann::json diff_to_json(const DiffResult& r);

}  // namespace gprof::report
