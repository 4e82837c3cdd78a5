/* Slices of scatter/gather lists. */
#ifndef PX_UTIL_IOV_H
#define PX_UTIL_IOV_H

#include <stddef.h>
#include <sys/uio.h>

/* Bytes [off, off+len) of the list iov[0..n) as at most `max` entries of
 * out; returns how many. */
static inline int px_iov_slice(const struct iovec *iov, int n, size_t off, size_t len,
                               struct iovec *out, int max)
{
    int k = 0;
    for (int i = 0; i < n && len && k < max; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        size_t take = iov[i].iov_len - off;
        if (take > len)
            take = len;
        out[k].iov_base = (char *)iov[i].iov_base + off;
        out[k].iov_len = take;
        k++;
        len -= take;
        off = 0;
    }
    return k;
}

#endif
