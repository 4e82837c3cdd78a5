/* PX_CHANNELS: the ordered rule table that picks, for each message, the
 * channel that carries it. An entry is `condition:channel`; entries are
 * separated by '|'; for each message the first entry whose condition holds
 * and whose channel is allocated to the destination wins (see
 * docs/transports.md). Without an entry that applies, a message takes the
 * peer's default channel: shared memory on the node, else the connection
 * once one is open, else datagrams. */
#ifndef PX_CHAN_RULES_H
#define PX_CHAN_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an entry names. Eager or rendezvous follows the carrier's eager
 * limit unless the channel says rendezvous. */
typedef enum {
    PX_CHR_SHM,       /* shared memory (and a rank to itself) */
    PX_CHR_UDP,       /* the datagram channel */
    PX_CHR_TCP,       /* the connection (allocated once opened) */
    PX_CHR_TCP_RNDV,  /* rendezvous whatever the size, data over the connection */
    PX_CHR_UDP_RNDV,  /* rendezvous whatever the size, data over datagrams */
    PX_CHR_UDP_ZCOPY, /* rendezvous, data over a pooled datagram socket (zcopy.h) */
    PX_CHR_COPY,      /* rendezvous copied through the message's own channel */
    PX_CHR_N
} px_chr_chan_t;

enum { PX_CHR_CLASS_ANY, PX_CHR_CLASS_COLL, PX_CHR_CLASS_P2P };
enum { PX_CHR_PROTO_ANY, PX_CHR_PROTO_EAGER, PX_CHR_PROTO_RNDV };

typedef struct {
    size_t lo, hi; /* the message size is in [lo, hi] */
    uint8_t cls;   /* PX_CHR_CLASS_* */
    uint8_t proto; /* PX_CHR_PROTO_*: against the channel's eager limit */
    uint8_t chan;  /* px_chr_chan_t */
    uint16_t pos;  /* where the entry starts in the text (1-based) */
} px_chr_rule_t;

#define PX_CHR_MAX 32

typedef struct {
    int n;
    px_chr_rule_t r[PX_CHR_MAX];
} px_chr_table_t;

/* Parses `text` into `t`. On error returns -1 and writes into err the
 * 1-based character position and what is wrong there. */
int px_chr_parse(const char *text, px_chr_table_t *t, char *err, size_t errlen);

const char *px_chr_chan_name(int chan);
/* One entry as text, e.g. "size<=2048&class=coll:udp". */
void px_chr_format(const px_chr_rule_t *r, char *buf, size_t len);
/* The table as pxinfo prints it. */
void px_chr_print(FILE *f, const px_chr_table_t *t);

static inline int px_chr_cond(const px_chr_rule_t *r, size_t len, int coll)
{
    return len >= r->lo && len <= r->hi &&
           (r->cls == PX_CHR_CLASS_ANY || (r->cls == PX_CHR_CLASS_COLL) == !!coll);
}

#endif
