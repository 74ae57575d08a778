#include "collect/window_tiers.h"

#include <algorithm>
#include <cmath>

namespace gpuscope {
namespace {

enum class Kind : uint8_t { kGauge, kCounter, kBitmask };

// How a metric merges into a bucket, from the catalog.
const std::array<Kind, kMetricCount>& Kinds() {
  static const std::array<Kind, kMetricCount> kinds = [] {
    std::array<Kind, kMetricCount> out{};
    for (const MetricDef& def : kCatalog) {
      Kind k = Kind::kGauge;
      if (def.native.type == MetricType::kCounter || def.dcgm.type == MetricType::kCounter) {
        k = Kind::kCounter;
      }
      if (def.smi.format == SmiFormat::kHex64) k = Kind::kBitmask;
      out[Index(def.id)] = k;
    }
    return out;
  }();
  return kinds;
}

float Bits(uint64_t bits) { return static_cast<float>(bits); }
uint64_t Bits(float value) { return static_cast<uint64_t>(std::llround(value)); }

}  // namespace

void BucketBuilder::Add(const WindowPoint& p, double seconds, double slot) {
  if (samples_ == 0) t_ = p.t, slot_ = slot;
  seconds_ += seconds;
  samples_ += p.samples;
  const double w = std::max(seconds, 1e-9);
  const auto& kinds = Kinds();
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    if (!p.present.test(i)) continue;
    const auto m = static_cast<Metric>(i);
    const float v = p.values[i];
    const float lo = static_cast<float>(p.Min(m)), hi = static_cast<float>(p.Max(m));
    if (!present_.test(i)) {
      present_.set(i);
      first_[i] = v, weight_[i] = 0, sum_[i] = 0, sum_sq_[i] = 0;
      min_[i] = lo, max_[i] = hi;
    }
    switch (kinds[i]) {
      case Kind::kCounter:
        break;
      case Kind::kBitmask: {
        min_[i] = Bits(Bits(min_[i]) & Bits(lo));
        max_[i] = Bits(Bits(max_[i]) | Bits(hi));
        std::array<double, 64>& bits = BitSeconds(i);
        for (uint64_t set = Bits(hi), bit = 0; set != 0; set >>= 1, ++bit) {
          if (set & 1) bits[bit] += w * p.BitTimeShare(m, static_cast<unsigned>(bit));
        }
        continue;
      }
      case Kind::kGauge: {
        const double d = v - first_[i], sd = p.Stddev(m);
        weight_[i] += w, sum_[i] += w * d, sum_sq_[i] += w * (d * d + sd * sd);
        break;
      }
    }
    min_[i] = std::min(min_[i], lo);
    max_[i] = std::max(max_[i], hi);
  }
}

WindowPoint BucketBuilder::Build() const {
  WindowPoint out;
  out.t = t_;
  out.seconds = static_cast<float>(seconds_);
  out.samples = samples_;
  out.present = present_;
  const auto& kinds = Kinds();
  for (std::size_t i = 0; i < kMetricCount; ++i) {
    if (!present_.test(i)) continue;
    const auto metric = static_cast<uint16_t>(i);
    switch (kinds[i]) {
      case Kind::kCounter:
        out.values[i] = static_cast<float>(first_[i]);
        break;
      case Kind::kBitmask: {
        out.values[i] = max_[i];
        if (min_[i] == max_[i]) break;
        out.spreads.push_back({metric, min_[i], max_[i], 0});
        const std::array<double, 64>* bits = FindBitSeconds(i);
        const uint64_t mixed = Bits(max_[i]) & ~Bits(min_[i]);
        for (unsigned bit = 0; bit < 64; ++bit) {
          if (!(mixed >> bit & 1)) continue;
          const double share = bits && seconds_ > 0 ? (*bits)[bit] / seconds_ : 0.5;
          out.bit_shares.push_back(
              {metric, static_cast<uint8_t>(bit), static_cast<float>(std::clamp(share, 0.0, 1.0))});
        }
        break;
      }
      case Kind::kGauge: {
        const double w = weight_[i] > 0 ? weight_[i] : 1;
        const double mean = sum_[i] / w, var = sum_sq_[i] / w - mean * mean;
        out.values[i] = std::clamp(static_cast<float>(first_[i] + mean), min_[i], max_[i]);
        if (min_[i] != max_[i]) {
          out.spreads.push_back(
              {metric, min_[i], max_[i], static_cast<float>(std::sqrt(std::max(0.0, var)))});
        }
        break;
      }
    }
  }
  return out;
}

