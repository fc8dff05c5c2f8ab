// gprof_run._reader: the extension module behind gprof_run.events(). It reads traces with the project's own reader
// (event_columns.h) and hands each column to Python as a memoryview over the C++ vector (no copy, no per-row Python
// object); gprof_run/_events.py turns them into numpy arrays, a DataFrame or plain arrays.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "event_columns.h"
#include "gprof/version.h"

namespace nb = nanobind;
using namespace gprof;

namespace {

// A column's vector, moved to the heap and owned by a capsule that the memoryview keeps alive.
template <class T> nb::object as_memoryview(std::vector<T>&& values) {
    auto* owned = new std::vector<T>(std::move(values));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    size_t shape[1] = {owned->size()};
    return nb::cast(nb::ndarray<nb::memview, T, nb::ndim<1>>(owned->data(), 1, shape, owner));
}

nb::dict read_events(const std::vector<std::string>& inputs, const std::string& kind,
                     const std::optional<std::vector<std::string>>& columns, const std::vector<int64_t>& pids,
                     const std::vector<uint32_t>& devices, const std::string& time_range,
                     const std::vector<std::string>& clock_offsets, bool nested_driver_calls) {
    python::EventQuery q;
    for (const auto& i : inputs) q.inputs.emplace_back(i);
    q.kind = kind;
    q.columns = columns;
    q.filter.pids = pids;
    q.filter.devices = devices;
    q.filter.nested_driver_calls = nested_driver_calls;
    if (!time_range.empty()) report::parse_time_range(time_range, q.filter);  // std::invalid_argument: ValueError
    for (const auto& o : clock_offsets) report::parse_clock_offset(o, q.filter);

    python::EventTable table;
    {
        nb::gil_scoped_release unlocked;  // a notebook's other threads run while a large run is read
        table = python::read_events(q);
    }

    nb::list cols;
    for (auto& c : table.columns) {
        nb::object data = std::visit([](auto&& v) { return as_memoryview(std::move(v)); }, std::move(c.data));
        nb::object categories = c.categorical ? nb::cast(c.categories) : nb::none();
        cols.append(nb::make_tuple(c.name, data, categories));
    }
    nb::dict out;
    out["kind"] = table.kind;
    out["rows"] = table.rows;
    out["columns"] = cols;
    out["warnings"] = table.warnings;
    out["traces"] = table.traces;
    return out;
}

}  // namespace

NB_MODULE(_reader, m) {
    m.doc() = "gprof-run's trace reader (use gprof_run.events)";
    m.attr("version") = GPROF_VERSION;
    m.def("event_kinds", &python::event_kinds, "The record kinds events() reads, by name.");
    m.def("event_columns", [](const std::string& kind) { return python::event_columns(kind); }, nb::arg("kind"),
          "The columns of one kind, in order.");
    m.def("read_events", &read_events, nb::arg("inputs"), nb::arg("kind"), nb::arg("columns").none(),
          nb::arg("pids"), nb::arg("devices"), nb::arg("time_range"), nb::arg("clock_offsets"),
          nb::arg("nested_driver_calls"));
}
