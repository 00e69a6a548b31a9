#include "atomic_file.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A few outputs per run: --output, --json, --checkpoint. */
enum { SLOTS = 8 };
static char reg_path[SLOTS][PATH_MAX];
static volatile sig_atomic_t reg_live[SLOTS];

static int reg_add(const char *tmp)
{
    for (int i = 0; i < SLOTS; i++)
        if (!reg_live[i]) {
            snprintf(reg_path[i], PATH_MAX, "%s", tmp);
            reg_live[i] = 1; /* set last: the handler sees a complete path or none */
            return i;
        }
    return -1;
}

static void reg_drop(int slot)
{
    if (slot >= 0) reg_live[slot] = 0;
}

void hr_atomic_cleanup_signal(void)
{
    for (int i = 0; i < SLOTS; i++)
        if (reg_live[i]) unlink(reg_path[i]);
}

int hr_atomic_begin(hr_atomic *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->slot = -1;
    if (!path || !*path) return ENOENT;
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path) return ENAMETOOLONG;
    size_t len = strlen(path);
    if (path[len - 1] == '/') return EISDIR;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        /* replace what the link points to, not the link */
        char *real = realpath(path, NULL);
        if (real) {
            snprintf(a->path, sizeof a->path, "%s", real);
            free(real);
        }
    }
    if (stat(a->path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return EISDIR;
        if (access(a->path, W_OK) != 0) return errno;
        if (!S_ISREG(st.st_mode)) { /* /dev/null, a pipe: nothing to protect */
            a->direct = 1;
            snprintf(a->tmp, sizeof a->tmp, "%s", a->path);
            return 0;
        }
    }
    const char *slash = strrchr(a->path, '/');
    int dirlen = slash ? (int)(slash - a->path + 1) : 0;
    const char *base = slash ? slash + 1 : a->path;
    if (snprintf(a->tmp, sizeof a->tmp, "%.*s.%s.tmp-XXXXXX", dirlen, a->path, base) >= (int)sizeof a->tmp) {
        a->tmp[0] = '\0';
        return ENAMETOOLONG;
    }
    int fd = mkstemp(a->tmp);
    if (fd < 0) {
        int e = errno;
        a->tmp[0] = '\0';
        return e;
    }
    /* mkstemp makes 0600; give the file the mode an ordinary create would */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) { /* not fatal: the file is still ours */
    }
    close(fd);
    a->slot = reg_add(a->tmp);
    return 0;
}

int hr_atomic_commit(hr_atomic *a)
{
    if (!a->tmp[0]) return EINVAL;
    if (a->direct) {
        a->tmp[0] = '\0';
        return 0;
    }
    if (rename(a->tmp, a->path) != 0) {
        int e = errno;
        hr_atomic_abort(a);
        return e;
    }
    reg_drop(a->slot);
    a->slot = -1;
    a->tmp[0] = '\0';
    return 0;
}

void hr_atomic_abort(hr_atomic *a)
{
    if (a->tmp[0] && !a->direct) unlink(a->tmp);
    reg_drop(a->slot);
    a->slot = -1;
    a->tmp[0] = '\0';
}
