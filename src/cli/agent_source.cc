#include "cli/agent_source.h"

#include <utility>

#include "cli/exit_codes.h"

namespace gpuscope::cli {

AgentOption::AgentOption() {
  client.server = "gpuscope agent";
  client.url_option = "--agent";
}

bool AgentOption::Take(const Option& option) {
  if (option.flag == "--agent") {
    client.url = option.value;
    return true;
  }
  return TakeClientOption(option, client);
}

Status AgentOption::Check() const {
  const bool tls = !client.ca_file.empty() || !client.cert_file.empty() ||
                   !client.key_file.empty() || !client.username.empty() ||
                   !client.password_file.empty();
  if (!remote() && tls)
    return Status::InvalidArgument("TLS and basic-auth options go with --agent");
  return Status::Ok();
}

std::string AgentOptionHelp(const std::string& what) {
  return "  --agent URL        " + what +
         " of a running `gpuscope serve` (http(s)://host:9400),\n"
         "                     the same output as here (see docs/cli.md, remote parity)\n"
         "  --ca-file, --cert-file, --key-file, --basic-auth-user,\n"
         "  --basic-auth-password-file  TLS and basic auth towards the agent\n";
}

Result<std::unique_ptr<AgentNode>> AgentNode::Create(const baseline::ClientOptions& options) {
  Result<baseline::PromClient> client = baseline::PromClient::Create(options);
  if (!client.ok()) return client.status();
  return std::unique_ptr<AgentNode>(new AgentNode(std::move(*client), options.url));
}

Result<SnapshotPtr> AgentNode::Sample() {
  Result<std::string> body = client_.Get("/api/v1/snapshot");
  if (!body.ok()) {
    if (body.status().code() == Status::Code::kNotFound) {
      // An agent older than /api/v1/snapshot: it answered, but cannot serve this.
      return Status::Unavailable("gpuscope agent at " + url_ +
                                 " has no /api/v1/snapshot (an older gpuscope serve): "
                                 "upgrade it to read it with --agent");
    }
    return body.status();
  }
  Result<serve::RemoteSnapshot> parsed = serve::ParseSnapshotJson(*body);
  if (!parsed.ok()) return parsed.status().Context("gpuscope agent at " + url_);
  last_ = std::move(*parsed);
  if (!last_.snapshot->nvml_up) {
    // As locally, where NVML not opening is the driver's failure (exit 9).
    return NvmlUnavailable("gpuscope agent at " + url_ +
                           " cannot read its GPUs: " + last_.snapshot->nvml_error);
  }
  return last_.snapshot;
}

Result<std::unique_ptr<Node>> OpenNode(const CommonOptions& common, const AgentOption& agent) {
  GPUSCOPE_RETURN_IF_ERROR(agent.Check());
  if (!agent.remote()) return Node::Open(common);
  if (!common.simulate.empty() || !common.nvml_lib.empty() || common.at_seconds) {
    return Status::InvalidArgument(
        "--simulate, --nvml-lib and --at do not go with --agent: the agent reads its own GPUs");
  }
  Result<std::unique_ptr<AgentNode>> node = AgentNode::Create(agent.client);
  if (!node.ok()) return node.status();
  return std::unique_ptr<Node>(std::move(*node));
}

SnapshotPtr KeepSlots(const Snapshot& snapshot, const std::vector<std::size_t>& slots) {
  auto kept = std::make_shared<Snapshot>(snapshot);
  kept->gpus.clear();
  kept->samples.clear();
  for (std::size_t slot : slots) {
    kept->gpus.push_back(snapshot.gpus[slot]);
    kept->samples.push_back(snapshot.samples[slot]);
  }
  return kept;
}

}  // namespace gpuscope::cli
