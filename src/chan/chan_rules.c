#include "chan_rules.h"

#include <ctype.h>
#include <stddef.h>
#include <stdarg.h>
#include <string.h>

static const char *const px_chr_names[PX_CHR_N] = {
    [PX_CHR_SHM] = "shm",           [PX_CHR_UDP] = "udp",
    [PX_CHR_TCP] = "tcp",           [PX_CHR_TCP_RNDV] = "tcp-rndv",
    [PX_CHR_UDP_RNDV] = "udp-rndv", [PX_CHR_UDP_ZCOPY] = "udp-zcopy",
    [PX_CHR_COPY] = "copy",
};

const char *px_chr_chan_name(int chan)
{
    return chan >= 0 && chan < PX_CHR_N ? px_chr_names[chan] : "?";
}

typedef struct {
    const char *s, *p;
    char *err;
    size_t errlen;
    int entry;
} px_chr_lex_t;

static int px_chr_fail(px_chr_lex_t *l, const char *at, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(l->err, l->errlen, "position %d (entry %d): %s", (int)(at - l->s) + 1, l->entry, what);
    return -1;
}

static void px_chr_ws(px_chr_lex_t *l)
{
    while (*l->p == ' ' || *l->p == '\t')
        l->p++;
}

static int px_chr_word(px_chr_lex_t *l, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(l->p, w, n) || isalnum((unsigned char)l->p[n]) || l->p[n] == '-')
        return 0;
    l->p += n;
    return 1;
}

/* A byte count: digits, then k, m or g (powers of 1024). */
static int px_chr_num(px_chr_lex_t *l, size_t *v)
{
    const char *at = l->p;
    unsigned long long x = 0;
    if (!isdigit((unsigned char)*l->p))
        return px_chr_fail(l, at, "expected a size in bytes (e.g. 2048 or 8k)");
    while (isdigit((unsigned char)*l->p)) {
        if (x > (1ull << 50))
            return px_chr_fail(l, at, "size too large");
        x = x * 10 + (unsigned)(*l->p++ - '0');
    }
    int sh = 0;
    switch (*l->p) {
    case 'k':
    case 'K':
        sh = 10;
        break;
    case 'm':
    case 'M':
        sh = 20;
        break;
    case 'g':
    case 'G':
        sh = 30;
        break;
    }
    if (sh) {
        l->p++;
        if (x > (1ull << 33))
            return px_chr_fail(l, at, "size too large");
        x <<= sh;
    }
    if (isalnum((unsigned char)*l->p))
        return px_chr_fail(l, l->p, "unexpected '%c' after the size (suffixes: k, m, g)", *l->p);
    *v = (size_t)x;
    return 0;
}

static int px_chr_term(px_chr_lex_t *l, px_chr_rule_t *r)
{
    const char *at = l->p;
    if (px_chr_word(l, "size")) {
        px_chr_ws(l);
        const char *opat = l->p;
        int op;
        if (!strncmp(l->p, "<=", 2))
            op = 0, l->p += 2;
        else if (!strncmp(l->p, ">=", 2))
            op = 1, l->p += 2;
        else if (*l->p == '<')
            op = 2, l->p++;
        else if (*l->p == '>')
            op = 3, l->p++;
        else if (*l->p == '=')
            op = 4, l->p++;
        else
            return px_chr_fail(l, opat, "expected <=, <, >=, > or = after 'size'");
        px_chr_ws(l);
        size_t v = 0;
        if (px_chr_num(l, &v))
            return -1;
        switch (op) {
        case 0:
            if (v < r->hi)
                r->hi = v;
            break;
        case 1:
            if (v > r->lo)
                r->lo = v;
            break;
        case 2:
            if (v == 0)
                return px_chr_fail(l, at, "'size<0' never holds");
            if (v - 1 < r->hi)
                r->hi = v - 1;
            break;
        case 3:
            if (v == (size_t)-1)
                return px_chr_fail(l, at, "size too large");
            if (v + 1 > r->lo)
                r->lo = v + 1;
            break;
        default:
            if (v > r->lo)
                r->lo = v;
            if (v < r->hi)
                r->hi = v;
        }
        if (r->lo > r->hi)
            return px_chr_fail(l, at, "the size conditions of this entry never hold together");
        return 0;
    }
    /* class=coll|p2p and proto=eager|rndv: a key with two values (1, 2) */
    static const struct {
        const char *key, *v1, *v2;
        size_t field;
    } kv[] = {
        {"class", "coll", "p2p", offsetof(px_chr_rule_t, cls)},
        {"proto", "eager", "rndv", offsetof(px_chr_rule_t, proto)},
    };
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        if (!px_chr_word(l, kv[i].key))
            continue;
        uint8_t *f = (uint8_t *)r + kv[i].field;
        px_chr_ws(l);
        if (*l->p++ != '=')
            return px_chr_fail(l, l->p - 1, "expected '=' after '%s'", kv[i].key);
        px_chr_ws(l);
        const char *vat = l->p;
        int c = px_chr_word(l, kv[i].v1) ? 1 : px_chr_word(l, kv[i].v2) ? 2 : 0;
        if (!c)
            return px_chr_fail(l, vat, "%s is '%s' or '%s'", kv[i].key, kv[i].v1, kv[i].v2);
        if (*f && *f != c)
            return px_chr_fail(l, at, "%s=%s and %s=%s never hold together", kv[i].key, kv[i].v1,
                               kv[i].key, kv[i].v2);
        *f = (uint8_t)c;
        return 0;
    }
    return px_chr_fail(l, at, "expected '*', size<op><bytes>, class=coll|p2p or proto=eager|rndv");
}

