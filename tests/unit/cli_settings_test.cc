#include <gtest/gtest.h>

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
  EXPECT_EQ(Resolve({"--bogus"}).status().message(), "unknown option --bogus");
  EXPECT_EQ(Resolve({"-a"}).status().message(), "option -a needs a value");
  EXPECT_EQ(Resolve({}, {}, "address: ':1'\nbogus: 1\n").status().message(),
            "serve.yaml:2: unknown setting 'bogus'");
  EXPECT_EQ(Resolve({}, {}, "address: [1, 2]\n").status().message(),
            "serve.yaml:1: 'address' must be a single value");
  auto s = Resolve({"--window", "5 parsecs"});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->Seconds("window").ok());
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
