// Helpers for the http_* tests: a temporary directory (temp_dir.h), shell commands, curl.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir.h"

namespace gpuscope::http::testing {

using test_support::TempDir;

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs a shell command; returns its stdout. `status` gets the exit code.
inline std::string Shell(const std::string& command, int* status = nullptr) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  int rc = pclose(pipe);
  if (status != nullptr) *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

// Whether this process has mapped libgnutls (loaded on first use, http/gnutls_on_demand.h).
inline bool MapsGnuTls() {
  return ReadAll("/proc/self/maps").find("libgnutls") != std::string::npos;
}

struct CurlResult {
  int code = 0;  // HTTP status, 0 when no response
  std::string body;
  std::string headers;
};

// curl `args` (URL included); body and headers captured in files of `dir`.
inline CurlResult Curl(const TempDir& dir, const std::string& args) {
  std::string body = dir.File("curl.body"), headers = dir.File("curl.headers");
  std::filesystem::remove(body);
  std::filesystem::remove(headers);
  std::string command = "curl -sS --max-time 5 -o " + body + " -D " + headers +
                        " -w '%{http_code}' " + args + " 2>/dev/null";
  CurlResult result;
  result.code = std::atoi(Shell(command).c_str());
  result.body = ReadAll(body);
  result.headers = ReadAll(headers);
  return result;
}

}  // namespace gpuscope::http::testing
