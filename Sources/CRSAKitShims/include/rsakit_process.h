/*
 * rsakit_process.h - process hardening for programs that hold private keys.
 *
 * prctl(2) is variadic, which Swift cannot call, hence this shim. Linux only.
 */
#ifndef RSAKIT_PROCESS_H
#define RSAKIT_PROCESS_H

/* Forbid core dumps for the rest of the process: prctl(PR_SET_DUMPABLE, 0), which also
 * makes /proc/PID/{mem,environ,...} unreadable to other processes of the same user and
 * forbids ptrace attach by them, and setrlimit(RLIMIT_CORE) to 0 soft and hard (the hard
 * limit too, so the process cannot raise it again). Children inherit both across fork;
 * across execve the dumpable flag is reset to 1 by the kernel, RLIMIT_CORE stays 0.
 * Returns 0, or the errno of the first call that failed. */
int rsakit_disable_core_dumps(void);

/* prctl(PR_GET_DUMPABLE): 1 (dumpable), 0 (not), 2 (root-only), or -1 with errno. */
int rsakit_get_dumpable(void);

#endif
