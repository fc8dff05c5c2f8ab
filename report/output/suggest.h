// "did you mean ...?" for a mistyped name (a report, a -t item, an export format, a subcommand): the known name
// nearest in edits, as git and cargo suggest one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gprof::report {

// The known name closest to `typed` (Damerau-Levenshtein distance, case-insensitive), if it is close enough to be
// what was meant: at most 1 edit for names up to 4 characters, 2 up to 8, 3 beyond; or `typed` is a prefix of
// exactly one name. "" when nothing is close.
std::string closest_name(std::string_view typed, const std::vector<std::string>& known);

// "; did you mean 'cuda'?" for the closest name, "" when there is none.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known);

}  // namespace gprof::report
