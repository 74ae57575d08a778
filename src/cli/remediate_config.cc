#include "cli/remediate_config.h"

namespace gpuscope::cli {

Result<remediate::RemediationOptions> BuildRemediation(const Settings& s) {
  remediate::RemediationOptions r;
  Result<remediate::Mode> mode = remediate::ParseMode(s.Get("remediate"));
  if (!mode.ok()) return mode.status().Context("remediate");
  r.mode = *mode;
  Result<remediate::FindingSet> findings = remediate::ParseFindings(s.Get("remediate-findings"));
  if (!findings.ok()) return findings.status().Context("remediate-findings");
  r.remediator.findings = *findings;
  remediate::PolicyOptions& p = r.remediator.policy;
  p.dry_run = s.Flag("remediate-dry-run");
  // Ranges are checked once, against the settings table (settings.cc).
  Result<double> resume = s.Seconds("remediate-resume-after");
  if (!resume.ok()) return resume.status();
  p.resume_after_s = *resume;
  Result<double> fraction = s.Number("remediate-breaker-fraction");
  if (!fraction.ok()) return fraction.status();
  p.breaker_fraction = *fraction;
  Result<long> min_nodes = s.Integer("remediate-breaker-min-nodes");
  if (!min_nodes.ok()) return min_nodes.status();
  p.breaker_min_nodes = static_cast<int>(*min_nodes);
  r.slurm.node = s.Get("slurm-node");
  r.kubernetes.node = s.Get("kubernetes-node");
  r.kubernetes.taint = s.Flag("remediate-taint");
  r.kubernetes.serviceaccount_dir = s.Get("kubernetes-serviceaccount-dir");
  return r;
}

}  // namespace gpuscope::cli
