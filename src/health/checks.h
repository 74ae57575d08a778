// Health verdicts: judges one sampler snapshot plus the event thread's state
// into a verdict per GPU and check (memory, pcie, nvlink, thermal, power, xid,
// driver, fabric), each with evidence (the measured numbers and the thresholds they
// were held against) and the recommended action. Thresholds follow DCGM's
// health module and reference/xid.md.
//
// Evaluate is a pure function of its inputs except for HealthState, which
// keeps the previous counter values needed for rates (PCIe replays per
// minute, NVLink CRC errors per second, recent NVLink replay/recovery
// increases). A metric that is absent from the snapshot is never read as 0: a
// check without any data is marked not evaluated (and not exported).
//
// Thread safety: Evaluate is reentrant; one HealthState must not be used by
// two threads at once.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"
#include "health/events.h"
#include "health/rates.h"

namespace gpuscope::health {

// The exported value is the enum value.
enum class Verdict : uint8_t { kOk = 0, kWarn = 1, kFail = 2 };

// kFabric: the NVLink fabric registration and health of GB200-class GPUs; not
// evaluated (not exported) where NVML reports no fabric.
// kLicense: a vGPU guest's licence (evaluated only in a guest).
enum class Check : uint8_t {
  kMemory,
  kPcie,
  kNvlink,
  kThermal,
  kPower,
  kXid,
  kDriver,
  kFabric,
  kLicense
};
inline constexpr std::array<Check, 9> kAllChecks = {
    Check::kMemory, Check::kPcie,   Check::kNvlink, Check::kThermal, Check::kPower,
    Check::kXid,    Check::kDriver, Check::kFabric, Check::kLicense};

std::string_view CheckName(Check c);      // "memory", ... (the `check` label)
std::string_view VerdictName(Verdict v);  // "ok", "warn", "fail"

struct CheckResult {
  Check check = Check::kMemory;
  bool evaluated = false;  // false: no data for it (unsupported, GPU lost)
  Verdict verdict = Verdict::kOk;
  std::vector<std::string> evidence;  // "PCIe replays 42.0/min > limit 8/min (Gen3 x16)"
  std::string action;                 // empty when ok

  // Raises the verdict to at least v, appending the evidence line; the
  // action of the worst finding wins (the first one at that level).
  void Raise(Verdict v, std::string line, std::string_view what_to_do);
  void Note(std::string line) { evidence.push_back(std::move(line)); }
};

struct GpuHealth {
  // Identity (dcgm-exporter's labels).
  std::size_t slot = 0;  // position in Snapshot::gpus (the exporter's label base)
  unsigned gpu = 0;      // NVML index
  std::string uuid, pci_bus_id, model, device;  // device: "nvidia<minor>"
  Verdict verdict = Verdict::kOk;               // worst evaluated check
  bool lost = false;                            // gpuscope_gpu_lost
  bool stale = false;                           // gpuscope_collector_stale
  std::array<CheckResult, kAllChecks.size()> checks;
  // XID figures for the exporter; empty when the event thread is not running.
  std::map<unsigned, uint64_t> xid_totals;  // since start
  std::map<unsigned, uint64_t> xid_window;  // within the window
  std::optional<unsigned> last_xid;
  // When the GPU came up as gpuscope saw it (0: not judged): its first read,
  // or its first after it was lost (a driver load or a GPU reset).
  double up_since = 0;
  // Its NVLink links that are not up: (link, down) where down is true when
  // training does not explain it (gpuscope_nvlink_link_failure).
  std::vector<std::pair<unsigned, bool>> nvlinks_not_up;
  std::vector<Holder> holders;            // whose work the GPU serves (Snapshot::attribution)
  std::vector<ProcessHolding> processes;  // its processes and whose each is

  const CheckResult& Get(Check c) const { return checks[static_cast<std::size_t>(c)]; }
  CheckResult& Get(Check c) { return checks[static_cast<std::size_t>(c)]; }
};

struct HealthReport {
  double timestamp = 0;  // the `now` it was evaluated at
  std::string hostname;
  double xid_window_seconds = kDefaultXidWindowSeconds;
  bool nvml_up = true;
  std::string nvml_error;
  bool events_running = false;
  std::vector<GpuHealth> gpus;     // whole GPUs in index order (MIG instances folded in)
  Verdict verdict = Verdict::kOk;  // worst over GPUs; kFail when NVML is down
};

// Thresholds; the defaults are DCGM's (reference/xid.md) unless noted.
struct HealthOptions {
  // XIDs this recent count (the verdict and DCGM_EXP_XID_ERRORS_COUNT); the
  // event monitor's window must be at least as long.
  double xid_window_seconds = kDefaultXidWindowSeconds;
  double stale_after_seconds = 60;    // a GPU not read for this long is stale (gpuscope)
  double rate_window_seconds = 60;    // span of counter rates
  double rate_min_span_seconds = 5;   // shorter spans give no rate yet
  double recent_error_seconds = 600;  // NVLink replay/recovery increases this recent fail
  double nvlink_crc_warn_per_second = 100;
  // After a driver load or GPU reset, NVLink links train up within about a
  // minute: a link not up yet is judged down only after this (gpuscope).
  double nvlink_training_seconds = 180;
  double thermal_margin_celsius = 5;   // warn this close to the slowdown threshold (gpuscope)
  double shutdown_margin_celsius = 2;  // fail this close to the shutdown threshold (gpuscope)
  double retired_pages_fail = 63;
  double retired_dbe_fail = 15;
  double remapped_uncorrectable_warn = 512;
};

// Previous counter observations, per GPU index.
class HealthState {
 public:
  struct LinkCounter {
    std::optional<double> last;          // last value seen
    double last_increase_time = -1e300;  // when it last grew
    uint64_t last_increase = 0;          // by how much
  };
  struct NvLink {
    CounterRate crc;  // CRC errors (flit + data)
    LinkCounter replay, recovery;
    bool seen_active = false;  // seen up since the GPU came up: down later warns
  };
  struct Gpu {
    // When the GPU came up (first read, or back after lost); reset while lost.
    std::optional<double> up_since;
    CounterRate pcie_replays;
    std::map<unsigned, NvLink> nvlinks;  // by link (one lookup per link and cycle)
  };
  Gpu& For(unsigned gpu) { return gpus_[gpu]; }

 private:
  std::map<unsigned, Gpu> gpus_;
};

// NVML index -> the slot in snapshot.gpus that speaks for that physical GPU:
// its whole-GPU entry, else its first MIG instance (health and events are per
// GPU, never per MIG instance).
std::map<unsigned, std::size_t> WholeGpuSlots(const Snapshot& snapshot);

// Judges `snapshot` and `events` at time `now` (unix seconds).
HealthReport Evaluate(const Snapshot& snapshot, const EventState& events, HealthState& state,
                      double now, const HealthOptions& options = {});

}  // namespace gpuscope::health
