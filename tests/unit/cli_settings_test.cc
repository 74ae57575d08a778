#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "cli/settings.h"

namespace gpuscope::cli {
namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  EnvLookup Lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

Result<Settings> Resolve(std::vector<std::string> args, const FakeEnv& env = {},
                         std::string_view yaml = "") {
  return ResolveSettings(kServeSettings, args, env.Lookup(), yaml, "serve.yaml");
}

TEST(Settings, DefaultsFillEverySetting) {
  auto s = Resolve({});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->Get("address"), ":9400");
  EXPECT_EQ(s->Get("metrics"), "both");
  EXPECT_EQ(*s->Seconds("slow-interval"), 10);
  EXPECT_EQ(*s->Seconds("collect-interval"), 1);
  EXPECT_EQ(s->Origin("address"), "default");
}

TEST(Settings, FlagsBeatEnvironmentBeatFile) {
  FakeEnv env{{{"GPUSCOPE_ADDRESS", ":9500"}, {"GPUSCOPE_METRICS", "native"}}};
  auto s = Resolve({"-a", ":9600", "-n", "--window=5m"}, env,
                   "address: ':9700'\nmetrics: dcgm\ncollect-interval: 250\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->Get("address"), ":9600");
  EXPECT_EQ(s->Get("metrics"), "native");
  EXPECT_EQ(s->Origin("metrics"), "env");
  EXPECT_EQ(*s->Seconds("collect-interval"), 0.25);
  EXPECT_EQ(s->Origin("collect-interval"), "file");
  EXPECT_TRUE(s->Flag("no-hostname"));
  EXPECT_EQ(*s->Seconds("window"), 300);
}

TEST(Settings, DcgmExporterShortFlags) {
  auto s = Resolve({"-f", "counters.csv", "-c", "30000", "-d", "g:0,1", "-x", "60000", "-k"});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->Get("collectors"), "counters.csv");
  EXPECT_EQ(*s->Integer("collect-interval"), 30000);
  EXPECT_EQ(s->Get("devices"), "g:0,1");
  EXPECT_EQ(*s->Integer("xid-count-window-size"), 60000);
  EXPECT_TRUE(s->Flag("kubernetes"));
}

TEST(Settings, ErrorsNameTheProblem) {
  EXPECT_EQ(Resolve({"--bogus"}).status().message(),
            "Unknown option \"--bogus\" for gpuscope serve. See gpuscope serve --help.");
  EXPECT_EQ(Resolve({"--adress=:1"}).status().message(),
            "Unknown option \"--adress=:1\" for gpuscope serve; did you mean --address? "
            "See gpuscope serve --help.");
  EXPECT_EQ(Resolve({"-a"}).status().message(),
            "Option -a needs a value; see gpuscope serve --help.");
  EXPECT_EQ(Resolve({}, {}, "address: ':1'\nbogus: 1\n").status().message(),
            "serve.yaml:2: unknown setting 'bogus'");
  EXPECT_EQ(Resolve({}, {}, "address: [1, 2]\n").status().message(),
            "serve.yaml:1: 'address' must be a single value");
  EXPECT_EQ(Resolve({}, {}, "[a]: 1\n").status().message(), "serve.yaml:1: unknown setting ''");
  EXPECT_EQ(Resolve({"--window", "5 parsecs"}).status().message(),
            "window: '5 parsecs' is not a duration (use ms, s, m or h; a bare number is ms) "
            "(from flag)");
  FakeEnv env{{{"GPUSCOPE_COLLECT_INTERVAL", "nan"}}};
  EXPECT_EQ(Resolve({}, env).status().message(),
            "collect-interval: 'nan' is not a finite duration (use ms, s, m or h; a bare number "
            "is ms) (from GPUSCOPE_COLLECT_INTERVAL)");
  EXPECT_EQ(Resolve({}, {}, "gpu-hour-price: -1\n").status().message(),
            "gpu-hour-price: '-1' is outside the range 0..1000000 (from serve.yaml)");
}

