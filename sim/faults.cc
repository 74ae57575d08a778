#include "faults.h"

#include <charconv>
#include <cstdlib>

#include "fabric.h"

namespace gpuscope::sim {
namespace {

struct KindName {
  FaultKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {FaultKind::kXid, "xid"},
    {FaultKind::kEccSbe, "ecc-sbe"},
    {FaultKind::kEccDbe, "ecc-dbe"},
    {FaultKind::kRowRemapFailure, "row-remap-failure"},
    {FaultKind::kLost, "lost"},
    {FaultKind::kCoolingFailure, "cooling-failure"},
    {FaultKind::kPowerCap, "power-cap"},
    {FaultKind::kPowerBrake, "power-brake"},
    {FaultKind::kPcieDowngrade, "pcie-downgrade"},
    {FaultKind::kNvlinkErrors, "nvlink-errors"},
    {FaultKind::kNvlinkDown, "nvlink-down"},
    {FaultKind::kMemoryLeak, "memory-leak"},
    {FaultKind::kHang, "hang"},
    {FaultKind::kRecoveryAction, "recovery-action"},
    {FaultKind::kFail, "fail"},
    {FaultKind::kXidStorm, "xid-storm"},
    {FaultKind::kFabric, "fabric"},
};

constexpr const char* kActionNames[] = {"none", "gpu-reset", "node-reboot", "drain-p2p",
                                        "drain-and-reset"};

bool ToDouble(const std::string& s, double* out) {
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

bool ToUnsigned(const std::string& s, unsigned* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Reads the optional positional argument i into out.
template <typename T>
Status Arg(const std::vector<std::string>& w, size_t i, T* out, bool required = false) {
  if (i >= w.size()) {
    return required ? Status::InvalidArgument("'" + w[0] + "' needs more arguments") : Status::Ok();
  }
  bool ok;
  if constexpr (std::is_same_v<T, double>) {
    ok = ToDouble(w[i], out) && *out >= 0;
  } else if constexpr (std::is_same_v<T, int>) {
    unsigned u = 0;
    ok = ToUnsigned(w[i], &u);
    *out = static_cast<int>(u);
  } else {
    ok = ToUnsigned(w[i], out);
  }
  if (!ok) return Status::InvalidArgument("bad number '" + w[i] + "' for " + w[0]);
  return Status::Ok();
}

}  // namespace

bool IsInstant(FaultKind kind) {
  return kind == FaultKind::kXid || kind == FaultKind::kEccSbe || kind == FaultKind::kEccDbe ||
         kind == FaultKind::kRowRemapFailure;
}

bool ParseFaultKind(std::string_view name, FaultKind* kind) {
  for (const KindName& k : kKindNames) {
    if (name == k.name) {
      *kind = k.kind;
      return true;
    }
  }
  return false;
}

const char* FaultKindName(FaultKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

bool ParseRecoveryAction(std::string_view text, unsigned* action) {
  for (unsigned i = 0; i < 5; ++i) {
    if (text == kActionNames[i] || text == std::to_string(i)) {
      *action = i;
      return true;
    }
  }
  return false;
}

Result<FaultSpec> FaultFromWords(const std::vector<std::string>& words) {
  if (words.empty()) return Status::InvalidArgument("missing fault kind");
  std::vector<std::string> w = words;
  // "ecc sbe|dbe [count]" is the short form of ecc-sbe / ecc-dbe.
  if (w[0] == "ecc") {
    if (w.size() < 2 || (w[1] != "sbe" && w[1] != "dbe")) {
      return Status::InvalidArgument("ecc needs sbe or dbe");
    }
    w[1] = "ecc-" + w[1];
    w.erase(w.begin());
  }
  FaultSpec f;
  if (!ParseFaultKind(w[0], &f.kind))
    return Status::InvalidArgument("unknown fault '" + w[0] + "'");
  switch (f.kind) {
    case FaultKind::kXid:
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.xid, true));
      break;
    case FaultKind::kXidStorm:
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.xid, true));
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 2, &f.rate));
      if (f.rate <= 0 || f.rate > 100000) {
        return Status::InvalidArgument("xid-storm rate must be in (0, 100000]");
      }
      break;
    case FaultKind::kEccSbe:
    case FaultKind::kEccDbe:
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.count));
      break;
    case FaultKind::kCoolingFailure:
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.factor));
      break;
    case FaultKind::kPowerCap:
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.watts, true));
      break;
    case FaultKind::kPcieDowngrade:
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.gen));
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 2, &f.width));
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 3, &f.replay_rate));
      break;
    case FaultKind::kNvlinkErrors:
    case FaultKind::kNvlinkDown:
      if (f.kind == FaultKind::kNvlinkDown) f.link = 0;
      if (w.size() > 1 && w[1] == "all") {
        f.link = -1;  // every link
      } else {
        GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.link));
      }
      if (f.kind == FaultKind::kNvlinkDown) GPUSCOPE_RETURN_IF_ERROR(Arg(w, 2, &f.train_s));
      break;
    case FaultKind::kFabric:
      GPUSCOPE_RETURN_IF_ERROR(FabricFaultFromWords(w, &f.fabric));
      break;
    case FaultKind::kMemoryLeak:
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 1, &f.rate_mib_s));
      break;
    case FaultKind::kHang:
      if (w.size() > 1) f.function = w[1];
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 2, &f.seconds));
      break;
    case FaultKind::kFail:
      if (w.size() > 1) f.function = w[1];
      GPUSCOPE_RETURN_IF_ERROR(Arg(w, 2, &f.code));
      if (f.code == 0) return Status::InvalidArgument("fail needs a non-zero error code");
      break;
    case FaultKind::kRecoveryAction:
      if (w.size() < 2 || !ParseRecoveryAction(w[1], &f.action)) {
        return Status::InvalidArgument("recovery-action needs 0..4 or a name");
      }
      break;
    default:
      break;
  }
  return f;
}

}  // namespace gpuscope::sim
