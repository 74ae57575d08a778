#include <gtest/gtest.h>

#include "jobs/attribution_switches.h"
#include "jobs/usage_json.h"

namespace gpuscope::jobs {
namespace {

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(AttributionSwitches, TravelInTheJobsAnswer) {
  AttributionSwitches on;
  on.hpc_job_mapping_dir = true;
  const nlohmann::json body = nlohmann::json::parse(JobsBody({}, SwitchesToJson(on)));
  std::optional<AttributionSwitches> back = SwitchesFromJson(body);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->hpc_job_mapping_dir && back->process_cgroups);
  EXPECT_FALSE(back->kubelet || back->container_runtime || back->process_names);
  // An older agent's answer has none: unknown, not "all off".
  EXPECT_FALSE(SwitchesFromJson(nlohmann::json::parse(JobsBody({}))).has_value());
  EXPECT_FALSE(SwitchesFromJson(nlohmann::json::parse(R"({"attribution": {"kubelet": 1}})")));
}

// A default agent: only the cgroups are read; the message names every switch
// that could name a holder of the kind asked, and only those.
TEST(WhyNoHolders, DefaultAgentNamesTheSwitchesToTurnOn) {
  const std::string any = WhyNoHolders(AttributionSwitches{}, "");
  EXPECT_TRUE(Has(any, "no attribution source that names a pod, Slurm job or workload is on"))
      << any;
  for (const char* flag : {"-k", "--hpc-job-mapping-dir", "--process-names",
                           "--container-runtime-socket", "cgroups"}) {
    EXPECT_TRUE(Has(any, flag)) << flag << ": " << any;
  }
  const std::string jobs = WhyNoHolders(AttributionSwitches{}, "job");
  EXPECT_TRUE(Has(jobs, "start the agent with --hpc-job-mapping-dir")) << jobs;
  EXPECT_FALSE(Has(jobs, "-k ") || Has(jobs, "--process-names")) << jobs;
  const std::string pods = WhyNoHolders(AttributionSwitches{}, "pod");
  EXPECT_TRUE(Has(pods, "-k (Kubernetes pods) or --container-runtime-socket")) << pods;
  EXPECT_FALSE(Has(pods, "cgroups")) << pods;
}

// A source is on but named nobody: nothing to turn on, say what that means.
TEST(WhyNoHolders, SourceOnButNothingNamed) {
  AttributionSwitches on;
  on.kubelet = true;
  const std::string pods = WhyNoHolders(on, "pod");
  EXPECT_TRUE(Has(pods, "(-k (Kubernetes pods)) named none")) << pods;
  EXPECT_FALSE(Has(pods, "start the agent")) << pods;
  const std::string older = WhyNoHolders(std::nullopt, "job");
  EXPECT_TRUE(Has(older, "does not say which attribution sources")) << older;
  EXPECT_TRUE(Has(older, "--hpc-job-mapping-dir")) << older;
}

}  // namespace
}  // namespace gpuscope::jobs
