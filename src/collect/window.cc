#include "gpuscope/window.h"

namespace gpuscope {

void Window::Append(std::size_t gpu, const WindowPoint& point) {
  std::lock_guard lock(mu_);
  if (gpus_.size() <= gpu) gpus_.resize(gpu + 1);
  std::deque<WindowPoint>& points = gpus_[gpu];
  if (!points.empty() && point.t - points.back().t < options_.resolution_seconds &&
      points.size() > 1 &&
      points.back().t - points[points.size() - 2].t < options_.resolution_seconds) {
    points.back() = point;  // keep spacing >= resolution, newest values win
  } else {
    points.push_back(point);
  }
  while (!points.empty() && points.front().t < point.t - options_.span_seconds) points.pop_front();
}

std::vector<WindowPoint> Window::Points(std::size_t gpu, double since) const {
  std::lock_guard lock(mu_);
  std::vector<WindowPoint> out;
  if (gpu >= gpus_.size()) return out;
  for (const WindowPoint& p : gpus_[gpu]) {
    if (p.t >= since) out.push_back(p);
  }
  return out;
}

std::size_t Window::gpu_count() const {
  std::lock_guard lock(mu_);
  return gpus_.size();
}

}  // namespace gpuscope
