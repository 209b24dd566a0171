/* rsakit_tempfiles.c - see include/rsakit_tempfiles.h. */
#include "rsakit_tempfiles.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* Slot states: free, being filled (not yet visible to the handler), live. */
enum { SLOT_FREE = 0, SLOT_FILLING = 1, SLOT_LIVE = 2 };

static _Atomic int slot_state[RSAKIT_TEMPFILE_SLOTS];
/* Paths live in static storage, never freed: the handler never reads freed memory. */
static char slot_path[RSAKIT_TEMPFILE_SLOTS][PATH_MAX];

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
static _Atomic int open_line;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

/* Async-signal-safe: atomic loads, write(2), unlink(2), sigaction(2), raise(3). */
static void rsakit_tempfile_handler(int signal_number) {
    if (atomic_load(&open_line)) {
        ssize_t written = write(STDERR_FILENO, "\n", 1);
        (void)written;
    }
    for (int i = 0; i < RSAKIT_TEMPFILE_SLOTS; i++) {
        if (atomic_load(&slot_state[i]) == SLOT_LIVE) {
            unlink(slot_path[i]);
        }
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, NULL);
    /* The signal is blocked while its handler runs (unless SA_NODEFER); unblock it so
     * that raise() ends the process now, with the default action. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(signal_number);
}

static void rsakit_tempfile_install(void) {
    for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++) {
        struct sigaction current;
        if (sigaction(handled_signals[i], NULL, &current) != 0) continue;
        if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL) continue;
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = rsakit_tempfile_handler;
        sigfillset(&action.sa_mask); /* no other handled signal interrupts the cleanup */
        action.sa_flags = SA_RESTART;
        sigaction(handled_signals[i], &action, NULL);
    }
}

int rsakit_tempfile_register(const char *path) {
    size_t length = strlen(path);
    if (length >= PATH_MAX) return -1;
    pthread_once(&install_once, rsakit_tempfile_install);
    for (int i = 0; i < RSAKIT_TEMPFILE_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (atomic_compare_exchange_strong(&slot_state[i], &expected, SLOT_FILLING)) {
            memcpy(slot_path[i], path, length + 1);
            atomic_store(&slot_state[i], SLOT_LIVE);
            return i;
        }
    }
    return -1;
}

void rsakit_tempfile_set_open_line(int open) {
    pthread_once(&install_once, rsakit_tempfile_install);
    atomic_store(&open_line, open != 0);
}

void rsakit_tempfile_unregister(int slot) {
    if (slot < 0 || slot >= RSAKIT_TEMPFILE_SLOTS) return;
    atomic_store(&slot_state[slot], SLOT_FREE);
}

int rsakit_tempfile_count(void) {
    int count = 0;
    for (int i = 0; i < RSAKIT_TEMPFILE_SLOTS; i++) {
        if (atomic_load(&slot_state[i]) == SLOT_LIVE) count++;
    }
    return count;
}
