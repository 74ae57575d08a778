// The point a vGPU instance adds to its window (Window::AppendInstances) at
// each slow read of its host board, so that the diagnosis judges it as it
// judges a GPU or a MIG instance: utilization.gpu and memory used.
//
// NVML gives an instance's utilization as a share of the whole board. On a
// time-sliced board an instance that runs every slice it is given still
// shows a third of the board when two others are busy too, so the point
// holds its share of the time the scheduler let the busy instances run:
// share / (1 - the board's scheduler wait ratio), at most 100%.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "gpuscope/snapshot.h"
#include "gpuscope/window.h"

namespace gpuscope::collect {

std::vector<std::pair<uint32_t, WindowPoint>> VgpuPoints(double t, const GpuSample& board);

}  // namespace gpuscope::collect
