// GnuTLS TLS-session helpers for RSAKit's TLS client (Sources/RSAKit/GnuTLS/GnuTLSSession.swift).
// Only Sources/RSAKit/GnuTLS/ imports this module.
#ifndef RSAKIT_CGNUTLS_TLS_SHIM_H
#define RSAKIT_CGNUTLS_TLS_SHIM_H

#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>
#include <string.h>

// `gnutls_malloc` is a process-wide function pointer behind a macro (as `gnutls_free`):
// a signature handed back from a private-key callback must come from it, because GnuTLS
// frees it with `gnutls_free`. Copies `size` bytes into a new datum; returns 0 or
// GNUTLS_E_MEMORY_ERROR.
static inline int rsakit_gnutls_set_datum(gnutls_datum_t *datum, const unsigned char *bytes, unsigned int size) {
    datum->data = gnutls_malloc(size > 0 ? size : 1);
    if (datum->data == NULL) {
        datum->size = 0;
        return GNUTLS_E_MEMORY_ERROR;
    }
    if (size > 0) memcpy(datum->data, bytes, size);
    datum->size = size;
    return 0;
}

// GNUTLS_FLAGS_TO_SIGN_ALGO as a function (a macro Swift cannot call).
static inline unsigned int rsakit_gnutls_flags_to_sign_algo(unsigned int flags) {
    return GNUTLS_FLAGS_TO_SIGN_ALGO(flags);
}

// gnutls_transport_set_int is a macro over gnutls_transport_set_int2.
static inline void rsakit_gnutls_transport_set_fd(gnutls_session_t session, int fd) {
    gnutls_transport_set_int2(session, fd, fd);
}

#endif
