#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config_file.h"
#include "temp_dir.h"

namespace gpuscope::base {
namespace {

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()); }

  std::string Write(const std::string& name, const std::string& text) {
    return temp_.Write(name, text);
  }

  // The error of reading `path`, which must fail.
  std::string Error(const std::string& path) {
    Result<std::string> text = ReadConfigFile(path, "test file");
    EXPECT_FALSE(text.ok()) << path;
    return text.ok() ? "" : text.status().message();
  }

  test_support::TempDir temp_;
  const std::string& dir_ = temp_.path();
};

TEST_F(ConfigFileTest, ReadsARegularFileWhole) {
  const std::string body = "a: 1\n" + std::string(100000, '#') + "\nb: \xc3\xa9\n";
  Result<std::string> text = ReadConfigFile(Write("ok.yml", body), "test file");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, body);
}

TEST_F(ConfigFileTest, FailsClosedNamingTheFileAndTheProblem) {
  EXPECT_EQ(Error(dir_), "test file " + dir_ + ": is a directory");
  EXPECT_EQ(Error(Write("empty.yml", "")), "test file " + dir_ + "/empty.yml: is empty");
  EXPECT_EQ(Error(Write("blank.yml", " \n\t\r\n")), "test file " + dir_ + "/blank.yml: is empty");
  EXPECT_EQ(
      Error(Write("latin1.yml", "a: 1\nhelp: caf\xe9\n")),
      "test file " + dir_ + "/latin1.yml: is not UTF-8 text (invalid byte at line 2, column 10)");
  EXPECT_EQ(Error(Write("nul.yml", std::string("a: 1\0", 5))),
            "test file " + dir_ + "/nul.yml: has a NUL byte at line 1, column 5");
  EXPECT_EQ(Error(dir_ + "/missing.yml"),
            "test file " + dir_ + "/missing.yml: No such file or directory");
  EXPECT_EQ(Error(""), "test file: empty path");
}

TEST_F(ConfigFileTest, RefusesFifosDevicesAndHugeFiles) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(Error(fifo), "test file " + fifo + ": is a FIFO, not a regular file");  // no hang
  EXPECT_EQ(Error("/dev/null"), "test file /dev/null: is a device, not a regular file");
  const std::string big = Write("big.yml", std::string(kMaxConfigFileBytes + 1, 'a'));
  EXPECT_EQ(Error(big), "test file " + big + ": is larger than 4 MiB");
}

TEST_F(ConfigFileTest, RegularFileReadsAreBoundedAndNeverBlock) {
  Result<std::string> empty = ReadRegularFile(Write("empty", ""), "cgroup file", 16);
  ASSERT_TRUE(empty.ok()) << empty.status().message();  // no text checks: empty is fine
  EXPECT_EQ(*empty, "");
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> text = ReadRegularFile(fifo, "cgroup file", 16);  // no hang
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "cgroup file " + fifo + ": is a FIFO, not a regular file");
  const std::string big = Write("big", std::string(17, 'a'));
  EXPECT_EQ(ReadRegularFile(big, "cgroup file", 16).status().message(),
            "cgroup file " + big + ": is larger than 16 bytes");
  // /proc files say size 0: the limit holds while reading.
  text = ReadRegularFile("/proc/self/status", "status", 64);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "status /proc/self/status: is larger than 64 bytes");
  EXPECT_EQ(ReadRegularFile(dir_ + "/none", "x", 16).status().code(), Status::Code::kNotFound);
}

TEST_F(ConfigFileTest, UnreadableFileIsAnError) {
  const std::string path = Write("secret.yml", "a: 1\n");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  if (geteuid() == 0) GTEST_SKIP() << "root reads any file";
  EXPECT_EQ(Error(path), "test file " + path + ": Permission denied");
}

}  // namespace
}  // namespace gpuscope::base
