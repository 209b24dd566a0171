#define _GNU_SOURCE
#include "rsakit_socket.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/socket.h>

int rsakit_peer_uid(int fd, unsigned int *uid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    *uid = credentials.uid;
    return 0;
}

int rsakit_peer_credentials(int fd, unsigned int *uid, unsigned int *gid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

int rsakit_lock_all_memory(void) {
    return mlockall(MCL_CURRENT | MCL_FUTURE) == 0 ? 0 : errno;
}
