#include "fabric.h"

#include <charconv>
#include <string_view>

#include "nvml/abi.h"

namespace gpuscope::sim {
namespace {

namespace n = gpuscope::nvml;

constexpr const char* kStateNames[] = {"not-supported", "not-started", "in-progress", "completed"};
// Index = NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_* code.
constexpr const char* kConfigNames[] = {"not-supported",     "none",
                                        "incorrect-sysguid", "incorrect-chassis-sn",
                                        "no-partition",      "insufficient-nvlinks"};

struct IssueName {
  FabricIssue bit;
  const char* word;  // control word
  const char* key;   // YAML key
  unsigned shift;    // in the health mask
};
constexpr IssueName kIssues[] = {
    {kIssueDegradedBandwidth, "degraded-bandwidth", "degraded_bandwidth",
     n::kFabricDegradedBwShift},
    {kIssueRouteRecovery, "route-recovery", "route_recovery", n::kFabricRouteRecoveryShift},
    {kIssueRouteUnhealthy, "route-unhealthy", "route_unhealthy", n::kFabricRouteUnhealthyShift},
    {kIssueAccessTimeoutRecovery, "access-timeout-recovery", "access_timeout_recovery",
     n::kFabricAccessTimeoutRecoveryShift},
};

template <size_t N>
bool FindName(const char* const (&names)[N], std::string_view text, unsigned first, unsigned* out) {
  for (unsigned i = first; i < N; ++i) {
    if (text == names[i]) {
      *out = i;
      return true;
    }
  }
  return false;
}

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// FaultActiveAt's rule, here so that the scenario parser's fuzz target needs
// no physics.
bool ActiveAt(const FaultSpec& f, double t) { return f.at <= t && t < f.until; }

bool TrainingAt(const FaultSpec& f, double t) {
  return f.kind == FaultKind::kNvlinkDown && f.until <= t && t < f.until + f.train_s;
}

}  // namespace

bool LinkDownAt(const FaultSpec& f, double t) {
  return f.kind == FaultKind::kNvlinkDown && (ActiveAt(f, t) || TrainingAt(f, t));
}

void MarkLinksDown(const FaultSpec& f, double t, unsigned links,
                   std::array<bool, kMaxLinks>& down) {
  if (!LinkDownAt(f, t)) return;
  for (unsigned l = 0; l < links && l < kMaxLinks; ++l) {
    if (f.link < 0 || static_cast<unsigned>(f.link) == l) down[l] = true;
  }
}

FabricReport FabricAt(uint64_t seed, const std::vector<FaultSpec>& faults, double t) {
  FabricReport r;
  uint64_t a = SplitMix(seed ^ 0xFAB41C), b = SplitMix(a);
  for (int i = 0; i < 8; ++i) {
    r.cluster_uuid[i] = static_cast<unsigned char>(a >> (8 * i));
    r.cluster_uuid[8 + i] = static_cast<unsigned char>(b >> (8 * i));
  }
  r.cluster_uuid[6] = (r.cluster_uuid[6] & 0x0F) | 0x40;  // an RFC 4122 version 4 UUID
  r.cluster_uuid[8] = (r.cluster_uuid[8] & 0x3F) | 0x80;
  r.clique_id = 1;
  r.state = kFabricCompleted;
  unsigned issues = 0, config = n::kFabricConfigNone;
  bool training = false;
  for (const FaultSpec& f : faults) {
    training = training || TrainingAt(f, t);
    if (f.kind != FaultKind::kFabric || !ActiveAt(f, t)) continue;
    r.state = f.fabric.state, r.status = f.fabric.status;
    issues |= f.fabric.issues;
    if (f.fabric.incorrect_configuration != n::kFabricConfigNone) {
      config = f.fabric.incorrect_configuration;
    }
  }
  if (training && r.state == kFabricCompleted) r.state = kFabricInProgress;
  for (const IssueName& i : kIssues) {
    unsigned flag = (issues & i.bit) ? n::kFabricFlagTrue : n::kFabricFlagFalse;
    r.health_mask |= flag << i.shift;
  }
  r.health_mask |= config << n::kFabricIncorrectConfigShift;
  bool unhealthy = (issues & kIssueRouteUnhealthy) || config != n::kFabricConfigNone;
  r.health_summary = unhealthy ? 2 : issues != 0 ? 3 : 1;
  return r;
}

Status FabricFaultParams(FieldReader& r, FabricFault* f) {
  if (r.Has("state")) {
    std::string state;
    GPUSCOPE_RETURN_IF_ERROR(r.String("state", &state));
    if (!FindName(kStateNames, state, 1, &f->state)) {
      return r.Error(r.Get("state"), "state must be not-started, in-progress or completed");
    }
  }
  GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("status", &f->status, 0, 999));
  for (const IssueName& i : kIssues) {
    bool on = false;
    GPUSCOPE_RETURN_IF_ERROR(r.Bool(i.key, &on));
    if (on) f->issues |= i.bit;
  }
  if (r.Has("incorrect_configuration")) {
    std::string config;
    GPUSCOPE_RETURN_IF_ERROR(r.String("incorrect_configuration", &config));
    if (!FindName(kConfigNames, config, 1, &f->incorrect_configuration)) {
      return r.Error(r.Get("incorrect_configuration"),
                     "incorrect_configuration must be none, incorrect-sysguid, "
                     "incorrect-chassis-sn, no-partition or insufficient-nvlinks");
    }
  }
  return Status::Ok();
}

Status FabricFaultFromWords(const std::vector<std::string>& w, FabricFault* f) {
  if (w.size() < 2) return Status::InvalidArgument("fabric needs an issue, state or status");
  for (const IssueName& i : kIssues) {
    if (w[1] == i.word) {
      f->issues |= i.bit;
      return Status::Ok();
    }
  }
  if (w.size() == 3 && w[1] == "state" && FindName(kStateNames, w[2], 1, &f->state)) {
    return Status::Ok();
  }
  if (w.size() == 3 && w[1] == "incorrect-configuration" &&
      FindName(kConfigNames, w[2], 2, &f->incorrect_configuration)) {
    return Status::Ok();
  }
  if (w.size() == 3 && w[1] == "status") {
    auto [p, ec] = std::from_chars(w[2].data(), w[2].data() + w[2].size(), f->status);
    if (ec == std::errc() && p == w[2].data() + w[2].size() && f->status <= 999) {
      return Status::Ok();
    }
  }
  return Status::InvalidArgument(
      "fabric needs degraded-bandwidth, route-recovery, "
      "route-unhealthy, access-timeout-recovery, state <name>, "
      "status <code> or incorrect-configuration <name>");
}

}  // namespace gpuscope::sim
