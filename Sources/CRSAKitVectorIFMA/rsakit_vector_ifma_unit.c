/*
 * rsakit_vector_ifma_unit.c - compiles the AVX-512 IFMA kernel (../CRSAKitVector/
 * rsakit_vector_ifma.c) in a target of its own, so that it alone is optimised in this
 * package's debug builds too (Package.swift): at -O0 it is ~17x slower than GMP's path, and
 * the portable reference beside it must stay at the level the valgrind constant-time check
 * was made for. A package that depends on RSAKit builds it at its own level; unoptimised,
 * the dispatch leaves it out (rk_ifma_optimised).
 */
#include "../CRSAKitVector/rsakit_vector_ifma.c"
