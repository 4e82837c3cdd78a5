/* Replays a communication schedule on a fabric in SimGrid (s4u).
 *
 *   topo_sim FABRIC SCHEDULE.json [--bytes N] [--latency S] [--loopback BPS]
 *
 * FABRIC is a Plexus fabric description (Plexus JSON, ibnetdiscover output,
 * Slurm's topology.conf), loaded by Plexus's own model (src/topo): every
 * link of it becomes a split-duplex SimGrid link at its rate, and the route
 * between two hosts is the one the model gives (its forwarding tables or
 * its computed min-hop, spread routes), link by link in its direction.
 * Ranks on one host talk over a loopback link.
 *
 * SCHEDULE is one of
 *   {"kind":"alltoall","algorithm":..,"nranks":N,"hosts":[...],"steps":[[[src,dst],..],..]}
 *     every step, each ordered exchange src->dst of one block (--bytes);
 *     a rank starts its step k+1 when its own exchanges of step k are done
 *     (its send, and the blocks of step k addressed to it)
 *   {"kind":"bcast","algorithm":..,"root":r,"nranks":N,"hosts":[...],"edges":[[p,c],..]}
 *     tree edges; a rank forwards (to its children at once, in the order
 *     of the edges) once it has received (--bytes)
 * hosts[i] is rank i's host, by name in the fabric.
 *
 * Prints one JSON line: the simulated time and what building took. */
#include <simgrid/s4u.hpp>

#include <jansson.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "topo/topo_impl.h"
}

namespace sg4 = simgrid::s4u;

static std::vector<int> rank_host;               /* fabric host of each rank */
static std::vector<std::vector<int>> steps_src;  /* alltoall: per rank, per step: dsts */
static std::vector<std::vector<int>> steps_recv; /* per rank, per step: how many arrive */
static std::vector<std::vector<int>> children;   /* bcast */
static std::vector<int> parent;
static double block_bytes = 16384;
static int nranks;

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static sg4::Mailbox *box(int r) { return sg4::Mailbox::by_name(std::to_string(r)); }

/* Alltoall. Each rank publishes the step it is in; an exchange of step k
 * starts when both ends are in step k (the receiver has posted its
 * receive), goes host to host over the route, and counts at the
 * receiver; a rank leaves step k when its send is done and all the blocks
 * of step k addressed to it have arrived. (A block to r of step k can
 * only arrive while r is in step k, so one count per rank suffices.) */
struct px_rank_state {
    int step = -1, got = 0;
    sg4::MutexPtr m;
    sg4::ConditionVariablePtr cv;
};
static std::vector<px_rank_state> state;
static std::vector<sg4::Host *> rank_sghost;
static int finished;

static void a2a_rank(int r)
{
    px_rank_state &me = state[r];
    for (size_t k = 0; k < steps_src[r].size(); k++) {
        int step = (int)k;
        {
            std::unique_lock<sg4::Mutex> lk(*me.m);
            me.step = step;
            me.cv->notify_all();
        }
        int dst = steps_src[r][k];
        if (dst >= 0) {
            px_rank_state &to = state[dst];
            {
                std::unique_lock<sg4::Mutex> lk(*to.m);
                to.cv->wait(lk, [&] { return to.step >= step; });
            }
            sg4::Comm::sendto(rank_sghost[r], rank_sghost[dst], (uint64_t)block_bytes);
            std::unique_lock<sg4::Mutex> lk(*to.m);
            to.got++;
            to.cv->notify_all();
        }
        std::unique_lock<sg4::Mutex> lk(*me.m);
        me.cv->wait(lk, [&] { return me.got >= steps_recv[r][k]; });
        me.got = 0;
    }
    finished++;
}

static void bcast_rank(int r)
{
    static char payload;
    if (parent[r] >= 0)
        box(r)->get<char>();
    std::vector<sg4::CommPtr> comms;
    for (int c : children[r])
        comms.push_back(box(c)->put_async(&payload, (uint64_t)block_bytes));
    sg4::Comm::wait_all(comms);
    finished++;
}

