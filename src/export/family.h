// A metric family other modules hand to the Renderer (health verdicts, XID
// windows, bottleneck findings, self-metrics), so every family shares one
// writer: the same escaping, number formatting and per-GPU label prefixes.
//
// Header-only plain structs: any area may build Families without linking
// gpuscope_export. Thread safety: plain values.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::prom {

enum class FamilyType : uint8_t {
  kGauge,
  // A counter. In OpenMetrics a counter named `*_total` is declared without
  // the suffix; any other counter name (dcgm's) is declared `unknown`.
  kCounter,
  kUnknown,
  // Identity labels with the value 1, named `*_info`: a gauge in the text
  // format, OpenMetrics' info type (declared without `_info`).
  kInfo,
  // A histogram: `*_bucket{le=...}`, `*_sum` and `*_count` samples, written by the caller as
  // preformatted lines (Family::lines).
  kHistogram,
};

// Which labels a sample tied to a GPU starts with.
enum class LabelBase : uint8_t {
  kNone,    // only the sample's own labels; rendered in every metrics set
  kNative,  // gpu, uuid (+ gpu_instance, mig_profile); skipped when only dcgm is on
  kDcgm,    // gpu, UUID, pci_bus_id, device, modelName, ...; skipped when only native is on
};

using Labels = std::vector<std::pair<std::string, std::string>>;  // ordered name, value

struct Sample {
  int gpu = -1;   // slot in Snapshot::gpus whose base labels come first; -1: none
  Labels labels;  // after the base labels; names must be valid, values are escaped
  double value = 0;
};

// How much of a family the lean profile (export/profile.h) renders.
enum class Detail : uint8_t {
  kAlways,
  kSparse,    // a sample whose value has only ever been 0 is not rendered
  kFullOnly,  // only in the full profile
};

struct Family {
  std::string name;  // full sample name (counters: with `_total` when native)
  std::string help;
  FamilyType type = FamilyType::kGauge;
  LabelBase base = LabelBase::kNative;
  std::vector<Sample> samples;  // rendered sorted by GPU, then labels
  Detail detail = Detail::kAlways;
  // Sample lines already written (the same in both formats, written with export/writer.h);
  // when set, `samples` is ignored and only the header is added. For families whose samples
  // the Sample shape cannot carry (histograms) and for large families built off the sampler
  // thread (application KPIs).
  std::shared_ptr<const std::string> lines;
};

}  // namespace gpuscope::prom
