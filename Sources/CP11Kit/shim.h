// p11-kit's PKCS#11 v2.40 header (libp11-kit-dev, pkg-config p11-kit-1), for the rsakit
// PKCS#11 module only (Sources/CRSAKitPKCS11, Sources/RSAKitPKCS11). Headers only: the
// module does not link libp11-kit; p11-kit loads the module, not the other way round.
#ifndef RSAKIT_CP11KIT_SHIM_H
#define RSAKIT_CP11KIT_SHIM_H

#include <p11-kit/pkcs11.h>

#endif
