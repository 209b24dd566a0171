// GnuTLS (libgnutls28-dev) for RSAKit: X.509 certificates, PKCS#8 decryption, PKCS#12
// and chain verification. Only Sources/RSAKit/GnuTLS/ imports this module.
#ifndef RSAKIT_CGNUTLS_SHIM_H
#define RSAKIT_CGNUTLS_SHIM_H

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <gnutls/pkcs12.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/ocsp.h>
#include <gnutls/pkcs7.h>

// `gnutls_free` is a process-wide function pointer behind a macro; Swift 6 cannot touch
// C globals safely, so RSAKit calls it through this function.
static inline void rsakit_gnutls_free(void *pointer) {
    gnutls_free(pointer);
}

// Free the data of a datum GnuTLS allocated, and clear the datum.
static inline void rsakit_gnutls_free_datum(gnutls_datum_t *datum) {
    if (datum->data != NULL) {
        gnutls_memset(datum->data, 0, datum->size);
        gnutls_free(datum->data);
    }
    datum->size = 0;
}

#endif
