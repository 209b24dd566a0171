// librsakit-pkcs11.so. The module is _RSAKitPKCS11 (its logic and its `@_cdecl` entry
// points) and CRSAKitPKCS11 (C_GetFunctionList and the function table); this target is the
// shared object they are linked into, with its linker settings (Package.swift: the static
// Swift runtime in release builds, and the export list that leaves C_GetFunctionList the only
// exported symbol). It holds no code of its own, so that the Fuzz package builds the same
// module from the `_RSAKitPKCS11` product instead of linking to these sources.
@_exported import _RSAKitPKCS11