static void die(const char *fmt, const char *a)
{
    fprintf(stderr, "topo_sim: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, "\n");
    exit(1);
}

int main(int argc, char **argv)
{
    sg4::Engine e(&argc, argv);
    double latency = 1e-6, loopback = 8e10;
    const char *fabric = nullptr, *sched = nullptr;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
            block_bytes = atof(argv[++i]);
        else if (!strcmp(argv[i], "--latency") && i + 1 < argc)
            latency = atof(argv[++i]);
        else if (!strcmp(argv[i], "--loopback") && i + 1 < argc)
            loopback = atof(argv[++i]);
        else if (!fabric)
            fabric = argv[i];
        else
            sched = argv[i];
    }
    if (!fabric || !sched)
        die("%s", "usage: topo_sim FABRIC SCHEDULE.json [--bytes N] [--latency S] [--loopback "
                  "BPS]");
    double t0 = now();
    char err[512];
    px_topo_t *t;
    if (px_topo_load(fabric, &t, err, sizeof(err)) != PX_OK)
        die("%s", err);
    double t_load = now() - t0;

    json_error_t je;
    json_t *root = json_load_file(sched, 0, &je);
    if (!root)
        die("cannot read the schedule: %s", je.text);
    const char *kind = json_string_value(json_object_get(root, "kind"));
    json_t *hosts = json_object_get(root, "hosts");
    nranks = (int)json_integer_value(json_object_get(root, "nranks"));
    if (!kind || !json_is_array(hosts) || (int)json_array_size(hosts) != nranks)
        die("%s", "the schedule needs kind, nranks and nranks hosts");
    rank_host.resize(nranks);
    std::vector<int> used; /* fabric hosts in use */
    std::vector<int> is_used(px_topo_num_hosts(t), 0);
    for (int r = 0; r < nranks; r++) {
        const char *h = json_string_value(json_array_get(hosts, r));
        int hi = h ? px_topo_host_find(t, h) : -1;
        if (hi < 0)
            die("host %s is not in the fabric", h ? h : "(none)");
        rank_host[r] = hi;
        if (!is_used[hi]++)
            used.push_back(hi);
    }

    /* the platform: hosts, the fabric's links, routes from the model */
    double t1 = now();
    auto *zone = sg4::create_full_zone("fabric");
    std::vector<sg4::Host *> sh(px_topo_num_hosts(t), nullptr);
    std::vector<sg4::Link *> lo(px_topo_num_hosts(t), nullptr);
    for (int h : used) {
        sh[h] = zone->create_host(px_topo_host_name(t, h), 1e9);
        lo[h] = zone->create_link(std::string("lo-") + px_topo_host_name(t, h), loopback / 8)
                    ->set_latency(latency / 10)
                    ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    }
    std::vector<sg4::SplitDuplexLink *> links(t->nlinks);
    for (int l = 0; l < t->nlinks; l++) {
        double rate = t->links[l].rate ? (double)t->links[l].rate : 1e10;
        links[l] = zone->create_split_duplex_link("l" + std::to_string(l), rate / 8);
        links[l]->set_latency(latency / 4);
    }
    std::vector<int> path(t->nswitches + 2);
    size_t nroutes = 0;
    for (int a : used)
        for (int b : used) {
            std::vector<sg4::LinkInRoute> route;
            if (a == b) {
                route.emplace_back(lo[a]);
            } else {
                int n = px_topo_path_links(t, a, b, 0, 0, path.data(), (int)path.size());
                if (n <= 0)
                    die("no route from %s", px_topo_host_name(t, a));
                int cur = t->hosts[a];
                for (int k = 0; k < n; k++) {
                    const px_topo_link_t *l = &t->links[path[k]];
                    int up = l->v[0] == cur;
                    route.emplace_back(links[path[k]], up ? sg4::LinkInRoute::Direction::UP
                                                          : sg4::LinkInRoute::Direction::DOWN);
                    cur = l->v[up ? 1 : 0];
                }
            }
            zone->add_route(sh[a]->get_netpoint(), sh[b]->get_netpoint(), nullptr, nullptr, route,
                            false);
            nroutes++;
        }
    zone->seal();
    double t_platform = now() - t1;

    /* the schedule */
    if (!strcmp(kind, "alltoall")) {
        json_t *steps = json_object_get(root, "steps");
        size_t ns = json_array_size(steps);
        steps_src.assign(nranks, std::vector<int>(ns, -1));
        steps_recv.assign(nranks, std::vector<int>(ns, 0));
        for (size_t k = 0; k < ns; k++) {
            json_t *step = json_array_get(steps, k);
            for (size_t i = 0; i < json_array_size(step); i++) {
                json_t *x = json_array_get(step, i);
                int s = (int)json_integer_value(json_array_get(x, 0));
                int d = (int)json_integer_value(json_array_get(x, 1));
                if (s < 0 || s >= nranks || d < 0 || d >= nranks || steps_src[s][k] >= 0)
                    die("%s", "alltoall step: each rank sends at most one block a step");
                steps_src[s][k] = d;
                steps_recv[d][k]++;
            }
        }
        state.resize(nranks);
        rank_sghost.resize(nranks);
        for (int r = 0; r < nranks; r++) {
            state[r].m = sg4::Mutex::create();
            state[r].cv = sg4::ConditionVariable::create();
            rank_sghost[r] = sh[rank_host[r]];
        }
        for (int r = 0; r < nranks; r++)
            sg4::Actor::create("r" + std::to_string(r), sh[rank_host[r]], a2a_rank, r);
    } else if (!strcmp(kind, "bcast")) {
        json_t *edges = json_object_get(root, "edges");
        children.assign(nranks, {});
        parent.assign(nranks, -1);
        for (size_t i = 0; i < json_array_size(edges); i++) {
            json_t *x = json_array_get(edges, i);
            int p = (int)json_integer_value(json_array_get(x, 0));
            int c = (int)json_integer_value(json_array_get(x, 1));
            if (p < 0 || p >= nranks || c < 0 || c >= nranks || parent[c] >= 0)
                die("%s", "bcast edges: a tree over the ranks");
            children[p].push_back(c);
            parent[c] = p;
        }
        for (int r = 0; r < nranks; r++)
            sg4::Actor::create("r" + std::to_string(r), sh[rank_host[r]], bcast_rank, r);
    } else {
        die("unknown kind %s", kind);
    }
    double t2 = now();
    e.run();
    if (finished != nranks) {
        fprintf(stderr, "topo_sim: %d of %d ranks finished (a deadlock in the schedule)\n",
                finished, nranks);
        return 1;
    }
    printf("{\"kind\": \"%s\", \"algorithm\": \"%s\", \"nranks\": %d, \"hosts\": %zu, "
           "\"bytes\": %.0f, \"time_s\": %.9g, \"load_s\": %.6f, \"platform_s\": %.6f, "
           "\"routes\": %zu, \"simulate_s\": %.3f}\n",
           kind, json_string_value(json_object_get(root, "algorithm")), nranks, used.size(),
           block_bytes, sg4::Engine::get_clock(), t_load, t_platform, nroutes, now() - t2);
    json_decref(root);
    px_topo_free(t);
    return 0;
}
