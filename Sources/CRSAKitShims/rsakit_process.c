#include "rsakit_process.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/resource.h>

int rsakit_disable_core_dumps(void) {
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        return errno;
    }
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) {
        return errno;
    }
    return 0;
}

int rsakit_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}
