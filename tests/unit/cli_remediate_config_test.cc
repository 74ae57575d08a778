// The --remediate* settings of `gpuscope serve` (cli/remediate_config.h):
// defaults, flags, environment, and clear errors for bad values.
#include <gtest/gtest.h>

#include <map>

#include "cli/remediate_config.h"

namespace gpuscope::cli {
namespace {

Result<remediate::RemediationOptions> Build(std::vector<std::string> args,
                                            std::map<std::string, std::string> env = {},
                                            std::string yaml = "") {
  auto lookup = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  Result<Settings> settings = ResolveSettings(kServeSettings, args, lookup, yaml, "test.yaml");
  if (!settings.ok()) return settings.status();
  return BuildRemediation(*settings);
}

TEST(RemediateConfig, OffByDefaultWithSafeDefaults) {
  auto r = Build({});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->mode, remediate::Mode::kOff);
  const remediate::PolicyOptions& p = r->remediator.policy;
  EXPECT_FALSE(p.dry_run);
  EXPECT_EQ(p.resume_after_s, 600);
  EXPECT_EQ(p.breaker_fraction, 0.1);
  EXPECT_EQ(p.breaker_min_nodes, 1);
  EXPECT_EQ(r->remediator.findings, remediate::DefaultFindings());
  EXPECT_EQ(r->slurm.node, "");
  EXPECT_FALSE(r->kubernetes.taint);
  EXPECT_EQ(r->kubernetes.serviceaccount_dir, "/var/run/secrets/kubernetes.io/serviceaccount");
}

TEST(RemediateConfig, FlagsEnvironmentAndFile) {
  auto r =
      Build({"--remediate", "slurm", "--remediate-dry-run", "--slurm-node", "gpu07",
             "--remediate-resume-after", "30s", "--remediate-findings", "xid_79,nvlink_down"},
            {{"GPUSCOPE_REMEDIATE_BREAKER_FRACTION", "0.25"}}, "remediate-breaker-min-nodes: 3\n");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->mode, remediate::Mode::kSlurm);
  EXPECT_TRUE(r->remediator.policy.dry_run);
  EXPECT_EQ(r->slurm.node, "gpu07");
  EXPECT_EQ(r->remediator.policy.resume_after_s, 30);
  EXPECT_EQ(r->remediator.policy.breaker_fraction, 0.25);
  EXPECT_EQ(r->remediator.policy.breaker_min_nodes, 3);
  EXPECT_EQ(r->remediator.findings,
            (remediate::FindingSet{remediate::Finding::kXid79, remediate::Finding::kNvlinkDown}));
  auto k = Build({"--remediate", "kubernetes", "--remediate-taint", "--kubernetes-node", "n1"});
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(k->mode, remediate::Mode::kKubernetes);
  EXPECT_TRUE(k->kubernetes.taint);
  EXPECT_EQ(k->kubernetes.node, "n1");
}

TEST(RemediateConfig, BadValuesAreClearErrors) {
  auto mode = Build({"--remediate", "pbs"});
  ASSERT_FALSE(mode.ok());
  EXPECT_EQ(mode.status().message(),
            "remediate: 'pbs' is not one of slurm, kubernetes (or empty: off)");
  auto finding = Build({"--remediate", "slurm", "--remediate-findings", "xid_79,thermal"});
  ASSERT_FALSE(finding.ok());
  EXPECT_NE(finding.status().message().find("remediate-findings: unknown finding 'thermal'"),
            std::string::npos)
      << finding.status().message();
  EXPECT_FALSE(Build({"--remediate-breaker-fraction", "1.5"}).ok());
  EXPECT_FALSE(Build({"--remediate-breaker-min-nodes", "0"}).ok());
  EXPECT_FALSE(Build({"--remediate-resume-after", "0s"}).ok());
}

}  // namespace
}  // namespace gpuscope::cli
