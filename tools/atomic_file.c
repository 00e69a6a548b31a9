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

/* Follows symbolic links from `path` (in place) to the name that is written: an existing
 * file, or the file a dangling link names (a relative target is relative to the link's
 * folder). 0 or an errno value. */
static int follow_links(char *path, size_t size)
{
    for (int depth = 0; depth < 40; depth++) {
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) return 0;
        char target[PATH_MAX], joined[PATH_MAX];
        const ssize_t n = readlink(path, target, sizeof target - 1);
        if (n < 0) return errno;
        target[n] = '\0';
        const char *slash = strrchr(path, '/');
        const int dirlen = target[0] == '/' || !slash ? 0 : (int)(slash - path + 1);
        if (snprintf(joined, sizeof joined, "%.*s%s", dirlen, path, target) >= (int)sizeof joined ||
            strlen(joined) >= size)
            return ENAMETOOLONG;
        memcpy(path, joined, strlen(joined) + 1);
    }
    return ELOOP;
}

/* The temporary file's name: ".NAME.tmp-XXXXXX" beside the target, NAME cut to at most
 * TMP_STEM bytes (at a UTF-8 character boundary) so that a name near the file system's
 * limit still has a temporary name that fits. */
enum { TMP_STEM = 64 };

int hr_atomic_begin(hr_atomic *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->slot = -1;
    if (!path || !*path) return ENOENT;
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path) return ENAMETOOLONG;
    size_t len = strlen(path);
    if (path[len - 1] == '/') return EISDIR;
    /* replace what a link points to, not the link; a dangling link creates its target */
    int err = follow_links(a->path, sizeof a->path);
    if (err) return err;
    len = strlen(a->path);
    if (a->path[len - 1] == '/') return EISDIR;
    struct stat st;
    int replaces = 0; /* an existing regular file: its mode and owner carry over */
    if (stat(a->path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return EISDIR;
        if (access(a->path, W_OK) != 0) return errno;
        if (!S_ISREG(st.st_mode)) { /* /dev/null, a pipe: nothing to protect */
            a->direct = 1;
            snprintf(a->tmp, sizeof a->tmp, "%s", a->path);
            return 0;
        }
        replaces = 1;
    }
    const char *slash = strrchr(a->path, '/');
    int dirlen = slash ? (int)(slash - a->path + 1) : 0;
    const char *base = slash ? slash + 1 : a->path;
    int stem = (int)strlen(base);
    if (stem > TMP_STEM) {
        stem = TMP_STEM;
        while (stem > 0 && ((unsigned char)base[stem] & 0xC0) == 0x80)
            stem--; /* not inside a character */
    }
    if (snprintf(a->tmp, sizeof a->tmp, "%.*s.%.*s.tmp-XXXXXX", dirlen, a->path, stem, base) >=
        (int)sizeof a->tmp) {
        a->tmp[0] = '\0';
        return ENAMETOOLONG;
    }
    int fd = mkstemp(a->tmp);
    if (fd < 0) {
        int e = errno;
        a->tmp[0] = '\0';
        return e;
    }
    /* mkstemp makes 0600. A replaced file keeps its mode and, where we may give it, its owner
     * and group (owner first: a change of owner clears set-id bits); a new file gets the mode
     * an ordinary create would. Not fatal when refused: the file is still ours. */
    if (replaces) {
        if (fchown(fd, st.st_uid, st.st_gid) != 0 && fchown(fd, (uid_t)-1, st.st_gid) != 0) {}
        if (fchmod(fd, st.st_mode & 07777) != 0) {}
    } else {
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(fd, 0666 & ~mask) != 0) {}
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
