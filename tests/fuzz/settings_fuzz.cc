// libFuzzer target: the settings YAML of `gpuscope serve --config`
// (cli/settings.h). Any input must resolve or fail with a message; resolved
// settings pass their own table check (finite numbers inside their ranges,
// UTF-8 text without control characters).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cli/settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope::cli;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const EnvLookup no_env = [](const char*) -> const char* { return nullptr; };
  gpuscope::Result<Settings> settings = ResolveSettings(kServeSettings, {}, no_env, text, "f.yml");
  if (!settings.ok()) return 0;
  for (const SettingDef& def : kServeSettings) {
    if (!CheckSetting(def, settings->Get(def.key)).ok()) std::abort();
    if (def.type == SettingType::kDuration && !settings->Seconds(def.key).ok()) std::abort();
  }
  return 0;
}
