#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/elf_file.h"
#include "base/module.h"
#include "test_paths.h"

namespace gpuscope {
namespace {

std::string ReadModule(const std::string& name) {
  std::ifstream in(test_support::BinaryDir() + "/" + name, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(ElfFileTest, TheBuildRecordsEachModulesBuildId) {
  for (const char* name : {"libgpuscope-curl.so", "libgpuscope-grpc.so", "libgpuscope-otlp.so"}) {
    Result<std::string> id = ElfBuildId(ReadModule(name));
    ASSERT_TRUE(id.ok()) << name << ": " << id.status().message();
    EXPECT_EQ(id->size(), 40u) << *id;  // sha1
    EXPECT_EQ(*id, BuiltModuleBuildId(name)) << name;
  }
  EXPECT_EQ(BuiltModuleBuildId("libgpuscope-nothing.so"), "");
}

// A copy cut anywhere is refused before it could be mapped (it killed the agent with SIGBUS).
TEST(ElfFileTest, EveryTruncationIsRefused) {
  const std::string image = ReadModule("libgpuscope-curl.so");
  ASSERT_GT(image.size(), 4096u);
  int cuts = 0;
  for (size_t size = 0; size < image.size(); size += (size < 4096 ? 1 : 509)) {
    Result<std::string> id = ElfBuildId(std::string_view(image).substr(0, size));
    ASSERT_FALSE(id.ok()) << "cut at " << size << " of " << image.size() << " accepted";
    ++cuts;
  }
  Result<std::string> last = ElfBuildId(std::string_view(image).substr(0, image.size() - 1));
  ASSERT_FALSE(last.ok());
  EXPECT_NE(last.status().message().find("truncated"), std::string::npos)
      << last.status().message();
  EXPECT_GT(cuts, 4000);
}

TEST(ElfFileTest, AnotherBuildHasAnotherId) {
  std::string image = ReadModule("libgpuscope-curl.so");
  const std::string id = *ElfBuildId(image);
  // The id's first byte, in the note's raw bytes, changed.
  std::string raw;
  for (size_t i = 0; i < id.size(); i += 2) {
    raw += static_cast<char>(std::stoi(id.substr(i, 2), nullptr, 16));
  }
  size_t at = image.find(std::string("GNU\0", 4) + raw);
  ASSERT_NE(at, std::string::npos);
  image[at + 4] ^= 0x5a;
  Result<std::string> other = ElfBuildId(image);
  ASSERT_TRUE(other.ok()) << other.status().message();
  EXPECT_NE(*other, id);
}

TEST(ElfFileTest, NotAnElfSharedObject) {
  EXPECT_FALSE(ElfBuildId("").ok());
  EXPECT_FALSE(ElfBuildId("#!/bin/sh\necho hello\n").ok());
  std::string image = ReadModule("libgpuscope-curl.so");
  image[4] = 1;  // ELFCLASS32
  Result<std::string> id = ElfBuildId(image);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().message(), "not a shared object of this machine");
}

}  // namespace
}  // namespace gpuscope