int px_chr_parse(const char *text, px_chr_table_t *t, char *err, size_t errlen)
{
    px_chr_lex_t l = {.s = text, .p = text, .err = err, .errlen = errlen, .entry = 1};
    t->n = 0;
    if (err && errlen)
        err[0] = 0;
    px_chr_ws(&l);
    if (!*l.p)
        return 0; /* no entries: every message takes the peer's default channel */
    for (;;) {
        px_chr_rule_t r = {.lo = 0, .hi = (size_t)-1};
        px_chr_ws(&l);
        r.pos = (uint16_t)(l.p - l.s + 1);
        if (t->n == PX_CHR_MAX)
            return px_chr_fail(&l, l.p, "more than %d entries", PX_CHR_MAX);
        if (*l.p == '*') {
            l.p++;
        } else {
            for (;;) {
                if (px_chr_term(&l, &r))
                    return -1;
                px_chr_ws(&l);
                if (*l.p != '&')
                    break;
                l.p++;
                px_chr_ws(&l);
            }
        }
        px_chr_ws(&l);
        if (*l.p != ':')
            return px_chr_fail(&l, l.p,
                               *l.p ? "expected '&' or ':' before the channel"
                                    : "the entry has no ':channel'");
        l.p++;
        px_chr_ws(&l);
        const char *cat = l.p;
        size_t n = 0;
        while (isalnum((unsigned char)cat[n]) || cat[n] == '-')
            n++;
        int chan = -1;
        for (int c = 0; c < PX_CHR_N; c++)
            if (strlen(px_chr_names[c]) == n && !strncmp(cat, px_chr_names[c], n))
                chan = c;
        if (chan < 0)
            return px_chr_fail(&l, cat,
                               "unknown channel '%.*s' (shm, udp, tcp, tcp-rndv, "
                               "udp-rndv, udp-zcopy or copy)",
                               (int)(n ? n : 1), n ? cat : " ");
        l.p += n;
        r.chan = (uint8_t)chan;
        if (r.proto == PX_CHR_PROTO_EAGER && (chan == PX_CHR_TCP_RNDV || chan == PX_CHR_UDP_RNDV ||
                                              chan == PX_CHR_COPY || chan == PX_CHR_UDP_ZCOPY))
            return px_chr_fail(&l, cat, "'%s' always uses rendezvous: proto=eager never holds",
                               px_chr_names[chan]);
        t->r[t->n++] = r;
        px_chr_ws(&l);
        if (!*l.p)
            return 0;
        if (*l.p != '|')
            return px_chr_fail(&l, l.p, "expected '|' between entries");
        l.p++;
        l.entry++;
    }
}

void px_chr_format(const px_chr_rule_t *r, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
#define PX_CHR_PUT(...)                                                                            \
    do {                                                                                           \
        int k_ = snprintf(buf + off, off < len ? len - off : 0, __VA_ARGS__);                      \
        if (k_ > 0)                                                                                \
            off += (size_t)k_;                                                                     \
    } while (0)
    const char *sep = "";
    if (r->lo == r->hi) {
        PX_CHR_PUT("size=%zu", r->lo);
        sep = "&";
    } else {
        if (r->lo) {
            PX_CHR_PUT("size>=%zu", r->lo);
            sep = "&";
        }
        if (r->hi != (size_t)-1) {
            PX_CHR_PUT("%ssize<=%zu", sep, r->hi);
            sep = "&";
        }
    }
    if (r->cls) {
        PX_CHR_PUT("%sclass=%s", sep, r->cls == PX_CHR_CLASS_COLL ? "coll" : "p2p");
        sep = "&";
    }
    if (r->proto) {
        PX_CHR_PUT("%sproto=%s", sep, r->proto == PX_CHR_PROTO_EAGER ? "eager" : "rndv");
        sep = "&";
    }
    if (!*sep)
        PX_CHR_PUT("*");
    PX_CHR_PUT(":%s", px_chr_chan_name(r->chan));
#undef PX_CHR_PUT
}

void px_chr_print(FILE *f, const px_chr_table_t *t)
{
    static const char *const what[PX_CHR_N] = {
        [PX_CHR_SHM] = "shared memory (a rank to itself: its own queue)",
        [PX_CHR_UDP] = "datagrams; rendezvous over them above their eager limit",
        [PX_CHR_TCP] = "the connection, once opened; rendezvous over it above its eager limit",
        [PX_CHR_TCP_RNDV] = "rendezvous at any size, data over the connection",
        [PX_CHR_UDP_RNDV] = "rendezvous at any size, data over datagrams",
        [PX_CHR_UDP_ZCOPY] =
            "rendezvous at any size, data over a pooled datagram socket into the buffer",
        [PX_CHR_COPY] = "rendezvous at any size, copied through the message's channel",
    };
    fprintf(f, "%-4s %-34s %-10s %s\n", "#", "condition", "channel", "carries");
    for (int i = 0; i < t->n; i++) {
        char cond[96];
        px_chr_rule_t c = t->r[i];
        px_chr_format(&c, cond, sizeof(cond));
        *strrchr(cond, ':') = 0;
        fprintf(f, "%-4d %-34s %-10s %s\n", i + 1, cond, px_chr_chan_name(c.chan), what[c.chan]);
    }
    fprintf(f, "%-4s %-34s %-10s %s\n", "-", "(no entry applies)", "default",
            "shm on the node, else the connection if open, else datagrams");
}
