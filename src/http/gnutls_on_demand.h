// GnuTLS, loaded on first use. Debian's shared libmicrohttpd needs libgnutls and the eight
// libraries under it (p11-kit, nettle, hogweed, gmp, tasn1, unistring, idn2, ffi): 2.8 MB
// resident in every agent, serving TLS or not. gpuscope links libmicrohttpd statically instead,
// and every GnuTLS function that it and src/http call is defined in gnutls_on_demand.cc: the
// first call loads libgnutls.so.30, and each function looks its address up there once. An agent
// without TLS or basic-auth users never maps GnuTLS.
//
// Callers that need GnuTLS (TLS settings, basic-auth users) call LoadGnuTls() first, so that a
// missing library fails the configuration closed with its reason instead of aborting later.
//
// Thread safety: any thread; the library is loaded once.
#pragma once

#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::http {

// Loads libgnutls.so.30 (once); the error names `purpose`, e.g. "TLS needs libgnutls.so.30
// (apt install libgnutls30): <reason>".
Status LoadGnuTls(std::string_view purpose);

}  // namespace gpuscope::http
