// The Slurm actuator: reads the cluster with `sinfo` and acts with
// `scontrol update`, both run without a shell and with a timeout
// (command.h). The node is --slurm-node (default the short host name).
//
//   read:   sinfo --noheader --Node --format=%N|%T|%f|%E   (every node: the
//           breaker counts the nodes whose reason starts with "gpuscope:")
//   drain:  scontrol update nodename=NODE state=drain reason=REASON
//   resume: scontrol update nodename=NODE state=resume
//
// The node opts out with the Slurm feature kOptOutFeature (Features= in
// slurm.conf). Parsing is a pure function of sinfo's text.
//
// Thread safety: one thread per SlurmActuator.
#pragma once

#include <string>
#include <string_view>

#include "remediate/actuator.h"

namespace gpuscope::remediate {

inline constexpr std::string_view kOptOutFeature = "gpuscope-no-remediate";

struct SlurmOptions {
  std::string node;             // empty: the short host name
  std::string sinfo = "sinfo";  // programs (PATH lookup)
  std::string scontrol = "scontrol";
  double timeout_s = 10;  // per command
};

// The view of `node` from the text of the sinfo command above (pure). A
// node listed once per partition counts once.
NodeView ParseSinfo(std::string_view text, std::string_view node);

class SlurmActuator : public Actuator {
 public:
  explicit SlurmActuator(SlurmOptions options);
  std::string_view Name() const override { return "slurm"; }
  NodeView Read() override;
  Result<DrainResult> Drain(const Decision& d) override;
  Status Resume() override;
  const std::string& Node() const override { return options_.node; }

 private:
  Status Update(const std::vector<std::string>& args);
  SlurmOptions options_;
};

// The short host name (up to the first dot), "" when unknown.
std::string ShortHostname();

}  // namespace gpuscope::remediate
