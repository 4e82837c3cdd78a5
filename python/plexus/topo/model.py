"""The fabric model: hosts, switches, links with rates, routes, switch clusters.

The same model as src/topo in C, written again from the file formats: a graph
of vertices (hosts and switches) whose ports are cabled by links. Routes come
from a switch's forwarding table when the description has one, otherwise they
are computed as pxfab routes its fabrics: destination-based, along a shortest
path that never turns up after going down, and among equal candidates the one
at (destination host index + path index) modulo their number, in the natural
order of the neighbours' names.

A hop is a switch on the path: hosts on one switch are 1 hop apart.
"""

import re

INF = float("inf")


class TopoError(Exception):
    pass


def natural_key(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


class Vertex:
    def __init__(self, name, is_host, index, level=None):
        self.name = name
        self.is_host = is_host
        self.index = index
        self.level = level
        self.plane = None
        self.ports = []       # [name, link index or None]
        self.fwd = {}         # (host, rail, path) -> port index


class Link:
    def __init__(self, va, pa, vb, pb, rate):
        self.v = (va, vb)
        self.p = (pa, pb)
        self.rate = rate or 0


class Fabric:
    def __init__(self, fmt):
        self.format = fmt
        self.v = []
        self.hosts = []
        self.switches = []
        self.links = []
        self._host_names = {}
        self._switch_names = {}
        self._ready = False
        self._updn = {}
        self._clusters = None

    # ---- building -------------------------------------------------------

    def add_host(self, name):
        return self._add(name, True, None)

    def add_switch(self, name, level=None):
        return self._add(name, False, level)

    def _add(self, name, is_host, level):
        names = self._host_names if is_host else self._switch_names
        if name in names:
            v = names[name]
            if not is_host and level is not None:
                self.v[v].level = level
            return v
        lst = self.hosts if is_host else self.switches
        self.v.append(Vertex(name, is_host, len(lst), level))
        names[name] = len(self.v) - 1
        lst.append(len(self.v) - 1)
        self._ready = False
        self._clusters = None
        return len(self.v) - 1

    def add_port(self, v, name):
        for i, (n, _) in enumerate(self.v[v].ports):
            if n == name:
                return i
        self.v[v].ports.append([name, None])
        return len(self.v[v].ports) - 1

    def connect(self, va, pa, vb, pb, rate=0):
        la, lb = self.v[va].ports[pa][1], self.v[vb].ports[pb][1]
        if la is not None or lb is not None:
            l = self.links[la if la is not None else lb]
            same = la == lb and {(l.v[0], l.p[0]), (l.v[1], l.p[1])} == {(va, pa), (vb, pb)}
            if not same:
                raise TopoError(f"a port of {self.v[va].name}-{self.v[vb].name} is cabled twice")
            if not l.rate:
                l.rate = rate or 0
            return
        self.links.append(Link(va, pa, vb, pb, rate))
        self.v[va].ports[pa][1] = len(self.links) - 1
        self.v[vb].ports[pb][1] = len(self.links) - 1
        self._ready = False
        self._clusters = None

    def switch_vertex(self, name):
        return self._switch_names.get(name)

    def host_vertex(self, name):
        return self._host_names.get(name)

    # ---- lookups --------------------------------------------------------

    def host_names(self):
        return [self.v[h].name for h in self.hosts]

    def host_name(self, h):
        return self.v[self.hosts[h]].name

    def switch_name(self, s):
        return self.v[self.switches[s]].name

    def host_find(self, name):
        """Host index of a name (a name with a domain matches its first label), or None."""
        v = self._host_names.get(name)
        if v is None and "." in name and not name.startswith("."):
            v = self._host_names.get(name.split(".", 1)[0])
        return None if v is None else self.v[v].index

    def host(self, name_or_index):
        if isinstance(name_or_index, int):
            return name_or_index
        h = self.host_find(name_or_index)
        if h is None:
            raise TopoError(f"host {name_or_index!r} is not in the fabric")
        return h

    def peer(self, v, port):
        l = self.v[v].ports[port][1]
        if l is None:
            return None, None
        k = self.links[l]
        side = 1 if (k.v[0] == v and k.p[0] == port) else 0
        return k.v[side], k.p[side]

    def host_leaf(self, h):
        hv = self.hosts[h]
        for p in range(len(self.v[hv].ports)):
            o, _ = self.peer(hv, p)
            if o is not None and not self.v[o].is_host:
                return self.v[o].index
        return None

    # ---- routes ---------------------------------------------------------

    def _prepare(self):
        if self._ready:
            return
        level = {}
        queue = []
        for s, sv in enumerate(self.switches):
            for p in range(len(self.v[sv].ports)):
                o, _ = self.peer(sv, p)
                if o is not None and self.v[o].is_host:
                    level[s] = 0
                    queue.append(s)
                    break
        qi = 0
        while qi < len(queue):
            s = queue[qi]
            qi += 1
            sv = self.switches[s]
            for p in range(len(self.v[sv].ports)):
                o, _ = self.peer(sv, p)
                if o is not None and not self.v[o].is_host and self.v[o].index not in level:
                    level[self.v[o].index] = level[s] + 1
                    queue.append(self.v[o].index)
        for s, sv in enumerate(self.switches):
            if self.v[sv].level is None or self.v[sv].level < 0:
                self.v[sv].level = level.get(s, 0)
            self.v[sv].plane = None
        for s, sv in enumerate(self.switches):
            if self.v[sv].plane is not None:
                continue
            self.v[sv].plane = s
            stack = [sv]
            while stack:
                cur = stack.pop()
                for p in range(len(self.v[cur].ports)):
                    o, _ = self.peer(cur, p)
                    if o is not None and not self.v[o].is_host and self.v[o].plane is None:
                        self.v[o].plane = s
                        stack.append(o)
        # up/down order: higher level is up; between equals the lower index
        order = sorted(range(len(self.switches)),
                       key=lambda s: (self.v[self.switches[s]].level, -s))
        self._rank = [0] * len(self.switches)
        for i, s in enumerate(order):
            self._rank[s] = i
        self._updn = {}
        self._ready = True

    def _up(self, a, b):
        return self._rank[b] > self._rank[a]

    def _switch_neighbours(self, s):
        sv = self.switches[s]
        for p in range(len(self.v[sv].ports)):
            o, _ = self.peer(sv, p)
            if o is not None and not self.v[o].is_host:
                yield p, self.v[o].index

    def _distances(self, d):
        if d in self._updn:
            return self._updn[d]
        n = len(self.switches)
        down = [INF] * n
        down[d] = 0
        queue = [d]
        qi = 0
        while qi < len(queue):
            s = queue[qi]
            qi += 1
            for _, o in self._switch_neighbours(s):
                if down[o] == INF and self._up(s, o):
                    down[o] = down[s] + 1
                    queue.append(o)
        anyd = [INF] * n
        for s in sorted(range(n), key=lambda s: -self._rank[s]):
            anyd[s] = down[s]
            for _, o in self._switch_neighbours(s):
                if self._up(s, o) and anyd[o] + 1 < anyd[s]:
                    anyd[s] = anyd[o] + 1
        self._updn[d] = (down, anyd)
        return self._updn[d]

    def _next_port(self, sv, dst, rail, path, dsw, dport):
        x = self.v[sv]
        if x.fwd:
            return x.fwd.get((dst, rail, path))
        if sv == dsw:
            return dport
        down, anyd = self._distances(self.v[dsw].index)
        s = x.index
        descend = down[s] != INF
        if not descend and anyd[s] == INF:
            return None
        want = (down[s] if descend else anyd[s]) - 1
        cand = [p for p, o in self._switch_neighbours(s)
                if (self._up(o, s) and down[o] == want if descend
                    else self._up(s, o) and anyd[o] == want)]
        if not cand:
            return None
        cand.sort(key=lambda p: natural_key(self.v[self.peer(sv, p)[0]].name))
        return cand[(dst + path) % len(cand)]

    def walk(self, a, b, rail=0, path=0):
        """(switch indices, link indices) of the route from host a to host b, or None."""
        a, b = self.host(a), self.host(b)
        if a == b:
            return [], []
        self._prepare()
        av, bv = self.hosts[a], self.hosts[b]
        if rail >= len(self.v[bv].ports):
            return None
        dsw, dport = self.peer(bv, rail)
        if dsw is None or self.v[dsw].is_host:
            return None
        plane = self.v[dsw].plane
        sport = None
        cands = ([rail] if rail < len(self.v[av].ports) else []) + list(range(len(self.v[av].ports)))
        for p in cands:
            o, _ = self.peer(av, p)
            if o is not None and not self.v[o].is_host and self.v[o].plane == plane:
                sport = p
                break
        if sport is None:
            return None
        cur = self.peer(av, sport)[0]
        sws, links = [], [self.v[av].ports[sport][1]]
        while True:
            if len(sws) > len(self.switches):
                return None
            sws.append(self.v[cur].index)
            port = self._next_port(cur, b, rail, path, dsw, dport)
            if port is None or port >= len(self.v[cur].ports):
                return None
            nxt, _ = self.peer(cur, port)
            if nxt is None:
                return None
            links.append(self.v[cur].ports[port][1])
            if nxt == bv:
                return sws, links
            if self.v[nxt].is_host:
                return None
            cur = nxt

    def hops(self, a, b, rail=0, path=0):
        r = self.walk(a, b, rail, path)
        return -1 if r is None else len(r[0])

    def path(self, a, b, rail=0, path=0):
        """Switch names from a to b, or None without a route."""
        r = self.walk(a, b, rail, path)
        return None if r is None else [self.switch_name(s) for s in r[0]]

    # ---- switch clusters ------------------------------------------------

    def _cluster(self):
        if self._clusters is not None:
            return self._clusters
        from .cluster import cluster
        n = len(self.hosts)
        dist = [[0] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                h = self.hops(i, j)
                dist[i][j] = dist[j][i] = INF if h < 0 else h
        self._clusters = cluster(dist)
        return self._clusters

    def depth(self):
        return self._cluster()[0]

    def cluster_of(self, host, level):
        depth, ids, _ = self._cluster()
        return ids[min(level, depth)][self.host(host)]

    def num_clusters(self, level, hosts=None):
        depth, ids, counts = self._cluster()
        level = min(level, depth)
        if hosts is None:
            return counts[level]
        return len({ids[level][self.host(h)] for h in hosts})

    def clusters(self, level):
        """The clusters at a level, each a list of host names."""
        depth, ids, counts = self._cluster()
        out = [[] for _ in range(counts[min(level, depth)])]
        for h, c in enumerate(ids[min(level, depth)]):
            out[c].append(self.host_name(h))
        return out

    # ---- sets of hosts --------------------------------------------------

    def sharing(self, hosts):
        """Hosts of the set whose routes to each other cross a link just above
        the leaf level (leaf to upper switch) in the same direction as
        another host's."""
        hs = [self.host(h) for h in hosts]
        first = {}
        mark = set()
        for a in hs:
            for b in hs:
                if a == b or self.host_leaf(a) == self.host_leaf(b):
                    continue
                r = self.walk(a, b)
                if r is None:
                    continue
                sws, links = r
                for s in range(1, len(sws)):
                    lo = self.v[self.switches[sws[s - 1]]].level
                    hi = self.v[self.switches[sws[s]]].level
                    d = 0 if lo == 0 and hi > 0 else 1 if lo > 0 and hi == 0 else None
                    if d is None:
                        continue
                    user = a if d == 0 else b
                    key = (links[s], d)
                    if key not in first:
                        first[key] = user
                    elif first[key] != user:
                        mark.update((first[key], user))
        seen = []
        for h in hs:
            if h in mark and h not in seen:
                seen.append(h)
        return [self.host_name(h) for h in seen]

    def hosts_per_leaf(self, hosts=None):
        hs = list(range(len(self.hosts))) if hosts is None else [self.host(h) for h in hosts]
        uniq = []
        for h in hs:
            if h not in uniq and self.host_leaf(h) is not None:
                uniq.append(h)
        leaves = {self.host_leaf(h) for h in uniq}
        return len(uniq) / len(leaves) if leaves else 0.0