// Every numeric row of the table refuses non-finite, negative, huge and
// malformed values, from every source, with an error naming the setting.
TEST(Settings, EveryNumericSettingRefusesNonFiniteAndOutOfRange) {
  const char* kBad[] = {"nan",   "NaN", "-nan",  "inf",   "-inf", "infinity", "1e13",
                        "1e400", "-1",  "-1e-9", "1e308", "",     "0x10",     "1,5",
                        "12 ",   " 12", "1e13s", "nanms", "infh"};
  int numeric = 0;
  for (const SettingDef& def : kServeSettings) {
    if (def.type != SettingType::kInteger && def.type != SettingType::kNumber &&
        def.type != SettingType::kDuration) {
      continue;
    }
    ++numeric;
    EXPECT_LT(def.min, def.max) << def.key;
    EXPECT_TRUE(CheckSetting(def, def.default_value).ok()) << def.key;
    for (const char* bad : kBad) {
      const std::string flag = "--" + std::string(def.key);
      for (auto result : {Resolve({flag, bad}), Resolve({}, FakeEnv{{{std::string(def.env), bad}}}),
                          Resolve({}, {}, std::string(def.key) + ": '" + bad + "'\n")}) {
        ASSERT_FALSE(result.ok()) << def.key << "=" << bad;
        EXPECT_EQ(result.status().message().rfind(std::string(def.key) + ": ", 0), 0u)
            << result.status().message();
      }
    }
    // Just outside the range on both sides; the bounds themselves pass.
    const double unit = def.type == SettingType::kDuration ? 1000 : 1;  // bare durations: ms
    auto text = [&](double v) {
      return def.type == SettingType::kInteger ? std::to_string(std::llround(v))
                                               : std::to_string(v);
    };
    EXPECT_FALSE(CheckSetting(def, text(def.min * unit - 1)).ok()) << def.key;
    EXPECT_FALSE(CheckSetting(def, text(def.max * unit + 1)).ok()) << def.key;
    EXPECT_TRUE(CheckSetting(def, text(def.min * unit)).ok()) << def.key;
    EXPECT_TRUE(CheckSetting(def, text(def.max * unit)).ok()) << def.key;
  }
  EXPECT_GE(numeric, 9);
}

TEST(Settings, SwitchesAndTextAreChecked) {
  EXPECT_FALSE(Resolve({"--no-hostname=maybe"}).ok());
  EXPECT_TRUE(Resolve({"--no-hostname=false"}).ok());
  auto nul = Resolve({"--hostname", std::string("a\0b", 3)});
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.status().message(),
            "hostname: 'a\\x00b' has a control character (byte 2) (from flag)");
  auto binary = Resolve({"--hostname", "\xff\xfe" + std::string(200, 'x')});
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.status().message().find("'\\xff\\xfe"), std::string::npos);
  EXPECT_LT(binary.status().message().size(), 200u);  // the echo is cut short
}

TEST(Settings, DurationsAndRangesReadAsTheDocsShowThem) {
  EXPECT_EQ(*ParseDuration("250ms"), 0.25);
  EXPECT_EQ(*ParseDuration("1500"), 1.5);
  EXPECT_EQ(*ParseDuration("2h"), 7200);
  EXPECT_FALSE(ParseDuration("inf").ok());
  EXPECT_FALSE(ParseDuration("-5s").ok());
  std::map<std::string_view, std::string> ranges;
  for (const SettingDef& def : kServeSettings) ranges[def.key] = RangeText(def);
  EXPECT_EQ(ranges["collect-interval"], "100ms..24h");
  EXPECT_EQ(ranges["max-connections"], "1..100000");
  EXPECT_EQ(ranges["stale-after"], "0..24h");
  EXPECT_EQ(ranges["gpu-hour-price"], "0..1000000");
  EXPECT_EQ(ranges["no-hostname"], "true, false");
  EXPECT_EQ(ranges["address"], "");
}

TEST(Settings, ConfigPathFromFlagOrEnvironment) {
  FakeEnv env{{{"GPUSCOPE_CONFIG", "/etc/gpuscope.yaml"}}};
  std::vector<std::string> none;
  EXPECT_EQ(ConfigPath(none, env.Lookup()), "/etc/gpuscope.yaml");
  std::vector<std::string> args{"--config", "mine.yaml"};
  EXPECT_EQ(ConfigPath(args, env.Lookup()), "mine.yaml");
}

TEST(Settings, MarkdownListsEverySettingWithItsDefault) {
  std::string md = SettingsMarkdown(kServeSettings);
  for (const SettingDef& def : kServeSettings) {
    EXPECT_NE(md.find("`" + std::string(def.key) + "`"), std::string::npos) << def.key;
  }
  EXPECT_NE(md.find("`:9400`"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::cli
