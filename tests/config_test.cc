#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "runtime/config.h"

namespace cumpi {
namespace {

EnvLookup lookup_in(const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

TEST(ConfigParsing, BooleansAcceptTheUsualSpellingsAndNothingElse) {
  for (const char* yes : {"1", "on", "ON", "yes", "true", "True"}) EXPECT_EQ(parse_bool(yes), true) << yes;
  for (const char* no : {"0", "off", "no", "false", "FALSE"}) EXPECT_EQ(parse_bool(no), false) << no;
  for (const char* bad : {"", "2", "enable", "1 "}) EXPECT_FALSE(parse_bool(bad).has_value()) << bad;
}

TEST(ConfigParsing, SizesTakeBinarySuffixes) {
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("64k"), 64u << 10);
  EXPECT_EQ(parse_size("64KiB"), 64u << 10);
  EXPECT_EQ(parse_size("3M"), 3u << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
  EXPECT_FALSE(parse_size("").has_value());
  EXPECT_FALSE(parse_size("-1").has_value());
  EXPECT_FALSE(parse_size("12q").has_value());
  EXPECT_FALSE(parse_size("99999999999999999999").has_value());
  EXPECT_FALSE(parse_size("17179869184G").has_value());  // overflows 64 bits
}

TEST(ConfigParsing, TransportsAreAnOrderedListThatEndsInTheStagedPath) {
  const auto both = parse_transports("cuda_ipc,staged");
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->names, (std::vector<std::string>{"cuda_ipc", "staged"}));
  const auto staged_first = parse_transports("staged,cuda_ipc");
  ASSERT_TRUE(staged_first.has_value());
  EXPECT_EQ(staged_first->names, (std::vector<std::string>{"staged", "cuda_ipc"}));
  const auto staged = parse_transports("staged");
  ASSERT_TRUE(staged.has_value());
  EXPECT_EQ(staged->names, std::vector<std::string>{"staged"});
  const auto ipc_only = parse_transports("CUDA_IPC");
  ASSERT_TRUE(ipc_only.has_value());
  EXPECT_EQ(ipc_only->names, (std::vector<std::string>{"cuda_ipc", "staged"}));
  EXPECT_TRUE(parse_transports("ucx").has_value());  // known in every build
  EXPECT_FALSE(parse_transports("verbs").has_value());
  EXPECT_FALSE(parse_transports("ipc").has_value());
  EXPECT_FALSE(parse_transports("cuda_ipc,,staged").has_value());
  EXPECT_FALSE(parse_transports("staged,staged").has_value());
}

TEST(ConfigParsing, CollectiveAlgorithmsAreAnOrderedListThatEndsInTheStagedOne) {
  const auto staged = parse_coll_algorithms("staged");
  ASSERT_TRUE(staged.has_value());
  EXPECT_EQ(staged->names, std::vector<std::string>{"staged"});
  const auto all = parse_coll_algorithms("nccl,ipc");
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->names, (std::vector<std::string>{"nccl", "ipc", "staged"}));
  EXPECT_FALSE(parse_coll_algorithms("hier").has_value());
  EXPECT_FALSE(parse_coll_algorithms("staged,staged").has_value());
  EXPECT_FALSE(parse_coll_algorithms("").has_value());
}

TEST(ConfigParsing, LogLevels) {
  EXPECT_EQ(parse_log_level("debug"), log::Level::debug);
  EXPECT_EQ(parse_log_level("WARN"), log::Level::warn);
  EXPECT_FALSE(parse_log_level("verbose").has_value());
}

TEST(ConfigParsing, DefaultsWhenNothingIsSet) {
  const ParsedConfig parsed = parse_config(lookup_in({}));
  EXPECT_EQ(parsed.config.log_level, log::Level::warn);
  EXPECT_FALSE(parsed.config.stats);
  EXPECT_FALSE(parsed.config.disable);
  EXPECT_EQ(parsed.config.pinned_pool_limit, 1ull << 30);
  EXPECT_TRUE(parsed.warnings.empty());
  EXPECT_TRUE(parsed.from_env.empty());
}

TEST(ConfigParsing, ValuesFromTheEnvironmentWin) {
  const ParsedConfig parsed =
      parse_config(lookup_in({{"CUMPI_STATS", "on"}, {"CUMPI_LOG", "debug"}, {"CUMPI_PINNED_POOL_LIMIT", "256M"}}));
  EXPECT_TRUE(parsed.config.stats);
  EXPECT_EQ(parsed.config.log_level, log::Level::debug);
  EXPECT_EQ(parsed.config.pinned_pool_limit, 256u << 20);
  EXPECT_EQ(parsed.from_env.size(), 3u);
}

TEST(ConfigParsing, ZeroAndOffMeanOff) {
  EXPECT_FALSE(parse_config(lookup_in({{"CUMPI_STATS", "0"}})).config.stats);
  EXPECT_FALSE(parse_config(lookup_in({{"CUMPI_DISABLE", "off"}})).config.disable);
}

TEST(ConfigParsing, BadValuesWarnAndKeepTheDefault) {
  const ParsedConfig parsed = parse_config(lookup_in({{"CUMPI_STATS", "sometimes"}, {"CUMPI_LOG", "loud"}}));
  EXPECT_FALSE(parsed.config.stats);
  EXPECT_EQ(parsed.config.log_level, log::Level::warn);
  ASSERT_EQ(parsed.warnings.size(), 2u);
  EXPECT_NE(parsed.warnings[0].find("CUMPI_LOG=loud"), std::string::npos);
  EXPECT_NE(parsed.warnings[1].find("CUMPI_STATS=sometimes"), std::string::npos);
}

TEST(ConfigParsing, UnknownCumpiVariablesAreFound) {
  char typo[] = "CUMPI_STAT=1";
  char known[] = "CUMPI_STATS=1";
  char other[] = "PATH=/bin";
  char near[] = "XCUMPI_LOG=1";
  char* environment[] = {typo, known, other, near, nullptr};
  const std::vector<std::string> unknown = unknown_cumpi_variables(environment);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0], "CUMPI_STAT");
}

