// A run as an SQLite database with the tables and columns of `nsys export --type sqlite` where the meaning is the
// same, so queries written against nsys's export run with at most renamed tables (docs/sqlite-export.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"

namespace gprof::report {

// Bumped on any change a query could notice (META_DATA_EXPORT row GPROF_EXPORT_SCHEMA_VERSION).
inline constexpr int kSqliteExportSchemaVersion = 1;

struct SqliteExportStats {
    uint64_t rows = 0;                 // rows written, all tables
    std::vector<std::string> tables;   // tables written, in creation order
};

// Writes the run to `path` (a new file, created beside it under a temporary name and renamed into place at the
// end, so a reader never sees half a database and an existing file is replaced only once the new one is whole).
// Throws std::runtime_error with a message for the user on failure (SQLite's own message included).
SqliteExportStats export_sqlite(const Run& run, const std::filesystem::path& path);

}  // namespace gprof::report
