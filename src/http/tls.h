// TLS material for the HTTP server: certificate, key and client CAs read from the files a
// web-config names, checked with GnuTLS before a daemon uses them (a half-written certificate
// during rotation never replaces a working one), plus the client-certificate policy.
// Thread safety: TlsMaterial is an immutable value once loaded; CheckClientCertificate is
// reentrant.
#pragma once

#include <gnutls/gnutls.h>

#include <ctime>
#include <string>
#include <vector>

#include "gpuscope/status.h"
#include "http/web_config.h"

namespace gpuscope::http {

struct FileStamp {
  std::string path;
  timespec mtime{};
  off_t size = 0;
  bool operator==(const FileStamp& other) const;
};

struct TlsMaterial {
  std::string cert_pem;
  std::string key_pem;
  std::string ca_pem;      // "" without client_ca_file
  std::string priorities;  // GnuTLS priority string for the allowed versions
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  TlsVersion min_version = TlsVersion::kTls12;
  std::vector<FileStamp> stamps;  // the files read, to notice replacements
};

// Reads and checks the files of `config` (certificate parses, key matches it, CA has certs).
Result<TlsMaterial> LoadTlsMaterial(const TlsConfig& config);

// Stamps of the given files now (missing files get a zero stamp).
std::vector<FileStamp> StampFiles(const std::vector<std::string>& paths);

// GnuTLS priority string for a tls_server_config: exactly the versions min..max; the listed
// cipher suites (GnuTLS combines their key exchanges, ciphers and MACs, in order; TLS 1.3 uses
// the listed AEAD ciphers, or its own three when none is listed) or, by default, GnuTLS's NORMAL
// set without static-RSA key exchange and CBC-SHA1 suites; the listed curves or GnuTLS's groups.
std::string TlsPriorities(const TlsConfig& config);

// Installs a handshake hook on a server session that answers a ClientHello offering only versions
// below `min` with a protocol_version alert (GnuTLS leaves sending alerts to the application, and
// libmicrohttpd closes without one). Call before the handshake starts.
void AlertOldClientHellos(gnutls_session_t session, TlsVersion min);

// What the server asks of clients in the handshake for a policy.
gnutls_certificate_request_t CertificateRequestFor(ClientAuth auth);

// Checks the peer certificate of an established session against the policy; the trust list
// is the session's credentials (the client CAs). Returns "" when allowed, else the reason.
std::string CheckClientCertificate(gnutls_session_t session, ClientAuth auth);

}  // namespace gpuscope::http
