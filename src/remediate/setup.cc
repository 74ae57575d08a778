#include "remediate/setup.h"

#include <fmt/format.h>

namespace gpuscope::remediate {

Result<Mode> ParseMode(std::string_view text) {
  if (text.empty() || text == "off") return Mode::kOff;
  if (text == "slurm") return Mode::kSlurm;
  if (text == "kubernetes") return Mode::kKubernetes;
  return Status::InvalidArgument(
      fmt::format("'{}' is not one of slurm, kubernetes (or empty: off)", text));
}

Result<std::unique_ptr<Remediator>> MakeRemediator(const RemediationOptions& options,
                                                   Remediator::Clock clock) {
  std::unique_ptr<Actuator> actuator;
  switch (options.mode) {
    case Mode::kOff:
      return std::unique_ptr<Remediator>();
    case Mode::kSlurm:
      actuator = std::make_unique<SlurmActuator>(options.slurm);
      if (actuator->Node().empty()) {
        return Status::InvalidArgument("remediate: no Slurm node name (set --slurm-node)");
      }
      break;
    case Mode::kKubernetes:
      actuator = std::make_unique<KubernetesActuator>(options.kubernetes);
      if (actuator->Node().empty()) {
        return Status::InvalidArgument(
            "remediate: no Kubernetes node name (set --kubernetes-node)");
      }
      break;
  }
  return std::make_unique<Remediator>(options.remediator, std::move(actuator), std::move(clock));
}

}  // namespace gpuscope::remediate
