// The rsakit PKCS#11 module's C face. The entry points themselves are Swift
// `@_cdecl` functions in Sources/RSAKitPKCS11 (named rsakit_p11_<Function>); this target
// only gathers them into the CK_FUNCTION_LIST that C_GetFunctionList hands out.
#ifndef RSAKIT_PKCS11_H
#define RSAKIT_PKCS11_H

#include <p11-kit/pkcs11.h>

/// The module's function list (PKCS#11 v2.40 §5.2), for tests that call the module
/// in-process; hosts use C_GetFunctionList.
CK_FUNCTION_LIST *rsakit_pkcs11_function_list(void);

#endif
