#include "history.h"

#include <cmath>

namespace gpuscope::sim {
namespace {

constexpr double kDay = 86400.0;

// Channels of Noise01 at step -1 (before any integration step).
enum Channel : unsigned { kBusyShare = 500, kReplays, kEcc, kLinkBase = 600, kLinkErrBase = 700 };

double Draw(const PhysicsInput& in, unsigned channel) {
  return Noise01(in.seed, in.gpu, -1, channel);
}

}  // namespace

double LinkWeight(const PhysicsInput& in, unsigned link) {
  return 0.6 + 0.8 * Draw(in, kLinkBase + link);
}

void ApplyDriverHistory(const PhysicsInput& in, GpuState& s) {
  const double up = in.spec.driver_uptime_s;
  if (up <= 0) return;
  const Preset& p = *in.spec.preset;
  // Busy 35..75% of the time since the driver loaded, at a training load.
  const double busy = 0.35 + 0.4 * Draw(in, kBusyShare);
  const double busy_w = p.idle_power_w + 0.75 * (p.full_power_w - p.idle_power_w);
  s.energy_mj += up * (busy * busy_w + (1 - busy) * p.idle_power_w) * 1000;
  s.violation_ns[kViolLowUtil] += up * (1 - busy) * 1e9;
  s.violation_ns[kViolPower] += up * busy * 0.01 * 1e9;  // 1% of busy time at the cap
  // A healthy link replays a few times a day.
  s.pcie_replays += std::floor(up / kDay * (1 + 4 * Draw(in, kReplays)));
  // Lifetime corrected ECC errors (aggregate counters survive driver loads);
  // the volatile ones and every uncorrected count stay 0 on a healthy board.
  if (p.ecc) s.ecc_sbe_agg += 1 + static_cast<unsigned long long>(8 * Draw(in, kEcc));
  const unsigned links = p.nvlink_links;
  if (links == 0) return;
  double weights = 0;
  for (unsigned l = 0; l < links; ++l) weights += LinkWeight(in, l);
  // Training traffic (80 GB/s each way over all links) while busy.
  const double kib = up * busy * 80e9 / 1024;
  for (unsigned l = 0; l < links; ++l) {
    double share = LinkWeight(in, l) / weights;
    s.nvlink_tx_kib[l] += kib * share, s.nvlink_rx_kib[l] += kib * share;
    // CRC errors a healthy link corrects by replaying: on about one link in
    // six, a few a day; the others read 0. Replay and recovery counts stay 0
    // (they would read as a link problem).
    double err = Draw(in, kLinkErrBase + l);
    if (err < 1.0 / 6) s.link_errors[l].crc_flit += std::floor(1 + up / kDay * 36 * err);
  }
}

}  // namespace gpuscope::sim
