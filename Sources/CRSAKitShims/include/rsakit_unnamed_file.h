/*
 * rsakit_unnamed_file.h - an output file with no name until it is complete.
 *
 * RSAOutputFile writes a command's output (plaintext, a private key) to a file that no name
 * points at while it is written: O_TMPFILE in the destination's folder. Nothing then can be
 * left behind by SIGKILL, an OOM kill or a power loss. On success the file is linked into
 * place through /proc/self/fd/N with AT_SYMLINK_FOLLOW: linkat(fd, "", ..., AT_EMPTY_PATH)
 * would need CAP_DAC_READ_SEARCH, which ordinary users lack. All functions are prefixed
 * rsakit_ and set errno on failure.
 */
#ifndef RSAKIT_UNNAMED_FILE_H
#define RSAKIT_UNNAMED_FILE_H

/* An unnamed regular file in `folder`, open for writing, mode 0600 (less the umask), close-
 * on-exec; or -1 with errno (EOPNOTSUPP, EISDIR or EINVAL where the file system or kernel
 * has no O_TMPFILE, or where /proc is not mounted, so that the file could not be linked). */
int rsakit_open_unnamed(const char *folder);

/* Give the unnamed file open as `fd` the name `path` (which must not exist: EEXIST
 * otherwise), in the same file system. Returns 0, or -1 with errno. */
int rsakit_link_unnamed(int fd, const char *path);

#endif
