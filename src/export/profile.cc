#include "export/profile.h"

namespace gpuscope::prom {

std::optional<Profile> ParseProfile(std::string_view text) {
  if (text == "lean") return Profile::kLean;
  if (text == "full") return Profile::kFull;
  return std::nullopt;
}

std::string_view ProfileName(Profile profile) {
  return profile == Profile::kLean ? "lean" : "full";
}

std::string_view LeanPolicyName(LeanPolicy policy) {
  switch (policy) {
    case LeanPolicy::kAlways:
      return "always";
    case LeanPolicy::kSparse:
      return "when non-zero";
    case LeanPolicy::kNoGpm:
      return "without GPM";
    case LeanPolicy::kFullOnly:
      break;
  }
  return "full only";
}

}  // namespace gpuscope::prom
