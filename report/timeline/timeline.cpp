// The timeline's entry points: build the model once, pick the encoder, write the file, say what went wrong.
#include "timeline/timeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include <zlib.h>

#include "output/output_file.h"
#include "output/table.h"
#include "timeline/encoders.h"
#include "timeline/model.h"

namespace gprof::report {

namespace {

timeline::TimelineModel model_of(const Run& run, const TimelineOptions& options) {
    timeline::ModelOptions mo;
    mo.analysis_track = options.analysis_track;
    mo.cpu_samples = options.cpu_samples;
    mo.analysis_slices = options.analysis_slices;
    mo.all_processes = options.all_processes;
    return timeline::build_timeline_model(run, mo);
}

uint64_t event_count(const timeline::TimelineModel& m) {
    return m.slices.size() + m.instants.size() + m.counters.size();
}

timeline::EncodeStats encode(const timeline::TimelineModel& m, TimelineFormat format, const timeline::ByteSink& sink) {
    return format == TimelineFormat::Perfetto ? timeline::write_perfetto(m, sink) : timeline::write_chrome_json(m, sink);
}

void fill_stats(TimelineStats& st, const timeline::TimelineModel& m, const timeline::EncodeStats& enc,
                const TimelineOptions& options) {
    st.events = enc.events;
    st.encoded_bytes = enc.bytes;
    st.slices = m.slices.size();
    st.flows = m.flows.size();
    st.unmatched_gpu_ops = m.counts.unmatched_gpu_ops;
    st.overflow_slices = m.counts.overflow_slices;
    st.zero_timestamps = m.counts.zero_timestamps;
    for (const auto& g : m.groups) st.analysis_track |= g.kind == timeline::GroupKind::Analysis;
    st.warnings.insert(st.warnings.end(), m.warnings.begin(), m.warnings.end());
    if (st.format == TimelineFormat::ChromeJson && st.encoded_bytes > options.too_big_bytes)
        st.warnings.push_back("the timeline JSON is " + format_fixed(static_cast<double>(st.encoded_bytes) / 1e9, 2) +
                              " GB: Perfetto UI fails to load traces around 1 GB; write the protobuf (--format perfetto "
                              "or -o x.pftrace), or narrow it with --time-range, --process, --device or --kernel-filter");
    if (st.format == TimelineFormat::Perfetto && st.encoded_bytes > options.too_big_bytes / 2)
        st.warnings.push_back("the timeline is " + format_fixed(static_cast<double>(st.encoded_bytes) / 1e9, 2) +
                              " GB: Perfetto UI needs 2-4 times that in memory and may fail; open it with "
                              "trace_processor (server mode), or narrow it with --time-range, --process or --device");
    if (st.overflow_slices)
        st.warnings.push_back(std::to_string(st.overflow_slices) +
                              " slices overlapped others on their track and were moved to overflow tracks");
    if (st.unmatched_gpu_ops)
        st.warnings.push_back(std::to_string(st.unmatched_gpu_ops) +
                              " GPU operations have no launching API call in the trace: drawn without a flow arrow");
    if (st.zero_timestamps)
        st.warnings.push_back(std::to_string(st.zero_timestamps) +
                              " records have an unknown (zero) timestamp and could not be placed on the timeline");
    uint64_t hidden = 0;
    for (const auto& p : m.run->processes) hidden += p.hidden_driver_calls;
    if (hidden)
        st.warnings.push_back(std::to_string(hidden) + " driver calls the CUDA runtime made itself (cuKernelGetName, "
                              "...) are left out, as in the API tables (--cuda-nested-driver-calls keeps them)");
}

// Both writers take the descriptor over (they close it) and return false on any write error.
bool write_gzip(const timeline::TimelineModel& m, TimelineFormat format, int fd, timeline::EncodeStats& enc) {
    gzFile gz = gzdopen(fd, "wb6");
    if (!gz) {
        ::close(fd);
        return false;
    }
    bool failed = false;
    enc = encode(m, format, [&](const char* d, size_t n) {
        if (!failed && gzwrite(gz, d, static_cast<unsigned>(n)) != static_cast<int>(n)) failed = true;
    });
    if (gzclose(gz) != Z_OK) failed = true;
    return !failed;
}

bool write_plain(const timeline::TimelineModel& m, TimelineFormat format, int fd, timeline::EncodeStats& enc) {
    FILE* f = ::fdopen(fd, "wb");
    if (!f) {
        ::close(fd);
        return false;
    }
    bool failed = false;
    enc = encode(m, format, [&](const char* d, size_t n) {
        if (!failed && std::fwrite(d, 1, n, f) != n) failed = true;
    });
    if (std::fclose(f) != 0) failed = true;
    return !failed;
}

}  // namespace

TimelineFormat timeline_format_for(const std::filesystem::path& path) {
    std::string name = path.filename().string();
    auto ends_with = [&](std::string_view suffix) {
        return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    return ends_with(".pftrace") || ends_with(".perfetto-trace") ? TimelineFormat::Perfetto : TimelineFormat::ChromeJson;
}

const char* timeline_format_name(TimelineFormat format) {
    return format == TimelineFormat::Perfetto ? "perfetto" : "json";
}

TimelineStats timeline_to_string(const Run& run, std::string& out, const TimelineOptions& options) {
    TimelineStats st;
    st.format = options.format;
    out.clear();
    timeline::TimelineModel m = model_of(run, options);
    auto enc = encode(m, options.format, [&](const char* d, size_t n) { out.append(d, n); });
    fill_stats(st, m, enc, options);
    st.file_bytes = st.encoded_bytes;
    return st;
}

TimelineStats write_timeline(const Run& run, const std::filesystem::path& path, const TimelineOptions& options) {
    TimelineStats st;
    st.format = options.format;
    st.path = path;
    timeline::TimelineModel m = model_of(run, options);
    if (st.format == TimelineFormat::ChromeJson && options.json_event_limit && event_count(m) > *options.json_event_limit) {
        st.format = TimelineFormat::Perfetto;
        st.path = std::filesystem::path(path).replace_extension(".pftrace");
        if (st.path.filename() == path.filename()) st.path += ".pftrace";
        st.warnings.push_back("the run has " + std::to_string(event_count(m)) + " timeline events, more than JSON can " +
                              "carry to Perfetto UI (" + std::to_string(*options.json_event_limit) + "): wrote the " +
                              "Perfetto protobuf " + st.path.string() + " instead of " + path.string());
    }
    // A name ending in .gz means gzip, as everywhere else (zcat, Perfetto UI read it): --gzip or not.
    std::string fname = st.path.filename().string();
    bool gz_suffix = fname.size() > 3 && fname.compare(fname.size() - 3, 3, ".gz") == 0;
    bool gzip = (options.gzip || gz_suffix) && st.format == TimelineFormat::ChromeJson;
    timeline::EncodeStats enc;
    OutputFile out(st.path, options.output);
    errno = 0;
    bool ok = gzip ? write_gzip(m, st.format, out.fd(), enc) : write_plain(m, st.format, out.fd(), enc);
    out.commit(/*closed_by_caller=*/true, !ok);
    fill_stats(st, m, enc, options);
    st.gzipped = gzip;
    st.file_bytes = st.encoded_bytes;
    if (gzip) {
        std::error_code ec;
        st.file_bytes = std::filesystem::file_size(st.path, ec);
    }
    return st;
}

}  // namespace gprof::report
