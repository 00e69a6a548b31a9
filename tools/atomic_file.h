/*
 * Outputs that are either complete or absent: every file is written to a temporary file
 * in the same directory and renamed into place on success, so a failed write (disk
 * full, ulimit -f), a signal or a concurrent writer never leaves a partial file or
 * destroys the previous good one.
 *
 * Live temporary paths sit in a fixed registry that a signal handler may clear with
 * hr_atomic_cleanup_signal() (unlink only: async-signal-safe).
 */
#ifndef HR_ATOMIC_FILE_H
#define HR_ATOMIC_FILE_H

#include <limits.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

typedef struct hr_atomic {
    char path[PATH_MAX]; /* the final name */
    char tmp[PATH_MAX];  /* the temporary file beside it ("" when none is open) */
    int slot;            /* registry slot, -1 when none */
    int direct;          /* an existing device or pipe: written in place, nothing to rename */
} hr_atomic;

/* Creates the temporary file for `path` (checking on the way that the directory exists
 * and is writable and that `path` is not a directory). Returns 0 or an errno value. */
int hr_atomic_begin(hr_atomic *a, const char *path);
/* Renames the temporary file onto the final name. Returns 0 or an errno value (the
 * temporary file is then removed). */
int hr_atomic_commit(hr_atomic *a);
/* Removes the temporary file, if any. Safe to call twice. */
void hr_atomic_abort(hr_atomic *a);
/* Unlinks every live temporary file; async-signal-safe. */
void hr_atomic_cleanup_signal(void);

#endif
