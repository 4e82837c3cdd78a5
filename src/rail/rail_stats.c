/* Counters: the job's shared segment read by `pxinfo --stats`
 * (PX_STATS=1), and the summary printed at finalize (PX_PROFILE=1). */
#include "rail_impl.h"
#include "rail_policy.h"
#include "../util/tool.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

void px_rail_stats_open(px_rail_t *r, const px_boot_info_t *boot)
{
    snprintf(r->seg_name, sizeof(r->seg_name), "/plexus-%016llx-stats-%d",
             (unsigned long long)boot->job_id, boot->rank);
    r->seg_len = sizeof(px_rail_stats_seg_t) +
                 (size_t)boot->size * PX_NET_MAX_SUB * sizeof(px_rail_stats_entry_t);
    int fd = shm_open(r->seg_name, O_CREAT | O_RDWR | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)r->seg_len) < 0) {
        px_warn("rail", "PX_STATS: cannot create %s; counters only at finalize", r->seg_name);
        if (fd >= 0) {
            close(fd);
            shm_unlink(r->seg_name);
        }
        return;
    }
    void *p = mmap(NULL, r->seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(r->seg_name);
        return;
    }
    r->seg = p;
    r->seg->magic = PX_RAIL_STATS_MAGIC;
    r->seg->rank = boot->rank;
    r->seg->nranks = boot->size;
    r->seg->max_sub = PX_NET_MAX_SUB;
    snprintf(r->seg->policy, sizeof(r->seg->policy), "%s", r->policy->name);
}

void px_rail_stats_close(px_rail_t *r)
{
    if (!r->seg)
        return;
    munmap(r->seg, r->seg_len);
    shm_unlink(r->seg_name);
    r->seg = NULL;
}

_Static_assert(PX_CTR_rail_subchannels_suspect - PX_CTR_rail_subchannels_up == PX_SUB_SUSPECT &&
                   PX_CTR_rail_subchannels_down - PX_CTR_rail_subchannels_up == PX_SUB_DOWN,
               "counters.def: rail_subchannels_<state> rows in the order of PX_SUB_*");

void px_rail_counters_add(const px_rail_t *r, uint64_t *c)
{
    uint64_t now = px_time_ns();
    for (int i = 0; i < r->nvc; i++) {
        const px_rail_vc_t *vc = r->vlist[i];
        for (int k = 0; k < vc->nsub; k++) {
            const px_rail_sub_t *sub = &vc->sub[k];
            const px_rail_sub_stats_t *s = sub->st;
            c[PX_CTR_rail_frames_sent] += s->frames_tx;
            c[PX_CTR_rail_frames_received] += s->frames_rx;
            c[PX_CTR_rail_bytes_sent] += s->bytes_tx;
            c[PX_CTR_rail_bytes_received] += s->bytes_rx;
            c[PX_CTR_rail_acks_sent] += s->acks_tx;
            c[PX_CTR_rail_acks_received] += s->acks_rx;
            c[PX_CTR_rail_stripes] += s->stripes;
            c[PX_CTR_rail_stripe_bytes] += s->stripe_bytes;
            c[PX_CTR_rail_stripe_time] += s->stripe_ns;
            c[PX_CTR_rail_suspects] += s->suspects;
            c[PX_CTR_rail_moves] += s->moves;
            c[PX_CTR_rail_moves_answered] += s->moves_spurious;
            c[PX_CTR_rail_lates] += s->lates;
            c[PX_CTR_rail_downs] += s->downs;
            c[PX_CTR_rail_recoveries] += s->recoveries;
            c[PX_CTR_rail_resent_frames] += s->resent_frames;
            c[PX_CTR_rail_resent_bytes] += s->resent_bytes;
            c[PX_CTR_rail_down_time] += s->down_ns;
            if (sub->state == PX_SUB_DOWN)
                c[PX_CTR_rail_down_time] += px_since(now, sub->down_since);
            c[PX_CTR_rail_subchannels]++;
            c[PX_CTR_rail_subchannels_up + sub->state]++;
            if (vc->nlane > 1) {
                int lane = k / vc->npair;
                c[PX_CTR_rail_lane0_bytes_sent + (lane < 3 ? lane : 3)] += s->bytes_tx;
            }
        }
        if (vc->part_since)
            c[PX_CTR_rail_partition_time] += px_since(now, vc->part_since);
    }
    c[PX_CTR_rail_retransmits_timeout] += r->retx_timeout;
    c[PX_CTR_rail_retransmits_fast] += r->retx_fast;
    c[PX_CTR_rail_retransmits_spurious] += r->retx_spurious;
    c[PX_CTR_rail_duplicates] += r->rx_dup;
    c[PX_CTR_rail_out_of_window] += r->rx_out_of_window;
    c[PX_CTR_rail_window_waits] += r->window_waits;
    c[PX_CTR_rail_resplits] += r->resplits;
    c[PX_CTR_rail_partitions] += r->partitions;
    c[PX_CTR_rail_partition_time] += r->partition_ns;
    c[PX_CTR_rail_released_frames] += r->released;
    c[PX_CTR_rail_released_bytes] += r->released_bytes;
    c[PX_CTR_rail_bulk_moved] += r->bulk_moved;
}

