/* pxrun: forwarding rank output line by line, and pxrun's stdin to rank 0. */
#include "pxrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PXRUN_LINE_MAX 65536 /* a longer line is passed on in pieces */

static void pxrun_write_out(pxrun_job_t *job, int fd, const char *p, size_t len)
{
    while (len && !job->out_broken[fd]) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            job->out_broken[fd] = 1; /* e.g. `pxrun ... | head`: drop the rest */
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

/* Emits complete lines (all of the buffer when `all`), each written whole so
 * lines of different ranks never mix. */
static void pxrun_linebuf_emit(pxrun_job_t *job, pxrun_rank_t *r, pxrun_linebuf_t *lb, int all)
{
    size_t done = 0;
    if (!job->opts->tag_output) {
        char *nl = lb->len ? memrchr(lb->buf, '\n', lb->len) : NULL;
        done = all ? lb->len : nl ? (size_t)(nl - lb->buf) + 1 : 0;
        if (!done && lb->len >= PXRUN_LINE_MAX)
            done = lb->len;
        pxrun_write_out(job, lb->dest, lb->buf, done);
    } else {
        char prefix[24];
        int plen = snprintf(prefix, sizeof(prefix), "[%d] ", r->rank);
        size_t cap = 0;
        char *out = NULL;
        size_t olen = 0;
        while (done < lb->len) {
            char *nl = memchr(lb->buf + done, '\n', lb->len - done);
            size_t n = nl ? (size_t)(nl - (lb->buf + done)) + 1 : lb->len - done;
            int partial = !nl;
            if (partial && !all && n < PXRUN_LINE_MAX)
                break;
            if (olen + (size_t)plen + n + 1 > cap) {
                cap = (olen + (size_t)plen + n + 1) * 2;
                char *o = realloc(out, cap);
                if (!o)
                    break;
                out = o;
            }
            memcpy(out + olen, prefix, (size_t)plen);
            memcpy(out + olen + (size_t)plen, lb->buf + done, n);
            olen += (size_t)plen + n;
            if (partial)
                out[olen++] = '\n'; /* a tagged line always ends */
            done += n;
        }
        pxrun_write_out(job, lb->dest, out, olen);
        free(out);
    }
    memmove(lb->buf, lb->buf + done, lb->len - done);
    lb->len -= done;
}

static void pxrun_linebuf_close(pxrun_job_t *job, pxrun_rank_t *r, pxrun_linebuf_t *lb)
{
    pxrun_linebuf_emit(job, r, lb, 1);
    close(lb->fd);
    lb->fd = -1;
    free(lb->buf);
    lb->buf = NULL;
    lb->len = lb->cap = 0;
}

/* One read per call, so one busy rank cannot starve the event loop. */
void pxrun_linebuf_read(pxrun_job_t *job, pxrun_rank_t *r, pxrun_linebuf_t *lb)
{
    if (lb->fd < 0)
        return;
    if (lb->cap - lb->len < 4096) {
        size_t cap = lb->cap ? lb->cap * 2 : 8192;
        char *b = realloc(lb->buf, cap);
        if (!b) {
            pxrun_linebuf_close(job, r, lb);
            return;
        }
        lb->buf = b;
        lb->cap = cap;
    }
    ssize_t n = read(lb->fd, lb->buf + lb->len, lb->cap - lb->len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        pxrun_linebuf_close(job, r, lb);
        return;
    }
    lb->len += (size_t)n;
    pxrun_linebuf_emit(job, r, lb, 0);
}

/* Reads what a finished process left in the pipe, so its last words come
 * before pxrun's verdict on it. */
void pxrun_linebuf_drain(pxrun_job_t *job, pxrun_rank_t *r, pxrun_linebuf_t *lb)
{
    for (int i = 0; i < 256 && lb->fd >= 0; i++) {
        size_t before = lb->len;
        int fd = lb->fd;
        pxrun_linebuf_read(job, r, lb);
        if (lb->fd == fd && lb->len == before)
            break; /* EAGAIN: a descendant still holds the pipe open */
    }
}

void pxrun_stdin_close(pxrun_job_t *job)
{
    job->stdin_open = 0;
    if (job->stdin_pipe >= 0)
        close(job->stdin_pipe);
    job->stdin_pipe = -1;
    job->stdin_len = 0;
}

void pxrun_stdin_read(pxrun_job_t *job)
{
    if (!job->stdin_buf) {
        job->stdin_buf = malloc(PXRUN_STDIN_BUF);
        if (!job->stdin_buf) {
            pxrun_stdin_close(job);
            return;
        }
    }
    ssize_t n =
        read(STDIN_FILENO, job->stdin_buf + job->stdin_len, PXRUN_STDIN_BUF - job->stdin_len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        job->stdin_open = 0; /* EOF: close rank 0's stdin once the buffer is out */
        if (!job->stdin_len)
            pxrun_stdin_close(job);
        return;
    }
    job->stdin_len += (size_t)n;
    pxrun_stdin_write(job);
}

void pxrun_stdin_write(pxrun_job_t *job)
{
    if (job->stdin_pipe < 0)
        return;
    while (job->stdin_len) {
        ssize_t n = write(job->stdin_pipe, job->stdin_buf, job->stdin_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) { /* rank 0 closed its stdin */
            pxrun_stdin_close(job);
            return;
        }
        memmove(job->stdin_buf, job->stdin_buf + n, job->stdin_len - (size_t)n);
        job->stdin_len -= (size_t)n;
    }
    if (!job->stdin_open)
        pxrun_stdin_close(job);
}
