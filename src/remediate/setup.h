// What `gpuscope serve --remediate ...` runs with, and the Remediator built
// from it with the chosen actuator. The CLI fills RemediationOptions from the
// settings (cli/remediate_config.h); the serve assembly calls MakeRemediator.
//
// Thread safety: plain values; MakeRemediator is reentrant.
#pragma once

#include <memory>
#include <string>

#include "gpuscope/status.h"
#include "remediate/kubernetes.h"
#include "remediate/remediator.h"
#include "remediate/slurm.h"

namespace gpuscope::remediate {

enum class Mode : uint8_t { kOff, kSlurm, kKubernetes };

struct RemediationOptions {
  Mode mode = Mode::kOff;
  RemediatorOptions remediator;
  SlurmOptions slurm;
  KubernetesOptions kubernetes;
};

// "" or "off", "slurm", "kubernetes"; anything else is an error naming them.
Result<Mode> ParseMode(std::string_view text);

// The Remediator for `options` (not started); null when the mode is off.
Result<std::unique_ptr<Remediator>> MakeRemediator(const RemediationOptions& options,
                                                   Remediator::Clock clock);

}  // namespace gpuscope::remediate
