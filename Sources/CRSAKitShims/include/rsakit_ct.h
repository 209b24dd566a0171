/*
 * rsakit_ct.h - memcheck client requests for the constant-time harness.
 *
 * Under valgrind --tool=memcheck, rsakit_ct_poison marks bytes "undefined" so that any
 * branch, conditional move or memory address computed from them is reported
 * ("Conditional jump or move depends on uninitialised value(s)", "Use of uninitialised
 * value"): that is how the harness (Tests/ConstantTimeHarness) proves the private path
 * constant-time, as Nettle's testsuite/sc-*-test do. rsakit_ct_declassify marks bytes
 * "defined" again; the library calls it exactly where an algorithm legitimately reveals
 * a value derived from secrets (the re-encryption verdict, the padding verdict and the
 * message length, the container frame verdict).
 *
 * Outside valgrind, and when valgrind/memcheck.h was absent at build time, both are
 * no-ops (a few instructions that valgrind recognises). Nothing here changes data.
 */
#ifndef RSAKIT_CT_H
#define RSAKIT_CT_H

#include <stddef.h>
#include <stdint.h>

/* Mark length bytes at p undefined (secret) for memcheck. */
void rsakit_ct_poison(const void *p, size_t length);

/* Mark length bytes at p defined (public from here on) for memcheck. */
void rsakit_ct_declassify(const void *p, size_t length);

/* x, returned through an empty asm statement in a function the caller's compiler cannot
 * see into: the caller's optimiser can no longer tell that x is a 0 / all-ones mask, so it
 * cannot turn `mask & value` back into a branch (Swift's optimiser turned the EME-PKCS1-v1_5
 * length check into a `jns`; the harness caught it in a release build). */
uint64_t rsakit_ct_opaque(uint64_t x);

/* 1 when the process runs under valgrind, else 0. */
int rsakit_ct_running_on_valgrind(void);

/* 1 when the memcheck client requests were compiled in, else 0. */
int rsakit_ct_available(void);

#endif
