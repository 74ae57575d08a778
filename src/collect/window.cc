#include "gpuscope/window.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "collect/window_tiers.h"

namespace gpuscope {

const Spread* WindowPoint::SpreadOf(Metric m) const {
  // Spreads are in metric order (BucketBuilder::Build): read for every point of a series.
  const auto it = std::lower_bound(spreads.begin(), spreads.end(), Index(m),
                                   [](const Spread& s, std::size_t i) { return s.metric < i; });
  return it != spreads.end() && it->metric == Index(m) ? &*it : nullptr;
}

double WindowPoint::Min(Metric m) const {
  const Spread* s = SpreadOf(m);
  return s ? s->min : Get(m);
}

double WindowPoint::Max(Metric m) const {
  const Spread* s = SpreadOf(m);
  return s ? s->max : Get(m);
}

double WindowPoint::Stddev(Metric m) const {
  const Spread* s = SpreadOf(m);
  return s ? s->stddev : 0;
}

double WindowPoint::BitTimeShare(Metric m, unsigned bit) const {
  if (!Has(m) || bit >= 64) return 0;
  const uint64_t mask = uint64_t{1} << bit;
  if (static_cast<uint64_t>(std::llround(Min(m))) & mask) return 1;
  for (const BitShare& b : bit_shares) {
    if (b.metric == Index(m) && b.bit == bit) return b.share;
  }
  return 0;
}

Window::Window(Options options) : options_(std::move(options)) {
  if (options_.recent_points < 2) options_.recent_points = 2;
  if (options_.levels.empty()) options_.levels.push_back({10, options_.span_seconds});
}

Window::~Window() = default;

void Window::Append(std::size_t gpu, const WindowPoint& point) {
  std::lock_guard lock(mu_);
  while (gpus_.size() <= gpu) gpus_.push_back(std::make_unique<WindowTiers>(options_));
  gpus_[gpu]->Append(point);
}

void Window::AppendInstances(std::size_t gpu,
                             const std::vector<std::pair<uint32_t, WindowPoint>>& points) {
  std::lock_guard lock(mu_);
  for (auto it = instances_.lower_bound({gpu, 0});
       it != instances_.end() && it->first.first == gpu;) {
    const bool read = std::any_of(points.begin(), points.end(),
                                  [&](const auto& p) { return p.first == it->first.second; });
    it = read ? std::next(it) : instances_.erase(it);
  }
  for (const auto& [id, point] : points) {
    std::unique_ptr<WindowTiers>& tiers = instances_[{gpu, id}];
    if (!tiers) tiers = std::make_unique<WindowTiers>(options_);
    tiers->Append(point);
  }
}

std::vector<WindowPoint> Window::InstancePoints(std::size_t gpu, uint32_t instance,
                                                double since) const {
  std::lock_guard lock(mu_);
  auto it = instances_.find({gpu, instance});
  return it == instances_.end() ? std::vector<WindowPoint>{} : it->second->Points(since);
}

std::vector<WindowPoint> Window::Points(std::size_t gpu, double since) const {
  std::lock_guard lock(mu_);
  if (gpu >= gpus_.size()) return {};
  return gpus_[gpu]->Points(since);
}

std::size_t Window::HeldPoints(std::size_t gpu) const {
  std::lock_guard lock(mu_);
  return gpu < gpus_.size() ? gpus_[gpu]->Held() : 0;
}

std::size_t Window::gpu_count() const {
  std::lock_guard lock(mu_);
  return gpus_.size();
}

}  // namespace gpuscope