void px_rail_print_stats(px_rail_t *r, int rank)
{
    uint64_t c[PX_CTR_N] = {0};
    px_rail_counters_add(r, c);
    for (int i = 0; i < r->nranks; i++) {
        px_rail_vc_t *vc = r->vcs[i];
        if (!vc)
            continue;
        for (int k = 0; k < vc->nsub; k++) {
            px_rail_sub_stats_t *s = vc->sub[k].st;
            if (!s->frames_tx && !s->frames_rx)
                continue;
            char lane[64] = "";
            if (vc->nlane > 1) {
                lane[0] = ' ';
                px_lane_describe(k / vc->npair, lane + 1, sizeof(lane) - 1);
            }
            fprintf(stderr,
                    "[plexus profile] rank %d -> %d sub %d (%s) policy %s%s weight %.3f frames tx "
                    "%llu rx %llu bytes tx %llu rx %llu stripes %llu stripe_bytes %llu "
                    "mean_stripe_us %.1f acks tx %llu rx %llu state %s down %llu resent %llu "
                    "rtt_us %.1f rttvar_us %.1f rtt_max_us %.1f\n",
                    rank, i, k, vc->sub[k].info.label, r->policy->name, lane,
                    px_rail_vc_weight(vc, k), (unsigned long long)s->frames_tx,
                    (unsigned long long)s->frames_rx, (unsigned long long)s->bytes_tx,
                    (unsigned long long)s->bytes_rx, (unsigned long long)s->stripes,
                    (unsigned long long)s->stripe_bytes,
                    s->stripes ? (double)s->stripe_ns / (double)s->stripes / 1e3 : 0.0,
                    (unsigned long long)s->acks_tx, (unsigned long long)s->acks_rx,
                    px_rail_state_names[vc->sub[k].state], (unsigned long long)s->downs,
                    (unsigned long long)s->resent_frames, vc->sub[k].srtt / 1e3,
                    vc->sub[k].rttvar / 1e3, vc->sub[k].rtt_max / 1e3);
        }
    }
    if (r->lossy)
        fprintf(stderr,
                "[plexus profile] rank %d reliability: retransmitted on timeout %llu fast %llu "
                "duplicates dropped %llu out-of-window dropped %llu small-frame periods %llu "
                "spurious timeouts %llu\n",
                rank, (unsigned long long)r->retx_timeout, (unsigned long long)r->retx_fast,
                (unsigned long long)r->rx_dup, (unsigned long long)r->rx_out_of_window,
                (unsigned long long)r->small_frame_periods, (unsigned long long)r->retx_spurious);
    if (r->released)
        fprintf(stderr,
                "[plexus profile] rank %d completed before acknowledgement: frames %llu bytes %llu "
                "copied while waiting for the receiver %llu\n",
                rank, (unsigned long long)r->released, (unsigned long long)r->released_bytes,
                (unsigned long long)r->prestaged_bytes);
    fprintf(stderr,
            "[plexus profile] rank %d faults: suspect %llu moved %llu answered_after %llu down "
            "%llu recovered %llu failover "
            "frames %llu bytes %llu resplit %llu pieces %llu skipped %llu partitioned %llu "
            "subchannel_down_s %.2f partition_s %.2f bulk_moved %llu bulk_rest_bytes %llu "
            "window_waits %llu late %llu transport %s\n",
            rank, (unsigned long long)c[PX_CTR_rail_suspects],
            (unsigned long long)c[PX_CTR_rail_moves],
            (unsigned long long)c[PX_CTR_rail_moves_answered],
            (unsigned long long)c[PX_CTR_rail_downs], (unsigned long long)c[PX_CTR_rail_recoveries],
            (unsigned long long)c[PX_CTR_rail_resent_frames],
            (unsigned long long)c[PX_CTR_rail_resent_bytes], (unsigned long long)r->resplits,
            (unsigned long long)r->resplit_pieces, (unsigned long long)r->rx_split_skipped,
            (unsigned long long)r->partitions, (double)c[PX_CTR_rail_down_time] / 1e9,
            (double)r->partition_ns / 1e9, (unsigned long long)r->bulk_moved,
            (unsigned long long)r->bulk_rest_bytes, (unsigned long long)r->window_waits,
            (unsigned long long)c[PX_CTR_rail_lates], r->ops->name);
}
