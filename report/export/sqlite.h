// A run as an SQLite database with the tables and columns of `nsys export --type sqlite` where the meaning is the
// same, so queries written against nsys's export run with at most renamed tables (docs/sqlite-export.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"
#include "output/output_file.h"

namespace CLI {
class App;
}

namespace gprof::report {

// `gprof-report export`: registered by the CLI from the outputs list (end_of_run/outputs.h).
void register_export_command(CLI::App& app, int* exit_code);

// Bumped on any change a query could notice (META_DATA_EXPORT row GPROF_EXPORT_SCHEMA_VERSION).
inline constexpr int kSqliteExportSchemaVersion = 1;

struct SqliteExportStats {
    uint64_t rows = 0;                 // rows written, all tables
    std::vector<std::string> tables;   // tables written, in creation order
};

// Writes the run to `path` through OutputFile (report/output/output_file.h: written beside it under a temporary name
// and moved into place when whole; an existing file only with policy.force; never through a symbolic link).
// Throws std::runtime_error with a message for the user on failure (SQLite's own message included).
SqliteExportStats export_sqlite(const Run& run, const std::filesystem::path& path, const OutputPolicy& policy = {});

}  // namespace gprof::report
