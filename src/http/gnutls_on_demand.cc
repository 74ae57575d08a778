#include "http/gnutls_on_demand.h"

#include <dlfcn.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpuscope::http {

namespace {

constexpr const char* kLibrary = "libgnutls.so.30";

struct Loaded {
  void* handle = nullptr;
  std::string error;  // why not, when handle is null
};

const Loaded& Library() {
  static const Loaded loaded = [] {
    Loaded result;
    result.handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (result.handle == nullptr) {
      const char* error = dlerror();
      result.error = error != nullptr ? error : "unknown dlopen error";
    }
    return result;
  }();
  return loaded;
}

// Reached only if a caller skipped LoadGnuTls(): a programming error, not a user's.
[[noreturn]] void Unavailable(const char* function, const std::string& why) {
  std::fprintf(stderr, "gpuscope: GnuTLS function %s is unavailable: %s\n", function, why.c_str());
  std::abort();
}

// The address of `name` in libgnutls, looked up on the first call through each function.
template <auto kFunction>
decltype(kFunction) Real(const char* name) {
  static const auto real = [name] {
    const Loaded& library = Library();
    if (library.handle == nullptr) Unavailable(name, library.error);
    void* address = dlsym(library.handle, name);
    if (address == nullptr) Unavailable(name, "not in " + std::string(kLibrary));
    return reinterpret_cast<decltype(kFunction)>(address);
  }();
  return real;
}

}  // namespace

Status LoadGnuTls(std::string_view purpose) {
  const Loaded& library = Library();
  if (library.handle != nullptr) return Status::Ok();
  return Status::Unavailable(std::string(purpose) + " needs " + kLibrary +
                             " (apt install libgnutls30): " + library.error);
}

}  // namespace gpuscope::http

