// Physics of one simulated GPU: integrates its state on a fixed 100 ms
// scenario-time step from t = 0. Load drives power, power drives temperature
// (first-order lag), temperature and power limits drive clocks and clock
// event reasons; counters (energy, violation time, PCIe/NVLink traffic,
// errors, GPM activity) are exact integrals over the steps. The state is a
// pure function of (scenario, seed, faults, step).
//
// Thread safety: pure functions over caller-owned state.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "scenario.h"
#include "workload.h"

namespace gpuscope::sim {

constexpr double kStepSeconds = 0.1;
constexpr unsigned kMaxLinks = 18;
constexpr int kPowerWindow = 10;  // steps in the 1 s power average
// Steps in the driver's utilization sample period (1 s on datacenter boards):
// nvmlDeviceGetUtilizationRates answers the average over it.
constexpr int kUtilWindow = 10;
// An idle GPU parks its PCIe link at Gen1 after this long; it retrains to
// its maximum at the first busy step.
constexpr double kPcieParkAfterS = 1.0;

int64_t StepAt(double t);  // the step whose state describes time t

// Cumulative activity integrals (fraction x seconds; bytes) for GPM.
struct GpmTotals {
  double seconds = 0;
  double graphics = 0, sm = 0, occupancy = 0, integer = 0, tensor = 0, dram = 0;
  double fp64 = 0, fp32 = 0, fp16 = 0;
  double pcie_tx = 0, pcie_rx = 0;
  std::array<double, kMaxLinks> nvlink_tx{}, nvlink_rx{};
};

struct LinkErrors {
  double replay = 0, recovery = 0, crc_flit = 0, crc_data = 0, ecc_data = 0;
};

// Violation-time slots (fields 74..79).
enum Violation { kViolPower, kViolThermal, kViolSync, kViolBoard, kViolLowUtil, kViolReliability };

struct GpuState {
  int64_t step = -1;  // -1: not initialised
  // The latest step's instantaneous values.
  Activity act;
  double power_w = 0, temp_c = 0, mem_temp_c = 0;
  double clock_ratio = 1, thermal_ratio = 1;
  double hbm_ratio = 1;  // memory-temperature slowdown (SwThermal 0x20)
  unsigned sm_clock = 0, mem_clock = 0;
  int pstate = 0;
  unsigned long long reasons = 0;
  double limit_w = 0;
  std::array<double, kPowerWindow> power_hist{};
  std::array<double, kUtilWindow> util_hist{}, dram_hist{};
  double util_avg = 0, dram_avg = 0;  // over the utilization sample period
  double idle_s = 0;                  // seconds since the last busy step
  // Integrals and counters.
  double energy_mj = 0;
  std::array<double, 6> violation_ns{};
  double memory_used = 0;  // bytes, excluding reserved
  double leak_bytes = 0;
  double pcie_replays = 0;
  unsigned pcie_gen = 0, pcie_width = 0;
  std::array<double, kMaxLinks> nvlink_tx_kib{}, nvlink_rx_kib{};
  std::array<LinkErrors, kMaxLinks> link_errors{};
  std::array<bool, kMaxLinks> link_down{};
  unsigned long long ecc_sbe_vol = 0, ecc_dbe_vol = 0, ecc_sbe_agg = 0, ecc_dbe_agg = 0;
  unsigned retired_sbe = 0, retired_dbe = 0;
  bool retired_pending = false;
  unsigned remap_corr = 0, remap_unc = 0;
  bool remap_pending = false, remap_failure = false;
  unsigned last_xid = 0;
  GpmTotals gpm;

  double PowerAverageW() const;
};

struct PhysicsInput {
  const GpuSpec& spec;
  uint64_t seed;
  unsigned gpu;
  const std::vector<FaultSpec>& faults;
  // Live processes attached at run time (Sim::Attach): their SM share raises
  // the activity and their memory counts, from start to end.
  const std::vector<ProcessSpec>* attached = nullptr;
};

// The state at step 0 (thermal steady state for the load at t = 0), with the
// onsets of faults at step 0 applied; their indices go to onsets.
GpuState InitialState(const PhysicsInput& in, std::vector<size_t>* onsets);

// Advances s by one step; indices of faults whose onset falls on the new step
// are appended to onsets.
void Step(const PhysicsInput& in, GpuState& s, std::vector<size_t>* onsets);

// Applies the one-off effect of a fault (counters, flags) to s.
void ApplyOnset(const PhysicsInput& in, const FaultSpec& f, GpuState& s);

// Bytes of memory held by the processes of `spec` alive at t (gpu_instance:
// -1 all, else that MIG instance only).
double ProcessMemoryAt(const GpuSpec& spec, double t, int gpu_instance);
double ProcessMemoryAt(const std::vector<ProcessSpec>& processes, double t, int gpu_instance);

bool FaultActiveAt(const FaultSpec& f, double t);

}  // namespace gpuscope::sim