std::array<double, 64>& BucketBuilder::BitSeconds(std::size_t metric) {
  for (auto& [m, bits] : bit_seconds_) {
    if (m == metric) return bits;
  }
  bit_seconds_.emplace_back(static_cast<uint16_t>(metric), std::array<double, 64>{});
  return bit_seconds_.back().second;
}

const std::array<double, 64>* BucketBuilder::FindBitSeconds(std::size_t metric) const {
  for (const auto& [m, bits] : bit_seconds_) {
    if (m == metric) return &bits;
  }
  return nullptr;
}

void BucketBuilder::Clear() {
  samples_ = 0;
  seconds_ = 0;
  present_.reset();
  bit_seconds_.clear();
}

WindowTiers::WindowTiers(const Window::Options& options) : options_(options) {
  for (const Window::Level& def : options.levels) levels_.push_back(Level{def, {}, {}});
}

void WindowTiers::Append(const WindowPoint& point) {
  // Half the resolution: a sampler's jitter (99.9 ms at -c 100) must not
  // merge its samples, a burst or a frozen clock must.
  const double close = options_.resolution_seconds / 2;
  const std::size_t n = recent_.size();
  if (n > 1 && point.t - recent_.back().t < close && recent_.back().t - recent_[n - 2].t < close) {
    recent_.back() = point;  // keep spacing >= resolution, newest values win
  } else {
    recent_.push_back(point);
  }
  Cascade(point.t);
  while (recent_.size() > options_.recent_points) Retire(point.t);
  DropBefore(point.t - options_.span_seconds);
}

void WindowTiers::Retire(double newest) {
  WindowPoint p = std::move(recent_.front());
  recent_.pop_front();
  const double seconds = recent_.front().t - p.t;
  std::size_t k = 0;
  while (k + 1 < levels_.size() && newest - p.t > levels_[k].def.horizon_seconds) ++k;
  AddToLevel(k, p, seconds);
}

void WindowTiers::Cascade(double newest) {
  for (std::size_t k = 0; k + 1 < levels_.size(); ++k) {
    Level& l = levels_[k];
    const double horizon = l.def.horizon_seconds;
    while (!l.closed.empty() && newest - l.closed.front().t > horizon) {
      AddToLevel(k + 1, l.closed.front(), l.closed.front().seconds);
      l.closed.pop_front();
    }
    if (l.closed.empty() && !l.open.empty() && newest - l.open.t() > horizon) {
      WindowPoint bucket = l.open.Build();
      l.open.Clear();
      AddToLevel(k + 1, bucket, bucket.seconds);
    }
  }
}

void WindowTiers::AddToLevel(std::size_t level, const WindowPoint& p, double seconds) {
  Level& l = levels_[level];
  const double slot = std::floor(p.t / l.def.width_seconds);
  if (!l.open.empty() && l.open.slot() != slot) {
    l.closed.push_back(l.open.Build());
    l.open.Clear();
  }
  l.open.Add(p, seconds, slot);
}

void WindowTiers::DropBefore(double cutoff) {
  for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
    while (!it->closed.empty() && it->closed.front().t < cutoff) it->closed.pop_front();
    if (it->closed.empty() && !it->open.empty() && it->open.t() < cutoff) it->open.Clear();
  }
  while (recent_.size() > 1 && recent_.front().t < cutoff) recent_.pop_front();
}

std::vector<WindowPoint> WindowTiers::Points(double since) const {
  std::vector<WindowPoint> out;
  out.reserve(Held());
  for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
    for (const WindowPoint& b : it->closed) {
      if (b.t >= since) out.push_back(b);
    }
    if (!it->open.empty() && it->open.t() >= since) out.push_back(it->open.Build());
  }
  const std::size_t n = recent_.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (recent_[i].t < since) continue;
    WindowPoint p = recent_[i];
    if (i + 1 < n) {
      p.seconds = static_cast<float>(recent_[i + 1].t - p.t);
    } else {
      p.seconds = static_cast<float>(n > 1 ? p.t - recent_[n - 2].t : options_.resolution_seconds);
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::size_t WindowTiers::Held() const {
  std::size_t n = recent_.size();
  for (const Level& l : levels_) n += l.closed.size() + (l.open.empty() ? 0 : 1);
  return n;
}

}  // namespace gpuscope
