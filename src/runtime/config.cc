#include "runtime/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <sstream>

extern char** environ;

namespace cumpi {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

template <typename T>
std::optional<T> parse_value(std::string_view text);

template <>
std::optional<bool> parse_value<bool>(std::string_view text) {
  return parse_bool(text);
}
template <>
std::optional<std::size_t> parse_value<std::size_t>(std::string_view text) {
  return parse_size(text);
}
template <>
std::optional<log::Level> parse_value<log::Level>(std::string_view text) {
  return parse_log_level(text);
}

template <>
std::optional<Transports> parse_value<Transports>(std::string_view text) {
  return parse_transports(text);
}
template <>
std::optional<CollAlgorithms> parse_value<CollAlgorithms>(std::string_view text) {
  return parse_coll_algorithms(text);
}

std::string format_value(const NameList& value) {
  std::string text;
  for (const std::string& name : value.names) {
    text += (text.empty() ? "" : ",") + name;
  }
  return text;
}
std::string format_value(bool value) { return value ? "1" : "0"; }
std::string format_value(std::size_t value) { return std::to_string(value); }
std::string format_value(log::Level value) { return log::level_name(value); }

}  // namespace

std::optional<bool> parse_bool(std::string_view text) {
  const std::string value = lower(text);
  if (value == "1" || value == "on" || value == "yes" || value == "true") {
    return true;
  }
  if (value == "0" || value == "off" || value == "no" || value == "false") {
    return false;
  }
  return std::nullopt;
}

