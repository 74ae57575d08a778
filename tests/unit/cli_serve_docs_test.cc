// docs/configuration.md is generated from the settings table; this test fails
// when it is stale. Regenerate with:
//   GPUSCOPE_UPDATE_DOCS=1 build/<dir>/cli_tests --gtest_filter='ServeDocs.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/serve.h"
#include "test_paths.h"

namespace gpuscope::cli {
namespace {

TEST(ServeDocs, ConfigurationMarkdownIsUpToDate) {
  const std::string path = test_support::SourceDir() + "/docs/configuration.md";
  const std::string expected = ConfigurationDoc();
  if (const char* update = std::getenv("GPUSCOPE_UPDATE_DOCS"); update && *update == '1') {
    std::ofstream(path) << expected;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing; regenerate it (see this test's header)";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), expected)
      << path << " is stale; regenerate it with GPUSCOPE_UPDATE_DOCS=1 cli_tests "
      << "--gtest_filter='ServeDocs.*'";
}

TEST(ServeDocs, UsageListsEverySetting) {
  const std::string usage = ServeUsage();
  for (const char* flag : {"-a, --address", "-c, --collect-interval", "-f, --collectors",
                           "-n, --no-hostname", "-d, --devices", "--web-config-file",
                           "-x, --xid-count-window-size", "-k, --kubernetes", "--metrics"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace gpuscope::cli
