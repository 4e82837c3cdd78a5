/* The udp transport's bulk transfers (udp-zcopy) over loopback inside one
 * process: a receive socket from the pool, strangers' and malformed
 * datagrams dropped and counted, an out-of-order one not placed, a batch
 * that moved on and then saw a gap reporting its new point twice, then a
 * real transfer of several windows that lands in the buffer intact, with
 * the receiver's progress delivered to the sender by hand as the layers
 * above would; cancelling a transfer; an empty pool. */
#include "net/udp/udp_bulk.h"
#include "px_unit.h"
#include "util/param.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct __attribute__((packed)) {
    uint32_t magic, len;
    uint64_t token, off;
} hdr_t;
#define MAGIC 0x5a435058u

static int recv_done, send_done;
static px_status_t recv_st, send_st;
static void *sender_req = (void *)0x5e4d;
static uint64_t last_ack = (uint64_t)-1;
static uint64_t acks[8];
static int nacks;

static px_udp_bulk_t *bulk;
static char recv_owner, send_owner;

static void on_progress(void *owner, void *arg, uint64_t got)
{
    (void)arg;
    if (owner != &recv_owner)
        return;
    last_ack = got;
    if (nacks < 8)
        acks[nacks] = got;
    nacks++;
    px_udp_bulk_acked(bulk, sender_req, got);
}
static void on_done(void *owner, void *arg, px_status_t st)
{
    (void)arg;
    if (owner == &recv_owner) {
        recv_done++;
        recv_st = st;
    } else {
        send_done++;
        send_st = st;
    }
}

static void send_raw(int fd, uint16_t port, const void *d, size_t n)
{
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    sendto(fd, d, n, 0, (struct sockaddr *)&to, sizeof(to));
}

static void dgram(int fd, uint16_t port, uint32_t magic, uint32_t len, uint64_t token, uint64_t off,
                  size_t real_len, char fill)
{
    char b[2048];
    hdr_t h = {magic, len, token, off};
    memcpy(b, &h, sizeof(h));
    memset(b + sizeof(h), fill, real_len);
    send_raw(fd, port, b, sizeof(h) + real_len);
}

/* the real data at off, as the sender would send it */
static void piece(int fd, const px_net_bulk_offer_t *o, const char *src, uint64_t off)
{
    char b[2048];
    hdr_t h = {MAGIC, o->dgram, o->token, off};
    memcpy(b, &h, sizeof(h));
    memcpy(b + sizeof(h), src + off, o->dgram);
    send_raw(fd, o->port, b, sizeof(h) + o->dgram);
}

