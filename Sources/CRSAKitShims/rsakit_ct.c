/* memcheck client requests for the constant-time harness; see include/rsakit_ct.h. */
#include "rsakit_ct.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define RSAKIT_HAVE_MEMCHECK 1
#endif
#endif

void rsakit_ct_poison(const void *p, size_t length) {
#ifdef RSAKIT_HAVE_MEMCHECK
    (void)VALGRIND_MAKE_MEM_UNDEFINED(p, length);
#else
    (void)p;
    (void)length;
#endif
}

void rsakit_ct_declassify(const void *p, size_t length) {
#ifdef RSAKIT_HAVE_MEMCHECK
    (void)VALGRIND_MAKE_MEM_DEFINED(p, length);
#else
    (void)p;
    (void)length;
#endif
}

__attribute__((noinline)) uint64_t rsakit_ct_opaque(uint64_t x) {
    __asm__ volatile("" : "+r"(x));
    return x;
}

int rsakit_ct_running_on_valgrind(void) {
#ifdef RSAKIT_HAVE_MEMCHECK
    return RUNNING_ON_VALGRIND ? 1 : 0;
#else
    return 0;
#endif
}

int rsakit_ct_available(void) {
#ifdef RSAKIT_HAVE_MEMCHECK
    return 1;
#else
    return 0;
#endif
}
