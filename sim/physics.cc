#include "physics.h"

#include <algorithm>
#include <cmath>

#include "fabric.h"
#include "history.h"

namespace gpuscope::sim {
namespace {

constexpr double kThermalTauS = 25.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

// What the active durative faults do during one step.
struct Effects {
  double cooling = 1;
  double cap_w = 0;
  bool brake = false;
  bool pcie_down = false;
  unsigned gen = 0, width = 0;
  double pcie_replay_rate = 0;
  std::array<LinkErrors, kMaxLinks> link_rates{};
  std::array<bool, kMaxLinks> link_down{};
  bool leaking = false;
  double leak_rate = 0;  // bytes/s
};

void AddLinkRates(const FaultSpec& f, unsigned links, Effects& e) {
  for (unsigned l = 0; l < links; ++l) {
    if (f.link >= 0 && static_cast<unsigned>(f.link) != l) continue;
    e.link_rates[l].crc_flit += f.crc_rate;
    e.link_rates[l].crc_data += f.crc_rate / 4;
    e.link_rates[l].replay += f.replay_rate;
    e.link_rates[l].recovery += f.recovery_rate;
  }
}

Effects ActiveEffects(const PhysicsInput& in, double t) {
  Effects e;
  unsigned links = in.spec.preset->nvlink_links;
  for (const FaultSpec& f : in.faults) {
    if (f.kind == FaultKind::kNvlinkDown) {  // down, then training (sim/fabric.h)
      MarkLinksDown(f, t, links, e.link_down);
      continue;
    }
    if (!FaultActiveAt(f, t)) continue;
    switch (f.kind) {
      case FaultKind::kCoolingFailure:
        e.cooling = std::max(e.cooling, f.factor);
        break;
      case FaultKind::kPowerCap:
        e.cap_w = f.watts;
        break;
      case FaultKind::kPowerBrake:
        e.brake = true;
        break;
      case FaultKind::kPcieDowngrade:
        e.pcie_down = true, e.gen = f.gen, e.width = f.width;
        e.pcie_replay_rate += f.replay_rate;
        break;
      case FaultKind::kNvlinkErrors:
        AddLinkRates(f, links, e);
        break;
      case FaultKind::kMemoryLeak:
        e.leaking = true, e.leak_rate += f.rate_mib_s * kMiB;
        break;
      default:
        break;
    }
  }
  return e;
}

// Memory (HBM) temperature: a few degrees under the GPU, warmer with DRAM
// traffic, plus the scenario's offset for a board whose HBM runs hot.
double MemoryTemp(const GpuSpec& spec, const GpuState& s) {
  return s.temp_c - 3 + 8 * s.act.dram + spec.hbm_offset_c;
}

void AverageUtilization(GpuState& s) {
  auto slot = static_cast<size_t>(s.step % kUtilWindow);
  s.util_hist[slot] = s.act.util, s.dram_hist[slot] = s.act.dram;
  double u = 0, m = 0;
  for (int i = 0; i < kUtilWindow; ++i) u += s.util_hist[i], m += s.dram_hist[i];
  s.util_avg = u / kUtilWindow, s.dram_avg = m / kUtilWindow;
}

// A slowdown ratio that drops 0.02 per step while `hot` and recovers 0.01 per
// step once `cool`.
double SlowdownRatio(double ratio, bool hot, bool cool) {
  if (hot) return std::max(0.3, ratio - 0.02);
  if (cool) return std::min(1.0, ratio + 0.01);
  return ratio;
}

struct Thermal {
  double r;        // degrees per watt
  double ambient;  // degrees at zero power
};

Thermal ThermalModel(const GpuSpec& spec) {
  const Preset& p = *spec.preset;
  double r = (p.full_temp_c - p.idle_temp_c) / (p.full_power_w - p.idle_power_w);
  return {r, p.idle_temp_c + spec.ambient_c - r * p.idle_power_w};
}

double TargetTemp(const GpuSpec& spec, const Effects& e, double power) {
  Thermal th = ThermalModel(spec);
  return th.ambient + th.r * e.cooling * power;
}

// Sets power, clocks, pstate and reasons for activity a under the limits.
void Operate(const PhysicsInput& in, const Effects& e, const Activity& a, GpuState& s) {
  const Preset& p = *in.spec.preset;
  bool busy = a.util >= 0.01;
  double idle = p.idle_power_w;
  double demand = busy ? idle + (p.peak_power_w - idle) * PowerActivity(a) * a.power_boost : idle;
  s.limit_w = e.cap_w > 0 ? e.cap_w
                          : (in.spec.power_limit_w > 0 ? in.spec.power_limit_w : p.power_default_w);
  double cap_ratio = 1;
  if (demand > s.limit_w) {
    cap_ratio = std::clamp((s.limit_w - idle) / (demand - idle), 0.1, 1.0);
  }
  double brake_ratio = e.brake ? 0.25 : 1.0;
  s.clock_ratio = std::min({cap_ratio, s.thermal_ratio, s.hbm_ratio, brake_ratio});
  s.power_w = idle + (demand - idle) * s.clock_ratio;
  s.act = a;
  s.sm_clock = busy ? std::max<unsigned>(p.idle_sm_clock,
                                         static_cast<unsigned>(p.max_sm_clock * s.clock_ratio))
                    : p.idle_sm_clock;
  s.pstate = busy ? 0 : p.idle_pstate;
  s.mem_clock = s.pstate == 0 ? p.max_mem_clock : p.idle_mem_clock;
  s.reasons = 0;
  if (!busy) s.reasons |= 0x1;                 // GpuIdle
  if (cap_ratio < 1) s.reasons |= 0x4;         // SwPowerCap
  if (s.thermal_ratio < 1) s.reasons |= 0x60;  // Sw + Hw thermal slowdown
  if (s.hbm_ratio < 1) s.reasons |= 0x20;      // Sw thermal: memory above its max
  if (e.brake) s.reasons |= 0x80 | 0x8;        // HW power brake, HW slowdown
}

// Memory held (bytes, excluding reserved) at t, after the leak.
void UpdateMemory(const PhysicsInput& in, const Effects& e, double t, GpuState& s, double dt) {
  const Preset& p = *in.spec.preset;
  double capacity = (p.memory_total_mib - p.memory_reserved_mib) * kMiB;
  double attached = in.attached ? ProcessMemoryAt(*in.attached, t, -1) : 0;
  double base = std::max(s.act.memory_gib * kGiB, ProcessMemoryAt(in.spec, t, -1) + attached);
  if (in.spec.vgpu_host) {  // a vGPU host board holds each VM's whole framebuffer
    double vgpu_fb = 0;
    for (const VgpuInstanceSpec& v : in.spec.vgpu_host->instances) vgpu_fb += v.fb_bytes;
    base = std::max(base, vgpu_fb);
  }
  s.leak_bytes = e.leaking ? s.leak_bytes + e.leak_rate * dt : 0;
  s.leak_bytes = std::clamp(s.leak_bytes, 0.0, std::max(0.0, capacity - base));
  s.memory_used = std::min(capacity, base + s.leak_bytes);
}

void UpdateLinks(const PhysicsInput& in, const Effects& e, GpuState& s, double dt) {
  unsigned links = in.spec.preset->nvlink_links;
  // Traffic splits unevenly (fixed per-link shares of the up links).
  double weight_up = 0;
  for (unsigned l = 0; l < links; ++l) weight_up += e.link_down[l] ? 0 : LinkWeight(in, l);
  s.link_down = e.link_down;
  for (unsigned l = 0; l < links; ++l) {
    LinkErrors& le = s.link_errors[l];
    const LinkErrors& r = e.link_rates[l];
    le.replay += r.replay * dt, le.recovery += r.recovery * dt;
    le.crc_flit += r.crc_flit * dt, le.crc_data += r.crc_data * dt;
    if (e.link_down[l] || weight_up <= 0) continue;
    double share = LinkWeight(in, l) / weight_up;
    double tx = s.act.nvlink_tx * share * dt, rx = s.act.nvlink_rx * share * dt;
    s.nvlink_tx_kib[l] += tx / 1024, s.nvlink_rx_kib[l] += rx / 1024;
    s.gpm.nvlink_tx[l] += tx, s.gpm.nvlink_rx[l] += rx;
  }
}

void UpdateGpm(GpuState& s, double dt) {
  const Activity& a = s.act;
  GpmTotals& g = s.gpm;
  g.seconds += dt;
  g.graphics += a.util * dt, g.sm += a.sm * dt, g.occupancy += a.occupancy * dt;
  g.integer += 0.3 * a.sm * dt, g.tensor += a.tensor * dt, g.dram += a.dram * dt;
  g.fp64 += a.fp64 * dt, g.fp32 += a.fp32 * dt, g.fp16 += a.fp16 * dt;
  g.pcie_tx += a.pcie_tx * dt, g.pcie_rx += a.pcie_rx * dt;
}

// Integrates the counters of one step over dt and moves the temperature.
void Integrate(const PhysicsInput& in, const Effects& e, double t, GpuState& s, double dt) {
  const Preset& p = *in.spec.preset;
  double target = TargetTemp(in.spec, e, s.power_w);
  s.temp_c += (target - s.temp_c) * (1 - std::exp(-dt / kThermalTauS));
  s.mem_temp_c = MemoryTemp(in.spec, s);
  s.energy_mj += s.power_w * dt * 1000;
  s.power_hist[static_cast<size_t>(s.step % kPowerWindow)] = s.power_w;
  AverageUtilization(s);
  double ns = dt * 1e9;
  if (s.reasons & 0x4) s.violation_ns[kViolPower] += ns;
  if (s.reasons & 0x60) s.violation_ns[kViolThermal] += ns;  // die or memory
  if (s.reasons & 0x80) s.violation_ns[kViolBoard] += ns;
  if (s.reasons & 0x1) s.violation_ns[kViolLowUtil] += ns;
  UpdateMemory(in, e, t, s, dt);
  bool busy = s.act.util >= 0.01;
  s.idle_s = busy ? 0 : s.idle_s + dt;
  unsigned trained = in.spec.pcie_parking && s.idle_s >= kPcieParkAfterS ? 1 : p.pcie_gen;
  s.pcie_gen = e.pcie_down ? std::min(e.gen, trained) : trained;
  s.pcie_width = e.pcie_down ? std::min(e.width, p.pcie_width) : p.pcie_width;
  s.pcie_replays += e.pcie_replay_rate * dt;
  UpdateLinks(in, e, s, dt);
  UpdateGpm(s, dt);
}

// The workload's activity at t, raised to the SM use of the attached
// processes alive then (their sm_share summed, at most 1).
Activity WorkloadAt(const PhysicsInput& in, double t, int64_t step) {
  Activity a = EvaluateWorkload(in.spec.workload, t, in.seed, in.gpu, step);
  if (!in.attached) return a;
  double sm = 0;
  for (const ProcessSpec& p : *in.attached) {
    if (p.start <= t && t < p.end) sm += p.sm_share;
  }
  sm = std::min(1.0, sm);
  a.util = std::max(a.util, sm), a.sm = std::max(a.sm, sm);
  a.occupancy = std::max(a.occupancy, sm / 2), a.dram = std::max(a.dram, sm / 3);
  return a;
}

void CollectOnsets(const PhysicsInput& in, GpuState& s, std::vector<size_t>* onsets) {
  for (size_t i = 0; i < in.faults.size(); ++i) {
    if (StepAt(in.faults[i].at) != s.step) continue;
    ApplyOnset(in, in.faults[i], s);
    if (onsets) onsets->push_back(i);
  }
}

}  // namespace

int64_t StepAt(double t) { return static_cast<int64_t>(std::floor(t / kStepSeconds + 1e-9)); }

double GpuState::PowerAverageW() const {
  double sum = 0;
  for (double p : power_hist) sum += p;
  return sum / kPowerWindow;
}

bool FaultActiveAt(const FaultSpec& f, double t) { return f.at <= t && t < f.until; }

double ProcessMemoryAt(const GpuSpec& spec, double t, int gpu_instance) {
  return ProcessMemoryAt(spec.processes, t, gpu_instance);
}

double ProcessMemoryAt(const std::vector<ProcessSpec>& processes, double t, int gpu_instance) {
  double sum = 0;
  for (const ProcessSpec& p : processes) {
    if (t < p.start || t >= p.end) continue;
    if (gpu_instance >= 0 && p.gpu_instance != gpu_instance) continue;
    sum += p.used_memory_gib * kGiB;
  }
  return sum;
}

GpuState InitialState(const PhysicsInput& in, std::vector<size_t>* onsets) {
  GpuState s;
  s.step = 0;
  Effects e = ActiveEffects(in, 0);
  Operate(in, e, WorkloadAt(in, 0, 0), s);
  // A board starts from its normal steady state; a cooling failure present
  // from t = 0 then heats it visibly instead of starting it hot.
  Effects normal = e;
  normal.cooling = 1;
  s.temp_c = TargetTemp(in.spec, normal, s.power_w);
  s.mem_temp_c = MemoryTemp(in.spec, s);
  s.power_hist.fill(s.power_w);
  s.util_hist.fill(s.act.util), s.dram_hist.fill(s.act.dram);
  // The driver has been up a while: an idle board's link is already parked.
  s.idle_s = s.act.util >= 0.01 ? 0 : in.spec.driver_uptime_s + kPcieParkAfterS;
  ApplyDriverHistory(in, s);
  Integrate(in, e, 0, s, 0);  // levels only: dt = 0 adds nothing
  CollectOnsets(in, s, onsets);
  return s;
}

void Step(const PhysicsInput& in, GpuState& s, std::vector<size_t>* onsets) {
  double t = s.step * kStepSeconds;
  Effects e = ActiveEffects(in, t);
  const Preset& p = *in.spec.preset;
  s.thermal_ratio =
      SlowdownRatio(s.thermal_ratio, s.temp_c >= p.temp_slowdown, s.temp_c < p.temp_slowdown - 1.0);
  if (p.temp_mem_max > 0) {
    s.hbm_ratio = SlowdownRatio(s.hbm_ratio, s.mem_temp_c >= p.temp_mem_max,
                                s.mem_temp_c < p.temp_mem_max - 1.0);
  }
  Operate(in, e, WorkloadAt(in, t, s.step), s);
  Integrate(in, e, t, s, kStepSeconds);
  ++s.step;
  CollectOnsets(in, s, onsets);
}

void ApplyOnset(const PhysicsInput& in, const FaultSpec& f, GpuState& s) {
  bool remaps = in.spec.preset->remaps_rows;
  switch (f.kind) {
    case FaultKind::kXid:
      s.last_xid = f.xid;
      break;
    case FaultKind::kEccSbe:
      s.ecc_sbe_vol += f.count, s.ecc_sbe_agg += f.count;
      if (!remaps && f.count >= 2) s.retired_sbe += 1, s.retired_pending = true;
      break;
    case FaultKind::kEccDbe:
      s.ecc_dbe_vol += f.count, s.ecc_dbe_agg += f.count;
      s.last_xid = 48;
      if (remaps) {
        s.remap_unc += f.count, s.remap_pending = true;
      } else {
        s.retired_dbe += f.count, s.retired_pending = true;
      }
      break;
    case FaultKind::kRowRemapFailure:
      s.remap_failure = true, s.last_xid = 64;
      break;
    case FaultKind::kRecoveryAction:
      s.last_xid = 154;
      break;
    default:
      break;
  }
}

}  // namespace gpuscope::sim
