// Runs `promtool check metrics` (Debian's prometheus package, installed by
// scripts/setup.sh) on a body, as Prometheus' own parser and linter see it.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace gpuscope::test_support {

struct Lint {
  int exit_code = -1;
  std::string output;
};

inline bool HavePromtool() { return std::system("command -v promtool > /dev/null 2>&1") == 0; }

inline Lint RunPromtool(const std::string& body) {
  std::string path = ::testing::TempDir() + "/promtool_" + std::to_string(getpid()) + ".prom";
  std::ofstream(path, std::ios::binary) << body;
  std::string command = "promtool check metrics < '" + path + "' 2>&1";
  Lint lint;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return lint;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof(buffer), pipe)) lint.output.append(buffer, n);
  int status = pclose(pipe);
  lint.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::remove(path.c_str());
  return lint;
}

}  // namespace gpuscope::test_support