int main(void)
{
    px_param_init();
    static const px_net_rx_ops_t ops = {.bulk_progress = on_progress, .bulk_done = on_done};
    bulk = px_udp_bulk_open(&ops);
    CHECK(bulk != NULL);
    const uint32_t lo = htonl(INADDR_LOOPBACK);
    enum { LEN = 3 << 20 };
    char *src = malloc(LEN), *dst = malloc(LEN);
    for (size_t i = 0; i < LEN; i++)
        src[i] = (char)(i * 131 + (i >> 12));
    memset(dst, 0, LEN);

    px_net_bulk_offer_t o;
    CHECK(px_udp_bulk_recv(bulk, &recv_owner, lo, 1472, dst, LEN, (void *)1, &o) == PX_OK);
    CHECK(o.port != 0 && o.token != 0 && o.dgram == 1472 - sizeof(hdr_t) && o.window > 0);
    CHECK(px_udp_bulk_busy(bulk) == 1);

    /* strangers and malformed datagrams: nothing placed, each counted */
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    send_raw(fd, o.port, "tiny", 4);                            /* truncated header */
    dgram(fd, o.port, 0xdeadbeef, 100, o.token, 0, 100, 'm');   /* wrong magic */
    dgram(fd, o.port, MAGIC, 100, o.token ^ 1, 0, 100, 't');    /* wrong token */
    dgram(fd, o.port, MAGIC, 200, o.token, 0, 100, 'l');        /* length mismatch */
    dgram(fd, o.port, MAGIC, 100, o.token, LEN - 50, 100, 'o'); /* beyond the buffer */
    dgram(fd, o.port, MAGIC, 0, o.token, 0, 0, 'z');            /* empty */
    dgram(fd, o.port, MAGIC, 100, o.token, 1440, 100, 'g');     /* after a gap */
    for (int i = 0;
         i < 20 && px_udp_bulk_stats(bulk)->rx_bad + px_udp_bulk_stats(bulk)->rx_dropped < 7; i++) {
        px_udp_bulk_progress(bulk);
        usleep(1000);
    }
    CHECK(px_udp_bulk_stats(bulk)->rx_bad == 6);
    CHECK(px_udp_bulk_stats(bulk)->rx_dropped == 1);
    CHECK(last_ack == 0); /* the gap asks the sender to go back to 0 */
    /* (the kernel wrote them where in-order data would go; nothing was
     * accepted, and the transfer below overwrites them) */
    CHECK(recv_done == 0);

    /* a batch that moves on and then sees a gap: the report of the new
     * point is repeated at once, which is the sender's signal to go back
     * there (one report would read as data still under way) */
    nacks = 0;
    piece(fd, &o, src, 0);           /* in order */
    piece(fd, &o, src, 2 * o.dgram); /* the one before it is lost */
    for (int i = 0; i < 20 && px_udp_bulk_stats(bulk)->rx_dropped < 2; i++) {
        px_udp_bulk_progress(bulk);
        usleep(1000);
    }
    CHECK(px_udp_bulk_stats(bulk)->rx_dropped == 2);
    CHECK(nacks == 2 && acks[0] == o.dgram && acks[1] == o.dgram);
    piece(fd, &o, src, 2 * o.dgram); /* the same gap: no more reports */
    for (int i = 0; i < 20 && px_udp_bulk_stats(bulk)->rx_dropped < 3; i++) {
        px_udp_bulk_progress(bulk);
        usleep(1000);
    }
    CHECK(px_udp_bulk_stats(bulk)->rx_dropped == 3 && nacks == 2);
    /* the rest comes from the sender below, which starts at 0: the
     * receiver drops offsets below its point and waits for the second piece */

    /* the transfer itself: several windows, acknowledged by hand */
    CHECK(px_udp_bulk_send(bulk, &send_owner, lo, lo, &o, src, LEN, sender_req) == PX_OK);
    for (int i = 0; i < 200000 && !(recv_done && send_done); i++)
        px_udp_bulk_progress(bulk);
    CHECK(recv_done == 1 && recv_st == PX_OK);
    CHECK(send_done == 1 && send_st == PX_OK);
    CHECK(memcmp(src, dst, LEN) == 0);
    CHECK(px_udp_bulk_stats(bulk)->rx_bytes == LEN && px_udp_bulk_stats(bulk)->tx_bytes == LEN);
    CHECK(px_udp_bulk_stats(bulk)->rx_inplace > 0);
    CHECK(px_udp_bulk_busy(bulk) == 0);

    /* a late datagram of the finished transfer on a reused socket is a stranger */
    uint64_t old = o.token;
    CHECK(px_udp_bulk_recv(bulk, &recv_owner, lo, 1472, dst, 1000, (void *)2, &o) == PX_OK);
    CHECK(o.token != old);
    uint64_t bad0 = px_udp_bulk_stats(bulk)->rx_bad;
    dgram(fd, o.port, MAGIC, 100, old, 0, 100, 'x');
    for (int i = 0; i < 20 && px_udp_bulk_stats(bulk)->rx_bad == bad0; i++) {
        px_udp_bulk_progress(bulk);
        usleep(1000);
    }
    CHECK(px_udp_bulk_stats(bulk)->rx_bad == bad0 + 1);
    /* cancelled: no upcall, nothing more read, the socket free again */
    CHECK(px_udp_bulk_cancel(bulk, (void *)2) == 0);
    CHECK(px_udp_bulk_busy(bulk) == 0);
    CHECK(px_udp_bulk_cancel(bulk, (void *)2) == 0); /* unknown by now */
    dgram(fd, o.port, MAGIC, 100, o.token, 0, 100, 'c');
    for (int i = 0; i < 20; i++) {
        px_udp_bulk_progress(bulk);
        usleep(1000);
    }
    CHECK(recv_done == 1);
    /* a sender cancelled halfway: what the receiver acknowledged so far */
    char *half = malloc(LEN);
    CHECK(px_udp_bulk_recv(bulk, &recv_owner, lo, 1472, half, LEN, (void *)4, &o) == PX_OK);
    last_ack = 0;
    CHECK(px_udp_bulk_send(bulk, &send_owner, lo, lo, &o, src, LEN, sender_req) == PX_OK);
    for (int i = 0; i < 200000 && last_ack < LEN / 4; i++)
        px_udp_bulk_progress(bulk);
    uint64_t acked = px_udp_bulk_cancel(bulk, sender_req);
    CHECK(acked >= LEN / 4 && acked < LEN);
    uint64_t in_place = px_udp_bulk_cancel(bulk, (void *)4);
    CHECK(in_place >= acked && memcmp(src, half, in_place) == 0);
    CHECK(px_udp_bulk_busy(bulk) == 0 && send_done == 1 && recv_done == 1);
    free(half);

    /* an empty pool: no socket, the caller copies instead */
    px_udp_bulk_close(bulk, 0, 0);
    bulk = px_udp_bulk_open(&ops);
    px_params.udp_zcopy_pool = 0;
    CHECK(px_udp_bulk_recv(bulk, &recv_owner, lo, 1472, dst, 1000, (void *)3, &o) == PX_ERR_BUSY);
    CHECK(px_udp_bulk_stats(bulk)->no_socket == 1);
    close(fd);
    px_udp_bulk_close(bulk, 0, 0);
    free(src);
    free(dst);
    return px_unit_report();
}
