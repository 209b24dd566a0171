/*
 * rsakit_socket.h - what the keychain agent needs of Linux that Swift's Glibc module hides
 * behind _GNU_SOURCE: the peer's uid of a Unix socket (SO_PEERCRED, struct ucred), and
 * mlockall(2) with MCL_ONFAULT-free flags.
 */
#ifndef RSAKIT_SOCKET_H
#define RSAKIT_SOCKET_H

/* The uid of the process at the other end of the connected Unix socket `fd`
 * (getsockopt SO_PEERCRED). Returns 0 and sets *uid, or -1 with errno. */
int rsakit_peer_uid(int fd, unsigned int *uid);

/* The uid and primary gid of the process at the other end of the connected Unix socket `fd`
 * (SO_PEERCRED), as the kernel recorded them at connect(2): the peer cannot forge them.
 * Returns 0, or -1 with errno. */
int rsakit_peer_credentials(int fd, unsigned int *uid, unsigned int *gid);

/* mlockall(MCL_CURRENT | MCL_FUTURE): keep the process's memory out of swap. Returns 0, or
 * the errno (ENOMEM or EPERM when RLIMIT_MEMLOCK is too small: best effort). */
int rsakit_lock_all_memory(void);

#endif
