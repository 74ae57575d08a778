#include "http/tls.h"

#include <gnutls/x509.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

#include "http/gnutls_on_demand.h"

namespace gpuscope::http {
namespace {

Result<std::string> ReadFile(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(std::string("cannot read ") + what + " " + path + ": " +
                            std::generic_category().message(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

gnutls_datum_t Datum(const std::string& text) {
  return {reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())),
          static_cast<unsigned>(text.size())};
}

using Credentials = std::unique_ptr<gnutls_certificate_credentials_st,
                                    decltype(&gnutls_certificate_free_credentials)>;

// Parses a PEM certificate list on its own first: GnuTLS 3.7 leaks memory when
// gnutls_certificate_set_x509_key_mem2 meets a malformed certificate.
Status CheckCertificates(const std::string& pem, const std::string& path) {
  gnutls_datum_t data = Datum(pem);
  gnutls_x509_crt_t* list = nullptr;
  unsigned count = 0;
  int rc = gnutls_x509_crt_list_import2(&list, &count, &data, GNUTLS_X509_FMT_PEM, 0);
  for (unsigned i = 0; i < count; ++i) gnutls_x509_crt_deinit(list[i]);
  gnutls_free(list);
  if (rc < 0) return Status::InvalidArgument("certificate " + path + ": " + gnutls_strerror(rc));
  if (count == 0) return Status::InvalidArgument("certificate " + path + ": no certificates");
  return Status::Ok();
}

Status CheckMaterial(const TlsConfig& config, const TlsMaterial& material) {
  GPUSCOPE_RETURN_IF_ERROR(CheckCertificates(material.cert_pem, config.cert_file));
  if (!material.ca_pem.empty()) {
    GPUSCOPE_RETURN_IF_ERROR(CheckCertificates(material.ca_pem, config.client_ca_file));
  }
  gnutls_certificate_credentials_t raw = nullptr;
  if (gnutls_certificate_allocate_credentials(&raw) < 0) {
    return Status::Internal("gnutls: cannot allocate credentials");
  }
  Credentials cred(raw, &gnutls_certificate_free_credentials);
  gnutls_datum_t cert = Datum(material.cert_pem);
  gnutls_datum_t key = Datum(material.key_pem);
  int rc = gnutls_certificate_set_x509_key_mem2(raw, &cert, &key, GNUTLS_X509_FMT_PEM, nullptr, 0);
  if (rc < 0) {
    return Status::InvalidArgument("TLS certificate " + config.cert_file + " with key " +
                                   config.key_file + ": " + gnutls_strerror(rc));
  }
  if (!material.ca_pem.empty()) {
    gnutls_datum_t ca = Datum(material.ca_pem);
    rc = gnutls_certificate_set_x509_trust_mem(raw, &ca, GNUTLS_X509_FMT_PEM);
    if (rc <= 0) {
      return Status::InvalidArgument("client_ca_file " + config.client_ca_file + ": " +
                                     (rc < 0 ? gnutls_strerror(rc) : "no certificates"));
    }
  }
  gnutls_priority_t priority = nullptr;
  const char* error_at = nullptr;
  rc = gnutls_priority_init(&priority, material.priorities.c_str(), &error_at);
  if (rc < 0)
    return Status::Internal("gnutls priorities " + material.priorities + ": " +
                            gnutls_strerror(rc));
  gnutls_priority_deinit(priority);
  return Status::Ok();
}

}  // namespace

bool FileStamp::operator==(const FileStamp& other) const {
  return path == other.path && mtime.tv_sec == other.mtime.tv_sec &&
         mtime.tv_nsec == other.mtime.tv_nsec && size == other.size;
}

std::vector<FileStamp> StampFiles(const std::vector<std::string>& paths) {
  std::vector<FileStamp> stamps;
  for (const std::string& path : paths) {
    FileStamp stamp{path};
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) {
      stamp.mtime = st.st_mtim;
      stamp.size = st.st_size;
    }
    stamps.push_back(stamp);
  }
  return stamps;
}

namespace {

// Appends "+token" for each distinct token, in order.
void AddEach(std::string& out, const std::vector<std::string_view>& tokens) {
  std::vector<std::string_view> seen;
  for (std::string_view token : tokens) {
    if (std::find(seen.begin(), seen.end(), token) != seen.end()) continue;
    seen.push_back(token);
    out += ":+";
    out += token;
  }
}

void AddCipherSuites(std::string& out, const TlsConfig& config) {
  if (config.cipher_suites.empty()) {
    // Static RSA has no forward secrecy; CBC with SHA-1 invites padding oracles. TLS 1.0 and
    // 1.1 have nothing else, so an explicit min_version below TLS12 keeps them.
    if (config.min_version >= TlsVersion::kTls12) out += ":-RSA:-SHA1";
    return;
  }
  std::vector<std::string_view> kx, ciphers, macs;
  for (const std::string& name : config.cipher_suites) {
    const CipherSuiteName* suite = FindCipherSuite(name);
    if (suite == nullptr || suite->kx.empty()) continue;  // TLS 1.3: not configurable
    kx.push_back(suite->kx);
    ciphers.push_back(suite->cipher);
    macs.push_back(suite->mac);
  }
  // TLS 1.3 uses the listed AEAD ciphers; a list of CBC suites alone would leave it none, so
  // then it gets its usual three (which TLS 1.2 may also pair with the listed key exchanges).
  bool aead = std::find(macs.begin(), macs.end(), "AEAD") != macs.end();
  if (config.max_version == TlsVersion::kTls13 && !aead) {
    for (std::string_view cipher : {"AES-256-GCM", "CHACHA20-POLY1305", "AES-128-GCM"}) {
      ciphers.push_back(cipher);
    }
    macs.push_back("AEAD");
  }
  out += ":-KX-ALL:-CIPHER-ALL:-MAC-ALL";
  AddEach(out, kx);
  AddEach(out, ciphers);
  AddEach(out, macs);
}

}  // namespace

std::string TlsPriorities(const TlsConfig& config) {
  static constexpr const char* kNames[] = {"VERS-TLS1.0", "VERS-TLS1.1", "VERS-TLS1.2",
                                           "VERS-TLS1.3"};
  std::string out = "NORMAL:-VERS-ALL";
  for (int v = static_cast<int>(config.min_version); v <= static_cast<int>(config.max_version);
       ++v) {
    out += ":+";
    out += kNames[v];
  }
  AddCipherSuites(out, config);
  if (!config.curve_preferences.empty()) {
    out += ":-GROUP-ALL";
    std::vector<std::string_view> groups;
    for (const std::string& name : config.curve_preferences) groups.push_back(CurveGroup(name));
    AddEach(out, groups);
  }
  return out;
}

Result<TlsMaterial> LoadTlsMaterial(const TlsConfig& config) {
  if (Status loaded = LoadGnuTls("TLS (tls_server_config)"); !loaded.ok()) return loaded;
  TlsMaterial material;
  std::vector<std::string> paths = {config.cert_file, config.key_file};
  // Stamp first: a file replaced while being read is noticed and read again on the next check.
  if (!config.client_ca_file.empty()) paths.push_back(config.client_ca_file);
  material.stamps = StampFiles(paths);
  Result<std::string> cert = ReadFile(config.cert_file, "cert_file");
  if (!cert.ok()) return cert.status();
  Result<std::string> key = ReadFile(config.key_file, "key_file");
  if (!key.ok()) return key.status();
  material.cert_pem = std::move(*cert);
  material.key_pem = std::move(*key);
  if (!config.client_ca_file.empty()) {
    Result<std::string> ca = ReadFile(config.client_ca_file, "client_ca_file");
    if (!ca.ok()) return ca.status();
    material.ca_pem = std::move(*ca);
  }
  material.priorities = TlsPriorities(config);
  material.client_auth = config.client_auth;
  material.min_version = config.min_version;
  GPUSCOPE_RETURN_IF_ERROR(CheckMaterial(config, material));
  return material;
}

namespace {

// Runs before GnuTLS parses a ClientHello. Its legacy_version is the highest version the client
// supports, except that TLS 1.3 clients send 0x0303 and list versions in an extension; so a
// value below `kMinimum` (0x0303 at most) means only older versions are offered.
template <unsigned kMinimum>
int AlertOldHello(gnutls_session_t session, unsigned htype, unsigned, unsigned incoming,
                  const gnutls_datum_t* message) {
  if (incoming == 0 || htype != GNUTLS_HANDSHAKE_CLIENT_HELLO || message == nullptr ||
      message->size < 2) {
    return 0;
  }
  unsigned version = (static_cast<unsigned>(message->data[0]) << 8) | message->data[1];
  if (version >= kMinimum) return 0;
  gnutls_alert_send(session, GNUTLS_AL_FATAL, GNUTLS_A_PROTOCOL_VERSION);
  return GNUTLS_E_UNSUPPORTED_VERSION_PACKET;
}

}  // namespace

void AlertOldClientHellos(gnutls_session_t session, TlsVersion min) {
  gnutls_handshake_hook_func hook = nullptr;
  switch (min) {
    case TlsVersion::kTls10:
      hook = &AlertOldHello<0x0301>;
      break;
    case TlsVersion::kTls11:
      hook = &AlertOldHello<0x0302>;
      break;
    case TlsVersion::kTls12:
    case TlsVersion::kTls13:  // a TLS 1.2-only client is refused by GnuTLS, without an alert
      hook = &AlertOldHello<0x0303>;
      break;
  }
  gnutls_handshake_set_hook_function(session, GNUTLS_HANDSHAKE_CLIENT_HELLO, GNUTLS_HOOK_PRE, hook);
}

gnutls_certificate_request_t CertificateRequestFor(ClientAuth auth) {
  switch (auth) {
    case ClientAuth::kNoClientCert:
      return GNUTLS_CERT_IGNORE;
    case ClientAuth::kRequestClientCert:
    case ClientAuth::kVerifyClientCertIfGiven:
      return GNUTLS_CERT_REQUEST;
    case ClientAuth::kRequireAnyClientCert:
    case ClientAuth::kRequireAndVerifyClientCert:
      return GNUTLS_CERT_REQUIRE;
  }
  return GNUTLS_CERT_IGNORE;
}

std::string CheckClientCertificate(gnutls_session_t session, ClientAuth auth) {
  if (auth == ClientAuth::kNoClientCert || auth == ClientAuth::kRequestClientCert) return "";
  unsigned count = 0;
  const gnutls_datum_t* peers =
      session == nullptr ? nullptr : gnutls_certificate_get_peers(session, &count);
  bool given = peers != nullptr && count > 0;
  if (!given) {
    bool required = auth == ClientAuth::kRequireAnyClientCert ||
                    auth == ClientAuth::kRequireAndVerifyClientCert;
    return required ? "a client certificate is required" : "";
  }
  if (auth == ClientAuth::kRequireAnyClientCert) return "";
  // As Go's crypto/tls: the chain must allow client authentication (a certificate without an
  // extended key usage allows any; one that lists only serverAuth does not).
  gnutls_typed_vdata_st purpose{};
  purpose.type = GNUTLS_DT_KEY_PURPOSE_OID;
  purpose.data = reinterpret_cast<unsigned char*>(const_cast<char*>(GNUTLS_KP_TLS_WWW_CLIENT));
  unsigned status = 0;
  int rc = gnutls_certificate_verify_peers(session, &purpose, 1, &status);
  if (rc < 0) return std::string("client certificate: ") + gnutls_strerror(rc);
  if (status != 0) {
    gnutls_datum_t text{};
    std::string reason = "client certificate not trusted";
    if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text, 0) == 0) {
      reason = std::string("client certificate: ") + reinterpret_cast<char*>(text.data);
      gnutls_free(text.data);
    }
    return reason;
  }
  return "";
}

}  // namespace gpuscope::http
