// `import RSAKit` gives every layer, as one module did before the layers were targets. A
// package that needs less imports the layer it needs: RSAKitCore, RSAKitPKI, RSAKitKeychain
// or RSAKitTLS (ARCHITECTURE.md).
@_exported import RSAKitCore
@_exported import RSAKitKeychain
@_exported import RSAKitPKI
@_exported import RSAKitTLS
