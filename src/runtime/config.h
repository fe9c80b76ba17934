// cumpi's configuration: one table of CUMPI_* variables (config_table.def),
// parsed once at MPI_Init.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/log.h"

namespace cumpi {

using Bool = bool;
using Size = std::size_t;
using LogLevel = log::Level;

// An ordered list of names, each once, the always-correct one last unless
// listed earlier.
struct NameList {
  std::vector<std::string> names;
  bool lists(std::string_view name) const;
};
// The transports of rendezvous messages, in the order they are tried
// (CUMPI_TRANSPORTS); the transport layer registers them by these names.
struct Transports : NameList {};
// The algorithms of collectives on device buffers, in the order they are
// tried (CUMPI_COLL); the collective layer registers them by these names.
struct CollAlgorithms : NameList {};
// Every name CUMPI_TRANSPORTS, and CUMPI_COLL, may list.
const std::vector<std::string>& known_transport_names();
const std::vector<std::string>& known_coll_algorithm_names();

struct Config {
#define CUMPI_CONFIG(field, variable, type, default_value, doc) type field{};
#include "runtime/config_table.def"
#undef CUMPI_CONFIG
};

std::optional<bool> parse_bool(std::string_view text);
std::optional<std::size_t> parse_size(std::string_view text);
std::optional<log::Level> parse_log_level(std::string_view text);
// A comma-separated, ordered list of known transport names, each once;
// staged, the always-correct path, is appended when missing.
std::optional<Transports> parse_transports(std::string_view text);
// The same for collective algorithms (staged appended when missing).
std::optional<CollAlgorithms> parse_coll_algorithms(std::string_view text);

// Looks up one environment variable; returns nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

struct ParsedConfig {
  Config config;
  std::vector<std::string> warnings;  // one per value that could not be parsed
  std::vector<std::string> from_env;  // variables that were set
};

ParsedConfig parse_config(const EnvLookup& lookup);

// CUMPI_* variables in `environment` (a NULL-terminated array as `environ`)
// that are not in the table: typos, usually.
std::vector<std::string> unknown_cumpi_variables(char* const* environment);
// The known variable nearest to `unknown` (at most a third of its letters
// changed, added, dropped or swapped), or "" when none is near.
std::string nearest_known_variable(const std::string& unknown);

// One knob as parsed: its value, where it came from ("default" or
// "environment") and what it means.
struct SettingLine {
  std::string variable;
  std::string value;
  std::string origin;
  std::string meaning;
};
std::vector<SettingLine> setting_lines(const ParsedConfig& parsed);

// "NAME=value (default|environment)  meaning" lines, for CUMPI_PRINT_CONFIG.
std::string describe_config(const ParsedConfig& parsed);

// The README's table: | variable | default | meaning |
std::string config_table_markdown();

// The configuration in force (defaults until load_config() ran).
const Config& config();
// Parses the process environment and applies the log level; with `report`,
// warns about bad values and unknown variables (one rank is enough: a job's
// ranks share their environment).
ParsedConfig load_config(bool report);

}  // namespace cumpi
