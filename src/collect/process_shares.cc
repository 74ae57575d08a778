#include "collect/process_shares.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

namespace gpuscope::collect {
namespace {

// How many sampling periods the distinct timestamps (sorted) span.
double Periods(const std::set<uint64_t>& stamps) {
  const auto seen = static_cast<double>(stamps.size());
  if (stamps.size() < 3) return seen;  // a spacing needs two gaps to be trusted
  std::vector<uint64_t> gaps;
  for (auto a = stamps.begin(), b = std::next(a); b != stamps.end(); ++a, ++b) {
    gaps.push_back(*b - *a);
  }
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  const double spacing = static_cast<double>(gaps[gaps.size() / 2]);
  const double span = static_cast<double>(*stamps.rbegin() - *stamps.begin());
  return std::max(seen, std::round(span / spacing) + 1);
}

}  // namespace

std::map<uint32_t, double> ProcessSmShares(
    std::span<const nvml::ProcessUtilizationSample> samples) {
  std::set<std::pair<uint32_t, uint64_t>> counted;  // (pid, timestamp)
  std::set<uint64_t> stamps;
  std::map<uint32_t, double> percent;
  for (const nvml::ProcessUtilizationSample& s : samples) {
    if (!counted.insert({s.pid, s.timestamp_us}).second) continue;
    stamps.insert(s.timestamp_us);
    percent[s.pid] += std::min<uint32_t>(s.sm_percent, 100);
  }
  std::map<uint32_t, double> out;
  if (stamps.empty()) return out;
  const double periods = Periods(stamps);
  for (const auto& [pid, sum] : percent) out[pid] = std::clamp(sum / 100 / periods, 0.0, 1.0);
  return out;
}

}  // namespace gpuscope::collect