// Each definition has the prototype of the GnuTLS header included above (a mismatch does not
// compile) and forwards to the library's own function.
#define GPUSCOPE_ON_DEMAND(result, name, params, args) \
  result name params { return gpuscope::http::Real<&name>(#name) args; }

extern "C" {

// libmicrohttpd's constructor calls gnutls_global_init(), its destructor the deinit. Since
// GnuTLS 3.3 the library initializes itself when loaded, so both are no-ops here: calling the
// real ones would load GnuTLS at start-up.
int gnutls_global_init() { return GNUTLS_E_SUCCESS; }
void gnutls_global_deinit() {}

// GnuTLS's own allocators are malloc and free; libmicrohttpd and tls.cc use these two variables.
gnutls_alloc_function gnutls_malloc = std::malloc;
gnutls_free_function gnutls_free = std::free;

// The functions libmicrohttpd calls.
GPUSCOPE_ON_DEMAND(int, gnutls_alpn_set_protocols,
                   (gnutls_session_t session, const gnutls_datum_t* protocols,
                    unsigned protocols_size, unsigned flags),
                   (session, protocols, protocols_size, flags))
GPUSCOPE_ON_DEMAND(int, gnutls_bye, (gnutls_session_t session, gnutls_close_request_t how),
                   (session, how))
GPUSCOPE_ON_DEMAND(int, gnutls_certificate_allocate_credentials,
                   (gnutls_certificate_credentials_t * credentials), (credentials))
GPUSCOPE_ON_DEMAND(void, gnutls_certificate_free_credentials,
                   (gnutls_certificate_credentials_t credentials), (credentials))
GPUSCOPE_ON_DEMAND(void, gnutls_certificate_server_set_request,
                   (gnutls_session_t session, gnutls_certificate_request_t request),
                   (session, request))
GPUSCOPE_ON_DEMAND(void, gnutls_certificate_set_dh_params,
                   (gnutls_certificate_credentials_t credentials, gnutls_dh_params_t params),
                   (credentials, params))
GPUSCOPE_ON_DEMAND(void, gnutls_certificate_set_retrieve_function2,
                   (gnutls_certificate_credentials_t credentials,
                    gnutls_certificate_retrieve_function2* function),
                   (credentials, function))
GPUSCOPE_ON_DEMAND(void, gnutls_certificate_set_retrieve_function3,
                   (gnutls_certificate_credentials_t credentials,
                    gnutls_certificate_retrieve_function3* function),
                   (credentials, function))
GPUSCOPE_ON_DEMAND(int, gnutls_certificate_set_x509_key_mem,
                   (gnutls_certificate_credentials_t credentials, const gnutls_datum_t* cert,
                    const gnutls_datum_t* key, gnutls_x509_crt_fmt_t type),
                   (credentials, cert, key, type))
GPUSCOPE_ON_DEMAND(int, gnutls_certificate_set_x509_key_mem2,
                   (gnutls_certificate_credentials_t credentials, const gnutls_datum_t* cert,
                    const gnutls_datum_t* key, gnutls_x509_crt_fmt_t type, const char* pass,
                    unsigned int flags),
                   (credentials, cert, key, type, pass, flags))
GPUSCOPE_ON_DEMAND(int, gnutls_certificate_set_x509_trust_mem,
                   (gnutls_certificate_credentials_t credentials, const gnutls_datum_t* ca,
                    gnutls_x509_crt_fmt_t type),
                   (credentials, ca, type))
GPUSCOPE_ON_DEMAND(gnutls_cipher_algorithm_t, gnutls_cipher_get, (gnutls_session_t session),
                   (session))
GPUSCOPE_ON_DEMAND(int, gnutls_credentials_set,
                   (gnutls_session_t session, gnutls_credentials_type_t type, void* credentials),
                   (session, type, credentials))
GPUSCOPE_ON_DEMAND(void, gnutls_deinit, (gnutls_session_t session), (session))
GPUSCOPE_ON_DEMAND(void, gnutls_dh_params_deinit, (gnutls_dh_params_t params), (params))
GPUSCOPE_ON_DEMAND(int, gnutls_dh_params_import_pkcs3,
                   (gnutls_dh_params_t params, const gnutls_datum_t* pkcs3,
                    gnutls_x509_crt_fmt_t format),
                   (params, pkcs3, format))
GPUSCOPE_ON_DEMAND(int, gnutls_dh_params_init, (gnutls_dh_params_t * params), (params))
GPUSCOPE_ON_DEMAND(int, gnutls_handshake, (gnutls_session_t session), (session))
GPUSCOPE_ON_DEMAND(int, gnutls_init, (gnutls_session_t * session, unsigned int flags),
                   (session, flags))
GPUSCOPE_ON_DEMAND(void, gnutls_priority_deinit, (gnutls_priority_t priorities), (priorities))
GPUSCOPE_ON_DEMAND(int, gnutls_priority_init,
                   (gnutls_priority_t * priorities, const char* text, const char** error_at),
                   (priorities, text, error_at))
GPUSCOPE_ON_DEMAND(int, gnutls_priority_set,
                   (gnutls_session_t session, gnutls_priority_t priorities), (session, priorities))
GPUSCOPE_ON_DEMAND(gnutls_protocol_t, gnutls_protocol_get_version, (gnutls_session_t session),
                   (session))
GPUSCOPE_ON_DEMAND(int, gnutls_psk_allocate_server_credentials,
                   (gnutls_psk_server_credentials_t * credentials), (credentials))
GPUSCOPE_ON_DEMAND(void, gnutls_psk_free_server_credentials,
                   (gnutls_psk_server_credentials_t credentials), (credentials))
GPUSCOPE_ON_DEMAND(void, gnutls_psk_set_server_credentials_function,
                   (gnutls_psk_server_credentials_t credentials,
                    gnutls_psk_server_credentials_function* function),
                   (credentials, function))
GPUSCOPE_ON_DEMAND(size_t, gnutls_record_check_pending, (gnutls_session_t session), (session))
GPUSCOPE_ON_DEMAND(int, gnutls_record_get_direction, (gnutls_session_t session), (session))
GPUSCOPE_ON_DEMAND(ssize_t, gnutls_record_recv, (gnutls_session_t session, void* data, size_t size),
                   (session, data, size))
GPUSCOPE_ON_DEMAND(ssize_t, gnutls_record_send,
                   (gnutls_session_t session, const void* data, size_t size), (session, data, size))
GPUSCOPE_ON_DEMAND(void*, gnutls_session_get_ptr, (gnutls_session_t session), (session))
GPUSCOPE_ON_DEMAND(void, gnutls_session_set_ptr, (gnutls_session_t session, void* pointer),
                   (session, pointer))
GPUSCOPE_ON_DEMAND(const char*, gnutls_strerror, (int error), (error))
GPUSCOPE_ON_DEMAND(void, gnutls_transport_set_int2, (gnutls_session_t session, int in, int out),
                   (session, in, out))

// The functions src/http calls besides.
GPUSCOPE_ON_DEMAND(int, gnutls_alert_send,
                   (gnutls_session_t session, gnutls_alert_level_t level,
                    gnutls_alert_description_t description),
                   (session, level, description))
GPUSCOPE_ON_DEMAND(const gnutls_datum_t*, gnutls_certificate_get_peers,
                   (gnutls_session_t session, unsigned int* size), (session, size))
GPUSCOPE_ON_DEMAND(int, gnutls_certificate_verification_status_print,
                   (unsigned int status, gnutls_certificate_type_t type, gnutls_datum_t* out,
                    unsigned int flags),
                   (status, type, out, flags))
GPUSCOPE_ON_DEMAND(int, gnutls_certificate_verify_peers,
                   (gnutls_session_t session, gnutls_typed_vdata_st* data, unsigned int elements,
                    unsigned int* status),
                   (session, data, elements, status))
GPUSCOPE_ON_DEMAND(void, gnutls_handshake_set_hook_function,
                   (gnutls_session_t session, unsigned int type, int when,
                    gnutls_handshake_hook_func function),
                   (session, type, when, function))
GPUSCOPE_ON_DEMAND(int, gnutls_hmac_fast,
                   (gnutls_mac_algorithm_t algorithm, const void* key, size_t key_size,
                    const void* text, size_t text_size, void* digest),
                   (algorithm, key, key_size, text, text_size, digest))
GPUSCOPE_ON_DEMAND(void, gnutls_session_set_verify_function,
                   (gnutls_session_t session, gnutls_certificate_verify_function* function),
                   (session, function))
GPUSCOPE_ON_DEMAND(void, gnutls_x509_crt_deinit, (gnutls_x509_crt_t cert), (cert))
GPUSCOPE_ON_DEMAND(int, gnutls_x509_crt_list_import2,
                   (gnutls_x509_crt_t * *certs, unsigned int* size, const gnutls_datum_t* data,
                    gnutls_x509_crt_fmt_t format, unsigned int flags),
                   (certs, size, data, format, flags))

}  // extern "C"
