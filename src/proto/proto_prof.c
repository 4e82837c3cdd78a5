/* The sections the topology profile counts (PX_PROFILE=topo): what this
 * process sent to each peer, read from the per-peer counters every send
 * already increments (px_proto_isend: a message and its bytes, whatever
 * the channel, collectives' traffic included). Nothing is added to the
 * message path: a section begins with a snapshot of those counters and
 * ends by adding what they grew by since.
 *
 * With a signal (PX_PROFILE_SIGNAL) the counting starts stopped and each
 * signal asks for a toggle; the handler only sets a flag, and the next
 * pass of the progress engine takes the snapshot, so a section's edge
 * falls between two messages, never inside one. */
#include "proto_impl.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

_Atomic int px_proto_prof_req;
static uint64_t *px_prof_base; /* [2 * size]: msgs, bytes when the open section began */
static uint64_t *px_prof_acc;  /* [2 * size]: the closed sections */
static int px_prof_open, px_prof_sections, px_prof_n;

static void px_proto_prof_sig(int sig)
{
    (void)sig;
    atomic_store_explicit(&px_proto_prof_req, 1, memory_order_relaxed);
}

static void px_proto_prof_snap(uint64_t *to, int add)
{
    for (int r = 0; r < px_prof_n; r++) {
        const px_proto_peer_t *p = &px_p.peers[r];
        if (add) {
            to[2 * r] += p->msgs_tx - px_prof_base[2 * r];
            to[2 * r + 1] += p->bytes_tx - px_prof_base[2 * r + 1];
        } else {
            to[2 * r] = p->msgs_tx;
            to[2 * r + 1] = p->bytes_tx;
        }
    }
}

px_status_t px_proto_prof_start(int signo)
{
    if (!px_p.peers)
        return PX_ERR_INVALID_PARAM;
    free(px_prof_base);
    free(px_prof_acc);
    px_prof_n = px_p.boot.size;
    px_prof_base = calloc(2 * (size_t)px_prof_n, sizeof(uint64_t));
    px_prof_acc = calloc(2 * (size_t)px_prof_n, sizeof(uint64_t));
    if (!px_prof_base || !px_prof_acc) {
        px_proto_prof_stop();
        return PX_ERR_NO_MEMORY;
    }
    px_prof_sections = 0;
    px_prof_open = 0;
    if (!signo) {
        px_proto_prof_toggle();
        return PX_OK;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = px_proto_prof_sig;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(signo, &sa, NULL) ? PX_ERR_INVALID_PARAM : PX_OK;
}

void px_proto_prof_toggle(void)
{
    if (!px_prof_base)
        return;
    if (px_prof_open) {
        px_proto_prof_snap(px_prof_acc, 1);
        px_prof_sections++;
    } else {
        px_proto_prof_snap(px_prof_base, 0);
    }
    px_prof_open = !px_prof_open;
}

int px_proto_prof_take(uint64_t *out)
{
    if (!px_prof_base)
        return -1;
    if (atomic_exchange_explicit(&px_proto_prof_req, 0, memory_order_relaxed))
        px_proto_prof_toggle(); /* a signal not yet seen by the progress engine */
    if (px_prof_open)
        px_proto_prof_toggle();
    memcpy(out, px_prof_acc, 2 * (size_t)px_prof_n * sizeof(uint64_t));
    return px_prof_sections;
}

void px_proto_prof_stop(void)
{
    free(px_prof_base);
    free(px_prof_acc);
    px_prof_base = px_prof_acc = NULL;
    px_prof_open = px_prof_sections = px_prof_n = 0;
}
