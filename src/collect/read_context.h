// Internal to src/collect: what one read of one device needs and produces.
//
// Reading: the values one device read produced, with which cadence tiers it
// covered. Capabilities: the calls a device refused with NOT_SUPPORTED (learnt
// on the first read, the probe; a refused call is never made again).
// ReadContext::Try is the one place every device call of the collect layer
// passes through: it counts calls, records refusals and notices a lost GPU
// (after which the remaining calls of the read are skipped).
//
// Thread safety: a ReadContext, its Reading and Capabilities belong to the
// one worker thread reading that device.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscope/catalog.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "nvml/device.h"
#include "nvml/library.h"

namespace gpuscope::collect {

// Which cadence tiers a read covers.
struct Tiers {
  bool fast = true;
  bool slow = false;
  bool pcie = false;

  static Tiers All() { return {true, true, true}; }
  bool Has(Tier tier) const {
    switch (tier) {
      case Tier::kFast:
        return fast;
      case Tier::kSlow:
        return slow;
      case Tier::kPcie:
        return pcie;
      default:
        return false;
    }
  }
};

// The outcome of one read of one device.
struct Reading {
  double t = 0;  // when the sampler asked for it (its clock)
  Tiers tiers;
  GpuSample sample;  // values, present bits; nvlink and processes when read
  bool nvlink_read = false;
  bool processes_read = false;
  bool lost = false;          // GPU_IS_LOST: the read stopped there
  std::string error;          // the first failure other than NOT_SUPPORTED
  unsigned ok_calls = 0;      // calls that answered
  unsigned failed_calls = 0;  // calls that failed for a reason other than NOT_SUPPORTED
  // (call, NVML return code name) of each such failure, GPU_IS_LOST excluded.
  std::vector<std::pair<std::string, std::string>> call_errors;
  uint64_t calls = 0;                // device calls made (a batched read counts one)
  bool energy_counter = true;        // false: the device has no energy counter at all
  bool reattached = false;           // the handle was re-acquired for this read
  std::optional<GpuInfo> described;  // identity read at re-attach, for a GPU first seen lost

  // Every call failed: the device answered nothing useful.
  bool failed() const { return !lost && ok_calls == 0 && failed_calls > 0; }
};

// Calls the device refused; keys are string literals naming the call.
class Capabilities {
 public:
  bool Allows(std::string_view call) const { return !refused_.contains(call); }
  void Refuse(std::string_view call) { refused_.insert(call); }
  bool FieldAllowed(unsigned field_id) const { return !refused_fields_.contains(field_id); }
  void RefuseField(unsigned field_id) { refused_fields_.insert(field_id); }

 private:
  std::set<std::string_view, std::less<>> refused_;
  std::set<unsigned> refused_fields_;
};

class ReadContext {
 public:
  ReadContext(const nvml::Library& library, const nvml::Device& device, Capabilities& caps,
              Reading& reading)
      : library_(library), device_(device), caps_(caps), reading_(reading) {}

  const nvml::Library& library() const { return library_; }
  const nvml::Device& device() const { return device_; }
  Capabilities& caps() { return caps_; }
  Reading& reading() { return reading_; }
  bool lost() const { return reading_.lost; }

  // The metric's tier is read now.
  bool Due(Metric m) const { return reading_.tiers.Has(Def(m).tier); }
  bool Allows(std::string_view call) const { return !lost() && caps_.Allows(call); }
  void Set(Metric m, double value) { reading_.sample.Set(m, value); }
  bool Has(Metric m) const { return reading_.sample.Has(m); }

  // Makes one device call (`fn` returns Result<T>) unless refused or the GPU
  // is lost; nullopt when it did not answer.
  template <typename T, typename Fn>
  std::optional<T> Try(std::string_view call, Fn&& fn) {
    if (!Allows(call)) return std::nullopt;
    ++reading_.calls;
    Result<T> result = fn();
    if (result.ok()) {
      ++reading_.ok_calls;
      return std::move(result).value();
    }
    Note(call, result.status());
    return std::nullopt;
  }

  // Records a failed call: NOT_SUPPORTED refuses `call` from now on (`call`
  // must then be a string literal), GPU_IS_LOST marks the read lost, others
  // count, by call and NVML return code, into reading().call_errors.
  void Note(std::string_view call, const Status& status);
  // Counts a call made outside Try (e.g. one batched read).
  void CountCall() { ++reading_.calls; }

 private:
  const nvml::Library& library_;
  const nvml::Device& device_;
  Capabilities& caps_;
  Reading& reading_;
};

}  // namespace gpuscope::collect
