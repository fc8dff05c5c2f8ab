// Threshold defaults, per-key rules and the JSON thresholds file of `diff` (format: docs/ci.md).
#include <cctype>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "diff/diff.h"

namespace gprof::report {

const char* diff_metric_name(DiffMetric m) {
    switch (m) {
        case DiffMetric::Total: return "total";
        case DiffMetric::Mean: return "mean";
        case DiffMetric::Median: return "median";
    }
    return "total";
}

DiffMetric parse_diff_metric(const std::string& text) {
    if (text == "total") return DiffMetric::Total;
    if (text == "mean") return DiffMetric::Mean;
    if (text == "median") return DiffMetric::Median;
    throw std::invalid_argument("unknown metric '" + text + "' (expected total, mean or median)");
}

int64_t parse_duration_ns(const std::string& text) {
    size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    std::string number = text.substr(0, i), unit = text.substr(i);
    double value = 0;
    try {
        size_t used = 0;
        value = std::stod(number, &used);
        if (used != number.size()) throw std::invalid_argument("");
    } catch (const std::exception&) {
        throw std::invalid_argument("invalid duration '" + text + "' (expected e.g. 250ns, 10us, 1.5ms, 2s)");
    }
    double scale = 0;
    if (unit.empty() || unit == "ns") scale = 1;
    else if (unit == "us") scale = 1e3;
    else if (unit == "ms") scale = 1e6;
    else if (unit == "s") scale = 1e9;
    else throw std::invalid_argument("invalid duration unit in '" + text + "' (use ns, us, ms or s)");
    return static_cast<int64_t>(std::llround(value * scale));
}

KeyThreshold threshold_for(const Thresholds& t, const std::string& key) {
    KeyThreshold k;
    k.fail_above_pct = t.fail_above_pct;
    k.min_delta_ns = t.min_delta_ns;
    k.gate = key.rfind("api:", 0) != 0;
    for (const KeyRule& r : t.rules) {
        if (!std::regex_match(key, r.re)) continue;
        if (r.fail_above_pct) k.fail_above_pct = *r.fail_above_pct;
        if (r.min_delta_ns) k.min_delta_ns = *r.min_delta_ns;
        if (r.gate) k.gate = *r.gate;
        k.ignore = r.ignore;
        k.rule = r.pattern;
        break;
    }
    return k;
}

namespace {

int64_t json_duration(const nlohmann::json& v, const std::string& where) {
    if (v.is_number()) return static_cast<int64_t>(std::llround(v.get<double>()));
    if (v.is_string()) return parse_duration_ns(v.get<std::string>());
    throw std::runtime_error(where + ": expected a duration (\"10us\" or a number of ns)");
}

double json_percent(const nlohmann::json& v, const std::string& where) {
    if (!v.is_number() || v.get<double>() < 0) throw std::runtime_error(where + ": expected a percentage >= 0");
    return v.get<double>();
}

}  // namespace

void load_thresholds_file(const std::string& path, Thresholds& t, const CliOverrides& cli) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open thresholds file " + path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error("thresholds file " + path + " is not valid JSON: " + e.what());
    }
    if (!j.is_object()) throw std::runtime_error("thresholds file " + path + ": the top level must be an object");
    static const char* known[] = {"version", "fail_above", "min_delta", "metric", "alpha", "rules"};
    for (auto& [k, v] : j.items()) {
        bool ok = false;
        for (const char* n : known) ok |= k == n;
        if (!ok) throw std::runtime_error(path + ": unknown key '" + k + "'");
    }
    if (j.contains("version") && j["version"] != 1)
        throw std::runtime_error(path + ": version " + j["version"].dump() + " is not supported (expected 1)");
    try {
        if (j.contains("fail_above") && !cli.fail_above) t.fail_above_pct = json_percent(j["fail_above"], path + ": fail_above");
        if (j.contains("min_delta") && !cli.min_delta) t.min_delta_ns = json_duration(j["min_delta"], path + ": min_delta");
        if (j.contains("metric") && !cli.metric) t.metric = parse_diff_metric(j["metric"].get<std::string>());
        if (j.contains("alpha") && !cli.alpha) {
            double a = j["alpha"].get<double>();
            if (!(a > 0 && a < 1)) throw std::runtime_error(path + ": alpha must be between 0 and 1");
            t.alpha = a;
        }
        if (j.contains("rules")) {
            if (!j["rules"].is_array()) throw std::runtime_error(path + ": rules must be an array");
            size_t n = 0;
            for (const auto& r : j["rules"]) {
                std::string where = path + ": rules[" + std::to_string(n++) + "]";
                if (!r.is_object() || !r.contains("key") || !r["key"].is_string())
                    throw std::runtime_error(where + ": each rule needs a \"key\" regex");
                KeyRule rule;
                rule.pattern = r["key"].get<std::string>();
                try {
                    rule.re = std::regex(rule.pattern, std::regex::ECMAScript);
                } catch (const std::regex_error& e) {
                    throw std::runtime_error(where + ": invalid regex '" + rule.pattern + "': " + e.what());
                }
                for (auto& [k, v] : r.items()) {
                    if (k == "key") continue;
                    if (k == "fail_above") rule.fail_above_pct = json_percent(v, where + ".fail_above");
                    else if (k == "min_delta") rule.min_delta_ns = json_duration(v, where + ".min_delta");
                    else if (k == "gate") rule.gate = v.get<bool>();
                    else if (k == "ignore") rule.ignore = v.get<bool>();
                    else throw std::runtime_error(where + ": unknown key '" + k + "'");
                }
                t.rules.push_back(std::move(rule));
            }
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": wrong value type: " + e.what());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
}

}  // namespace gprof::report
