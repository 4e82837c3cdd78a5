/* The POSIX driver (any file system with pread/pwrite and fcntl locks),
 * and the choice of driver by a file name's prefix, as ROMIO does. */
#include "io_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static int px_posix_open(const char *path, int flags, mode_t perm, int *h_p)
{
    int fd;
    do
        fd = open(path, flags | O_CLOEXEC, perm);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -errno;
    *h_p = fd;
    return 0;
}

static int px_posix_close(int h) { return close(h) ? -errno : 0; }

static ssize_t px_posix_pread(int h, void *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(h, (char *)buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break; /* end of file */
        done += (size_t)n;
    }
    return (ssize_t)done;
}

static ssize_t px_posix_pwrite(int h, const void *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(h, (const char *)buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ENOSPC;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* Whole vectored transfers: iov (n entries, consumed) from off; the
 * kernel takes at most IOV_MAX entries and may stop short. */
static ssize_t px_posix_rwv(int h, struct iovec *iov, int n, off_t off, int write)
{
    size_t done = 0;
    while (n > 0) {
        int k = n < IOV_MAX ? n : IOV_MAX;
        ssize_t r =
            write ? pwritev(h, iov, k, off + (off_t)done) : preadv(h, iov, k, off + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0) {
            if (write)
                return -ENOSPC;
            break; /* end of file */
        }
        done += (size_t)r;
        while (n > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++, n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    return (ssize_t)done;
}

static ssize_t px_posix_preadv(int h, struct iovec *iov, int n, off_t off)
{
    return px_posix_rwv(h, iov, n, off, 0);
}

static ssize_t px_posix_pwritev(int h, struct iovec *iov, int n, off_t off)
{
    return px_posix_rwv(h, iov, n, off, 1);
}

static int px_posix_fsync(int h) { return fsync(h) ? -errno : 0; }

static int px_posix_set_size(int h, off_t size) { return ftruncate(h, size) ? -errno : 0; }

static int px_posix_get_size(int h, off_t *size_p)
{
    struct stat st;
    if (fstat(h, &st))
        return -errno;
    *size_p = st.st_size;
    return 0;
}

static int64_t px_posix_block_size(int h)
{
    struct stat st;
    return fstat(h, &st) ? 0 : (int64_t)st.st_blksize;
}

static int px_posix_preallocate(int h, off_t size)
{
    if (size <= 0)
        return 0;
    int rc = posix_fallocate(h, 0, size);
    if (rc == EOPNOTSUPP || rc == EINVAL) {
        /* file systems without fallocate: write the missing bytes */
        off_t cur;
        int e = px_posix_get_size(h, &cur);
        if (e)
            return e;
        static const char zero[4096];
        for (off_t o = cur; o < size; o += (off_t)sizeof(zero)) {
            size_t n = size - o < (off_t)sizeof(zero) ? (size_t)(size - o) : sizeof(zero);
            ssize_t w = px_posix_pwrite(h, zero, n, o);
            if (w < 0)
                return (int)w;
        }
        return 0;
    }
    return -rc;
}

/* Open-file-description locks where the kernel has them: they belong to
 * the descriptor, so two handles of one process on a file exclude each
 * other and closing one does not drop the other's locks. */
static int px_posix_lk(int h, int type, off_t off, off_t len)
{
    struct flock fl = {.l_type = (short)type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
#ifdef F_OFD_SETLKW
    static int no_ofd;
    if (!no_ofd) {
        int rc;
        do
            rc = fcntl(h, F_OFD_SETLKW, &fl);
        while (rc < 0 && errno == EINTR);
        if (rc == 0)
            return 0;
        if (errno != EINVAL)
            return -errno;
        no_ofd = 1;
    }
#endif
    int rc;
    do
        rc = fcntl(h, F_SETLKW, &fl);
    while (rc < 0 && errno == EINTR);
    return rc ? -errno : 0;
}

static int px_posix_lock(int h, off_t off, off_t len, int exclusive)
{
    return px_posix_lk(h, exclusive ? F_WRLCK : F_RDLCK, off, len);
}

static int px_posix_unlock(int h, off_t off, off_t len)
{
    return px_posix_lk(h, F_UNLCK, off, len);
}

static int px_posix_remove(const char *path) { return unlink(path) ? -errno : 0; }

static int px_posix_map(int h, size_t len, void **p_p)
{
    struct stat sb;
    if (fstat(h, &sb))
        return -errno;
    /* two processes may both find it short: the second truncation to the
     * same length changes nothing */
    if ((size_t)sb.st_size < len && ftruncate(h, (off_t)len))
        return -errno;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, h, 0);
    if (p == MAP_FAILED)
        return -errno;
    *p_p = p;
    return 0;
}

static void px_posix_unmap(void *p, size_t len) { munmap(p, len); }

const px_io_driver_t px_io_driver_posix = {
    .name = "posix",
    .open = px_posix_open,
    .close = px_posix_close,
    .pread = px_posix_pread,
    .pwrite = px_posix_pwrite,
    .preadv = px_posix_preadv,
    .pwritev = px_posix_pwritev,
    .fsync = px_posix_fsync,
    .set_size = px_posix_set_size,
    .get_size = px_posix_get_size,
    .block_size = px_posix_block_size,
    .preallocate = px_posix_preallocate,
    .lock = px_posix_lock,
    .unlock = px_posix_unlock,
    .remove = px_posix_remove,
    .map = px_posix_map,
    .unmap = px_posix_unmap,
};

static const struct {
    const char *prefix;
    const px_io_driver_t *drv;
} px_io_prefixes[] = {
    {"ufs", &px_io_driver_posix},
    {"posix", &px_io_driver_posix},
    {"nfs", &px_io_driver_posix},
};

/* A prefix is two or more characters before the first ':' with no '/'
 * in them (one letter is a drive, as ROMIO reads it). */
const px_io_driver_t *px_io_driver_for(const char *name, const char **path_p)
{
    const char *colon = strchr(name, ':');
    size_t n = colon ? (size_t)(colon - name) : 0;
    if (n < 2 || memchr(name, '/', n)) {
        *path_p = name;
        return &px_io_driver_posix;
    }
    for (size_t i = 0; i < sizeof(px_io_prefixes) / sizeof(px_io_prefixes[0]); i++)
        if (strlen(px_io_prefixes[i].prefix) == n &&
            !strncasecmp(name, px_io_prefixes[i].prefix, n)) {
            *path_p = colon + 1;
            return px_io_prefixes[i].drv;
        }
    return NULL;
}
