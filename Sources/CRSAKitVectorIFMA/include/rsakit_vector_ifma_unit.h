/* rsakit_vector_ifma_unit.h - no declarations: the IFMA kernel's symbols are declared in
 * CRSAKitVector's rsakit_vector_internal.h; this target only compiles them (see the .c). */
#ifndef RSAKIT_VECTOR_IFMA_UNIT_H
#define RSAKIT_VECTOR_IFMA_UNIT_H
#endif
