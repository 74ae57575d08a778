#include <gtest/gtest.h>

#include "base/module.h"

namespace gpuscope {
namespace {

// The test binary sits in the build folder, beside the modules.
TEST(ModuleTest, LoadsAnEntryFromBesideTheExecutable) {
  Result<void*> entry = LoadModuleEntry("libgpuscope-curl.so", "gpuscope_http_fetcher");
  ASSERT_TRUE(entry.ok()) << entry.status().message();
  EXPECT_NE(*entry, nullptr);
}

TEST(ModuleTest, AMissingModuleNamesWhereItLooked) {
  Result<void*> entry = LoadModuleEntry("libgpuscope-nothing.so", "entry");
  ASSERT_FALSE(entry.ok());
  EXPECT_EQ(entry.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(entry.status().message().find("not found"), std::string::npos);
  EXPECT_NE(entry.status().message().find("/lib/libgpuscope-nothing.so: missing"),
            std::string::npos)
      << entry.status().message();
}

TEST(ModuleTest, AMissingEntryIsNamed) {
  Result<void*> entry = LoadModuleEntry("libgpuscope-curl.so", "no_such_entry");
  ASSERT_FALSE(entry.ok());
  EXPECT_NE(entry.status().message().find("has no no_such_entry"), std::string::npos)
      << entry.status().message();
}

}  // namespace
}  // namespace gpuscope