std::optional<std::size_t> parse_size(std::string_view text) {
  const std::string value = lower(text);
  if (value.empty() || !std::isdigit(static_cast<unsigned char>(value[0]))) {
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  unsigned long long number = std::strtoull(value.c_str(), &end, 10);
  if (errno != 0) {
    return std::nullopt;
  }
  std::string suffix(end);
  unsigned shift = 0;
  if (suffix.empty() || suffix == "b") {
    shift = 0;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    shift = 10;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    shift = 20;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    shift = 30;
  } else {
    return std::nullopt;
  }
  if (shift != 0 && number > (~0ULL >> shift)) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(number << shift);
}

std::optional<log::Level> parse_log_level(std::string_view text) {
  const std::string value = lower(text);
  for (log::Level level : {log::Level::error, log::Level::warn, log::Level::info, log::Level::debug}) {
    if (value == log::level_name(level)) {
      return level;
    }
  }
  return std::nullopt;
}

bool NameList::lists(std::string_view name) const { return std::find(names.begin(), names.end(), name) != names.end(); }

const std::vector<std::string>& known_transport_names() {
  // ucx in every build, so that one setting serves builds with and without
  // UCX: where it is not built, the registry has no transport of that name.
  static const std::vector<std::string> names{"cuda_ipc", "ucx", "staged"};
  return names;
}

const std::vector<std::string>& known_coll_algorithm_names() {
  static const std::vector<std::string> names{"nccl", "ipc", "staged"};
  return names;
}

namespace {

// Known names, each once; `last` appended when missing.
bool parse_name_list(std::string_view text, const std::vector<std::string>& known, const char* last, NameList* out) {
  const std::string value = lower(text);
  std::size_t begin = 0;
  while (begin <= value.size()) {
    std::size_t end = value.find(',', begin);
    if (end == std::string::npos) {
      end = value.size();
    }
    const std::string name = value.substr(begin, end - begin);
    if (std::find(known.begin(), known.end(), name) == known.end() || out->lists(name)) {
      return false;
    }
    out->names.push_back(name);
    begin = end + 1;
  }
  if (!out->lists(last)) {
    out->names.emplace_back(last);
  }
  return true;
}

}  // namespace

std::optional<Transports> parse_transports(std::string_view text) {
  Transports transports;
  if (!parse_name_list(text, known_transport_names(), "staged", &transports)) {
    return std::nullopt;
  }
  return transports;
}

std::optional<CollAlgorithms> parse_coll_algorithms(std::string_view text) {
  CollAlgorithms algorithms;
  if (!parse_name_list(text, known_coll_algorithm_names(), "staged", &algorithms)) {
    return std::nullopt;
  }
  return algorithms;
}

ParsedConfig parse_config(const EnvLookup& lookup) {
  ParsedConfig parsed;
#define CUMPI_CONFIG(field, variable, type, default_value, doc)                                    \
  parsed.config.field = *parse_value<type>(default_value);                                         \
  if (const char* text = lookup(variable)) {                                                       \
    parsed.from_env.emplace_back(variable);                                                        \
    if (auto value = parse_value<type>(text)) {                                                    \
      parsed.config.field = *value;                                                                \
    } else {                                                                                       \
      parsed.warnings.push_back(std::string("ignoring ") + variable + "=" + text + ": expected " + \
                                #type " (see CUMPI_PRINT_CONFIG=1); using " default_value);        \
    }                                                                                              \
  }
#include "runtime/config_table.def"
#undef CUMPI_CONFIG
  return parsed;
}

namespace {

const char* const kKnownVariables[] = {
#define CUMPI_CONFIG(field, variable, type, default_value, doc) variable,
#include "runtime/config_table.def"
#undef CUMPI_CONFIG
};

// Edits (insert, delete, replace, swap of neighbours) from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t replace = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_known_variable(const std::string& unknown) {
  // Compared without the prefix, which every candidate shares.
  const std::string_view prefix = "CUMPI_";
  const std::string_view tail = std::string_view(unknown).substr(std::min(unknown.size(), prefix.size()));
  std::string nearest;
  std::size_t best = tail.size() / 3 + 1;
  for (const char* candidate : kKnownVariables) {
    const std::size_t distance = edit_distance(tail, std::string_view(candidate).substr(prefix.size()));
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  }
  return nearest;
}

std::vector<std::string> unknown_cumpi_variables(char* const* environment) {
  const auto& known = kKnownVariables;
  std::vector<std::string> unknown;
  for (char* const* entry = environment; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view assignment(*entry);
    if (assignment.rfind("CUMPI_", 0) != 0) {
      continue;
    }
    std::string_view name = assignment.substr(0, assignment.find('='));
    bool is_known = false;
    for (const char* candidate : known) {
      is_known = is_known || name == candidate;
    }
    if (!is_known) {
      unknown.emplace_back(name);
    }
  }
  return unknown;
}

std::vector<SettingLine> setting_lines(const ParsedConfig& parsed) {
  auto origin = [&](const char* variable) {
    for (const std::string& set : parsed.from_env) {
      if (set == variable) {
        return "environment";
      }
    }
    return "default";
  };
  std::vector<SettingLine> lines;
#define CUMPI_CONFIG(field, variable, type, default_value, doc) \
  lines.push_back(SettingLine{variable, format_value(parsed.config.field), origin(variable), doc});
#include "runtime/config_table.def"
#undef CUMPI_CONFIG
  return lines;
}

std::string describe_config(const ParsedConfig& parsed) {
  std::ostringstream out;
  for (const SettingLine& line : setting_lines(parsed)) {
    out << line.variable << "=" << line.value << " (" << line.origin << ")  " << line.meaning << "\n";
  }
  return out.str();
}

std::string config_table_markdown() {
  std::ostringstream out;
  out << "| variable | default | meaning |\n| --- | --- | --- |\n";
#define CUMPI_CONFIG(field, variable, type, default_value, doc) \
  out << "| `" << variable << "` | `" << default_value << "` | " << doc << " |\n";
#include "runtime/config_table.def"
#undef CUMPI_CONFIG
  return out.str();
}

namespace {
Config g_config = parse_config([](const char*) -> const char* { return nullptr; }).config;
}  // namespace

const Config& config() { return g_config; }

ParsedConfig load_config(bool report) {
  ParsedConfig parsed = parse_config([](const char* name) { return std::getenv(name); });
  g_config = parsed.config;
  log::set_level(g_config.log_level);
  if (!report) {
    return parsed;
  }
  for (const std::string& warning : parsed.warnings) {
    CUMPI_LOG(warn, "%s", warning.c_str());
  }
  for (const std::string& name : unknown_cumpi_variables(environ)) {
    const std::string nearest = nearest_known_variable(name);
    if (!nearest.empty()) {
      CUMPI_LOG(warn, "unknown variable %s is ignored: did you mean %s? (CUMPI_PRINT_CONFIG=1 lists the known ones)",
                name.c_str(), nearest.c_str());
    } else {
      CUMPI_LOG(warn, "unknown variable %s is ignored (CUMPI_PRINT_CONFIG=1 lists the known ones)", name.c_str());
    }
  }
  return parsed;
}

}  // namespace cumpi
