// libFuzzer target: the exporter-toolkit web-config parser (http/web_config.h).
// Any input must parse or fail with a message naming the file; a parsed
// config never carries a header value with a line break or a user without a
// valid bcrypt hash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "http/web_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpuscope::Result<gpuscope::http::WebConfig> config =
      gpuscope::http::ParseWebConfig(text, "/fuzz/web.yml");
  if (!config.ok()) {
    if (config.status().message().rfind("/fuzz/web.yml:", 0) != 0) std::abort();
    return 0;
  }
  for (const auto& [name, value] : config->headers) {
    if (name.empty() || value.find_first_of("\r\n") != std::string::npos) std::abort();
  }
  for (const auto& [user, hash] : config->basic_auth_users) {
    if (!gpuscope::http::BcryptHashProblem(hash).empty()) std::abort();
  }
  return 0;
}
