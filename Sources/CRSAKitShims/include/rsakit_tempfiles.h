/*
 * rsakit_tempfiles.h - remove live temporary files when a terminating signal arrives.
 *
 * RSAOutputFile (Sources/RSAKit/Files) writes a command's output to a temporary file
 * that may hold plaintext or a private key, and renames it into place only on success.
 * If the process is killed by SIGINT, SIGTERM, SIGHUP or SIGPIPE meanwhile, the handler
 * installed here unlinks every registered temporary file with unlink(2) (async-signal-
 * safe, no allocation, no locks), restores the default action and re-raises the signal,
 * so the process still ends "killed by signal" as the shell expects.
 *
 * A signal whose disposition is not SIG_DFL when the first file is registered (ignored
 * by nohup, or handled by the host program) is left alone. All functions are prefixed
 * rsakit_.
 */
#ifndef RSAKIT_TEMPFILES_H
#define RSAKIT_TEMPFILES_H

/* Most temporary files live at once; registration fails (-1) beyond this. */
#define RSAKIT_TEMPFILE_SLOTS 64

/* Register `path` (copied; at most PATH_MAX - 1 bytes) for removal on a terminating
 * signal, installing the handlers on first use (thread-safe). Returns the slot number
 * (>= 0) to pass to rsakit_tempfile_unregister, or -1 when all slots are taken or the
 * path is too long. Register before creating the file: unlinking a path not yet created
 * is harmless. */
int rsakit_tempfile_register(const char *path);

/* Forget slot `slot` (after the file was renamed away or removed). Ignores -1. */
void rsakit_tempfile_unregister(int slot);

/* The number of registered files (tests). */
int rsakit_tempfile_count(void);

/* Say whether a line without its newline is open on stderr (a progress line redrawn with
 * "\r"), installing the handlers on first use. While it is, the handler writes "\n" to
 * stderr first, so that the shell's prompt after a Ctrl-C starts on a line of its own. */
void rsakit_tempfile_set_open_line(int open);

#endif
