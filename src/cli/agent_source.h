// The read commands against a running agent: `gpuscope --agent URL` (the
// summary), `query --agent URL`, `-L --agent URL` and `top --agent URL` read
// its /api/v1/snapshot (serve/snapshot_json.h) instead of sampling NVML here,
// and print it through the renderers a local run uses, so the output is the
// same bytes. The TLS and basic-auth options are those of health, diagnose
// and report --agent (baseline::PromClient); an agent that does not answer,
// or refuses, exits 21 (Exit::kUnreachable), a malformed answer names what is
// wrong (exit 2), and a lost GPU exits 15 as it does here.
//
// Thread safety: one AgentNode per thread.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "cli/node.h"
#include "cli/options.h"
#include "serve/snapshot_json.h"

namespace gpuscope::cli {

// The --agent option and its TLS/auth options, as every read command takes them.
struct AgentOption {
  baseline::ClientOptions client;  // url empty: no --agent, read NVML here

  AgentOption();
  bool remote() const { return !client.url.empty(); }
  // Takes --agent and the TLS/auth options; false for any other option.
  bool Take(const Option& option);
  // The TLS/auth options without --agent are a usage error.
  Status Check() const;
};

// The value-taking flags Take handles, for ForEachOption.
inline const std::initializer_list<std::string_view> kAgentValueFlags = {
    "--agent",    "--ca-file",         "--cert-file",
    "--key-file", "--basic-auth-user", "--basic-auth-password-file"};

// The --help lines of the agent options (two leading spaces, 80 columns).
std::string AgentOptionHelp(const std::string& what);

// A Node whose samples are the agent's snapshots. simulated() and
// scenario() are the agent's, known after the first Sample().
class AgentNode : public Node {
 public:
  static Result<std::unique_ptr<AgentNode>> Create(const baseline::ClientOptions& options);

  Result<SnapshotPtr> Sample() override;
  bool simulated() const override { return last_.agent.simulated; }
  const std::string& scenario() const override { return last_.agent.scenario; }
  // The last answer's agent facts and top verdicts.
  const serve::RemoteSnapshot& last() const { return last_; }
  const std::string& url() const { return url_; }

 private:
  AgentNode(baseline::PromClient client, std::string url)
      : client_(std::move(client)), url_(std::move(url)) {}
  baseline::PromClient client_;
  std::string url_;
  serve::RemoteSnapshot last_;
};

// The local Node, or the agent's when `agent` names one.
Result<std::unique_ptr<Node>> OpenNode(const CommonOptions& common, const AgentOption& agent);

// A copy of `snapshot` with only the devices at `slots` (positions in
// Snapshot::gpus, as collect::SelectDevices gives them for -i).
SnapshotPtr KeepSlots(const Snapshot& snapshot, const std::vector<std::size_t>& slots);

}  // namespace gpuscope::cli
