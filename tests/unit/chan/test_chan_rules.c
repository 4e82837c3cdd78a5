/* PX_CHANNELS parser: entries, conditions, channels, the positions of
 * errors, and the conditions each entry evaluates. */
#include "chan/chan_rules.h"
#include "px_unit.h"

#include <string.h>

static px_chr_table_t t;
static char err[256];

static int parse(const char *s) { return px_chr_parse(s, &t, err, sizeof(err)); }

/* parse fails, and the message names `pos` and contains `what` */
static int fails_at(const char *s, int pos, const char *what)
{
    char want[32];
    if (parse(s) == 0)
        return 0;
    snprintf(want, sizeof(want), "position %d ", pos);
    if (strncmp(err, want, strlen(want)) || !strstr(err, what)) {
        fprintf(stderr, "  '%s': got '%s'\n", s, err);
        return 0;
    }
    return 1;
}

static int formats_as(int i, const char *want)
{
    char buf[96];
    px_chr_format(&t.r[i], buf, sizeof(buf));
    if (strcmp(buf, want))
        fprintf(stderr, "  entry %d: '%s', not '%s'\n", i, buf, want);
    return !strcmp(buf, want);
}

int main(void)
{
    /* the example, in order */
    CHECK(parse("size<=2048:shm|size<=8192:udp|*:tcp-rndv|*:udp-zcopy|*:copy") == 0);
    CHECK(t.n == 5);
    CHECK(t.r[0].chan == PX_CHR_SHM && t.r[0].lo == 0 && t.r[0].hi == 2048);
    CHECK(t.r[1].chan == PX_CHR_UDP && t.r[1].hi == 8192);
    CHECK(t.r[2].chan == PX_CHR_TCP_RNDV && t.r[2].lo == 0 && t.r[2].hi == (size_t)-1);
    CHECK(t.r[3].chan == PX_CHR_UDP_ZCOPY && t.r[4].chan == PX_CHR_COPY);
    CHECK(t.r[0].pos == 1 && t.r[1].pos == 16 && t.r[2].pos == 31);
    CHECK(formats_as(0, "size<=2048:shm") && formats_as(2, "*:tcp-rndv"));

    /* every operator, suffixes, blanks, several terms */
    CHECK(parse(" size > 1k & size < 64K & class=coll : tcp | size>=2m&proto=rndv:udp-rndv |"
                "size=0:udp|size<=1g&class=p2p&proto=eager:udp") == 0);
    CHECK(t.n == 4);
    CHECK(t.r[0].lo == 1025 && t.r[0].hi == 65535 && t.r[0].cls == PX_CHR_CLASS_COLL);
    CHECK(t.r[1].lo == 2u << 20 && t.r[1].proto == PX_CHR_PROTO_RNDV);
    CHECK(t.r[2].lo == 0 && t.r[2].hi == 0);
    CHECK(t.r[3].hi == 1u << 30 && t.r[3].cls == PX_CHR_CLASS_P2P &&
          t.r[3].proto == PX_CHR_PROTO_EAGER);
    CHECK(formats_as(0, "size>=1025&size<=65535&class=coll:tcp"));
    CHECK(formats_as(2, "size=0:udp"));

    /* conditions */
    CHECK(parse("size>1k&size<=4k&class=coll:udp") == 0);
    CHECK(!px_chr_cond(&t.r[0], 1024, 1) && px_chr_cond(&t.r[0], 1025, 1));
    CHECK(px_chr_cond(&t.r[0], 4096, 1) && !px_chr_cond(&t.r[0], 4097, 1));
    CHECK(!px_chr_cond(&t.r[0], 2048, 0));
    CHECK(parse("class=p2p:udp") == 0 && px_chr_cond(&t.r[0], 5, 0) && !px_chr_cond(&t.r[0], 5, 1));

    /* empty: no entries, every message on the default channel */
    CHECK(parse("") == 0 && t.n == 0);
    CHECK(parse("   ") == 0 && t.n == 0);

    /* errors name the position and the problem */
    CHECK(fails_at("size<=2k:udp|*:tcq", 16, "unknown channel 'tcq'"));
    CHECK(fails_at("size<=2k:udp|size>>2k:tcp", 19, "expected a size"));
    CHECK(fails_at("size<=2k", 9, "no ':channel'"));
    CHECK(fails_at("*:udp||*:tcp", 7, "expected '*'"));
    CHECK(fails_at("*:udp|", 7, "expected '*'"));
    CHECK(fails_at("*:udp *:tcp", 7, "expected '|'"));
    CHECK(fails_at("len<5:udp", 1, "expected '*'"));
    CHECK(fails_at("size~5:udp", 5, "expected <=, <"));
    CHECK(fails_at("size<=4x:udp", 8, "after the size"));
    CHECK(fails_at("size>8k&size<4k:udp", 9, "never hold"));
    CHECK(fails_at("size<0:udp", 1, "never holds"));
    CHECK(fails_at("class=all:udp", 7, "class is"));
    CHECK(fails_at("class=coll&class=p2p:udp", 12, "never hold"));
    CHECK(fails_at("proto=eager:tcp-rndv", 13, "always uses rendezvous"));
    CHECK(fails_at("size<=99999999999999999999:udp", 7, "too large"));
    CHECK(fails_at("*:", 3, "unknown channel"));

    /* at most PX_CHR_MAX entries */
    char many[PX_CHR_MAX * 8 + 16] = "";
    for (int i = 0; i <= PX_CHR_MAX; i++)
        strcat(many, i ? "|*:udp" : "*:udp");
    CHECK(parse(many) != 0 && strstr(err, "more than"));
    return px_unit_report();
}
