// The in-cluster Kubernetes API client that the remediation's actuator
// (remediate/kubernetes.h) and the DRA ResourceSlice reader
// (attribution/resource_slices.h) share: the API server is
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the service
// account's token and CA are read from its folder at each request (the
// kubelet rotates the token), TLS is verified against that CA, and requests
// go through the project's libcurl module (http_fetch.h, loaded on first use;
// its answer limit bounds memory). It lives here, beside that module.
//
// Thread safety: a KubeApi is a value; Send may be called from any thread.
#pragma once

#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::baseline {

struct KubeApiOptions {
  // Empty: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
  std::string api_server;
  std::string serviceaccount_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  double timeout_s = 10;
};

class KubeApi {
 public:
  explicit KubeApi(KubeApiOptions options);

  struct Answer {
    long status = 0;
    std::string body;
  };
  // Any HTTP status is an answer; errors are transport, TLS or setup failures
  // (no API server known, no token).
  Result<Answer> Send(const std::string& method, const std::string& path,
                      const std::string& content_type, const std::string& body) const;
  // A 2xx answer's body, else an error with the status and the server's message.
  Result<std::string> Call(const std::string& method, const std::string& path,
                           const std::string& content_type, const std::string& body) const;

  // A file of the service-account folder ("token", "namespace"), read now,
  // trailing whitespace cut.
  Result<std::string> ReadAccountFile(const std::string& name) const;

  const KubeApiOptions& options() const { return options_; }

 private:
  KubeApiOptions options_;
};

// A query parameter's value, percent-encoded (continue tokens are base64).
std::string KubeQueryValue(std::string_view text);
// The message of an API server's Status answer ("" when there is none).
std::string KubeStatusMessage(const std::string& body);
// "METHOD PATH: HTTP 403: <the server's message>".
Status KubeHttpError(const std::string& method, const std::string& path, long status,
                     const std::string& body);

}  // namespace gpuscope::baseline