TEST(ConfigParsing, AMisspeltVariableGetsTheNearestKnownName) {
  EXPECT_EQ(nearest_known_variable("CUMPI_STAT"), "CUMPI_STATS");
  EXPECT_EQ(nearest_known_variable("CUMPI_TRANSPORT"), "CUMPI_TRANSPORTS");
  EXPECT_EQ(nearest_known_variable("CUMPI_LGO"), "CUMPI_LOG");
  EXPECT_EQ(nearest_known_variable("CUMPI_SHORT_ENVELOPE"), "CUMPI_SHORT_ENVELOPES");
  EXPECT_EQ(nearest_known_variable("CUMPI_SOMETHING_ELSE_ENTIRELY"), "");
}

TEST(ConfigParsing, DescriptionNamesEveryVariableAndItsOrigin) {
  const std::string text = describe_config(parse_config(lookup_in({{"CUMPI_STATS", "1"}})));
  EXPECT_NE(text.find("CUMPI_STATS=1 (environment)"), std::string::npos);
  EXPECT_NE(text.find("CUMPI_LOG=warn (default)"), std::string::npos);
  EXPECT_NE(text.find("CUMPI_PINNED_POOL_LIMIT="), std::string::npos);
}

// The README's table is the code's table: regenerate it with
// `build/tests/cumpi_config_doc` when a knob changes.
TEST(ConfigDocumentation, ReadmeTableMatchesTheCode) {
  std::ifstream readme(CUMPI_README);
  ASSERT_TRUE(readme.good());
  std::stringstream text;
  text << readme.rdbuf();
  const std::string content = text.str();
  const std::string begin = "<!-- config-table-begin -->\n";
  const std::string end = "<!-- config-table-end -->";
  const size_t from = content.find(begin);
  const size_t to = content.find(end);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(content.substr(from + begin.size(), to - from - begin.size()), config_table_markdown());
}

}  // namespace
}  // namespace cumpi
