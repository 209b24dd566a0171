/* rsakit_unnamed_file.c - see include/rsakit_unnamed_file.h. */
#define _GNU_SOURCE
#include "rsakit_unnamed_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int rsakit_open_unnamed(const char *folder) {
#ifdef O_TMPFILE
    /* Without /proc the file could be written but never named. */
    if (access("/proc/self/fd", X_OK) != 0) {
        errno = EOPNOTSUPP;
        return -1;
    }
    return open(folder, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
    (void)folder;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int rsakit_link_unnamed(int fd, const char *path) {
    char proc_path[48];
    snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, proc_path, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}
