// NVML's process names (--process-names, off by default for privacy): the
// last fallback of a process's or a device's workload (resolve.h).
#include "attribution/source.h"

namespace gpuscope::attribution {
namespace {

class ProcessNamesSource final : public Source {
 public:
  std::string_view name() const override { return "process-names"; }
  bool reports_up() const override { return false; }

  Result<Evidence> Read(const Inputs&) const override {
    Evidence out;
    out.process_names = true;  // the names come with the inputs
    return out;
  }
};

}  // namespace

std::unique_ptr<Source> MakeProcessNamesSource(const ServiceOptions& options) {
  if (!options.process_names) return nullptr;
  return std::make_unique<ProcessNamesSource>();
}

}  // namespace gpuscope::attribution
