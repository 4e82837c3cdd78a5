"""Process placement and node selection (pxtopo place, pxtopo select).

place: the ranks of a communication graph onto the slots of a host list, as
the library's reorder=1 does (src/topo/place.c): the graph is cut into
groups the size of each host's slots (METIS's gpmetis, or a greedy growth
when it is not installed), the groups are laid onto the hosts to minimise
the traffic times the hops between them, and the ranks of a group take
their host's slots. The result is a host per rank, written as a pxrun
host file and as a SLURM_HOSTFILE for srun --distribution=arbitrary.

select: of a list of free nodes, a number that avoid sharing a link above
the leaf level (the scheduler-side constraint of the topology
dissertation): whole leaves first, then nodes whose routes to the chosen
ones cross no uplink another chosen node's routes cross.
"""

import itertools
import json
import os
import shutil
import subprocess
import tempfile

from .model import TopoError


# ---- inputs -------------------------------------------------------------

def read_graph(path):
    """A communication graph: (n, {(u, v): weight}) with u < v, both
    directions added together. METIS's graph format (1-based neighbour
    lists, '%' comments, fmt 1/11/... for edge weights), a profile written
    by PX_PROFILE=topo ({"ranks": N, "pairs": [{"src", "dst", "bytes"}...]}),
    or a JSON matrix {"nranks": N, "bytes": [[...]]} whose bytes[i][j] is
    what i sends j."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise TopoError(f"cannot open {path}: {e.strerror}") from None
    if text.lstrip().startswith("{"):
        return parse_profile(text, path)
    return parse_metis(text, path)


def _add(edges, u, v, w):
    if u != v and w > 0:
        key = (u, v) if u < v else (v, u)
        edges[key] = edges.get(key, 0) + w


def parse_profile(text, name="<profile>"):
    try:
        doc = json.loads(text)
        if "pairs" in doc and "ranks" in doc:
            # what PX_PROFILE=topo writes: the pairs that communicated
            n = int(doc["ranks"])
            edges = {}
            for p in doc["pairs"]:
                s, d = int(p["src"]), int(p["dst"])
                if not (0 <= s < n and 0 <= d < n):
                    raise ValueError(f"pair {s}->{d} outside {n} ranks")
                _add(edges, s, d, int(p["bytes"]))
            return n, edges
        n = int(doc["nranks"])
        m = doc["bytes"]
    except (ValueError, KeyError, TypeError) as e:
        raise TopoError(f"{name}: not a profile {{\"nranks\": N, \"bytes\": [[...]]}}: {e}") \
            from None
    if n < 1 or len(m) != n or any(len(row) != n for row in m):
        raise TopoError(f"{name}: bytes must be a {n} x {n} matrix")
    edges = {}
    for i in range(n):
        for j in range(n):
            _add(edges, i, j, int(m[i][j]))
    return n, edges


def parse_metis(text, name="<graph>"):
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("%")]
    if not lines or not lines[0].split():
        raise TopoError(f"{name}: empty METIS graph")
    head = lines[0].split()
    try:
        n, _m = int(head[0]), int(head[1])
        fmt = head[2] if len(head) > 2 else "0"
        ncon = int(head[3]) if len(head) > 3 else 1
    except (ValueError, IndexError):
        raise TopoError(f"{name}:1: expected 'vertices edges [fmt [ncon]]'") from None
    fmt = fmt.rjust(3, "0")
    has_size, has_vw, has_ew = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
    body = lines[1:]
    if len(body) < n:
        raise TopoError(f"{name}: {n} vertices but {len(body)} lines")
    edges = {}
    for u in range(n):
        try:
            nums = [int(x) for x in body[u].split()]
        except ValueError:
            raise TopoError(f"{name}: vertex {u + 1}: not integers") from None
        nums = nums[(1 if has_size else 0) + (ncon if has_vw else 0):]
        step = 2 if has_ew else 1
        if len(nums) % step:
            raise TopoError(f"{name}: vertex {u + 1}: a neighbour without its weight")
        for i in range(0, len(nums), step):
            v = nums[i] - 1
            if not 0 <= v < n:
                raise TopoError(f"{name}: vertex {u + 1}: neighbour {nums[i]} outside 1..{n}")
            # each edge appears in both lists: count it once
            _add(edges, u, v, (nums[i + 1] if has_ew else 1) / 2)
    return n, {k: int(round(w)) or 1 for k, w in edges.items()}


def read_hosts(path):
    """[(host, slots)] of a host file, in order: 'host', 'host:N' or
    'host slots=N' per line, '#' comments (what pxrun --hostfile reads)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TopoError(f"cannot open {path}: {e.strerror}") from None
    out = []
    for no, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        name, slots = words[0], 1
        try:
            if ":" in name:
                name, s = name.split(":", 1)
                slots = int(s)
            elif len(words) > 1 and words[1].startswith("slots="):
                slots = int(words[1][6:])
        except ValueError:
            raise TopoError(f"{path}:{no}: expected 'host', 'host:N' or 'host slots=N'") \
                from None
        if slots < 1:
            raise TopoError(f"{path}:{no}: slots must be positive")
        out.append((name, slots))
    return out


def adjacency(n, edges):
    adj = [dict() for _ in range(n)]
    for (u, v), w in edges.items():
        adj[u][v] = adj[u].get(v, 0) + w
        adj[v][u] = adj[v].get(u, 0) + w
    return adj


# ---- the cut into node-sized groups ---------------------------------------

def _gpmetis(n, adj, sizes):
    """Groups from gpmetis (None when it is not installed or fails)."""
    exe = shutil.which("gpmetis")
    if not exe or len(sizes) < 2 or not any(adj):
        return None
    with tempfile.TemporaryDirectory(prefix="pxtopo-") as d:
        g = os.path.join(d, "graph")
        with open(g, "w") as f:
            f.write(f"{n} {sum(len(a) for a in adj) // 2} 001\n")
            for u in range(n):
                f.write(" ".join(f"{v + 1} {w}" for v, w in sorted(adj[u].items())) + "\n")
        tp = os.path.join(d, "tpwgts")
        with open(tp, "w") as f:
            for p, s in enumerate(sizes):
                f.write(f"{p} = {s / n:.9f}\n")
        k = len(sizes)
        r = subprocess.run([exe, f"-tpwgts={tp}", "-seed=42", "-ncuts=4", "-ufactor=1", g,
                            str(k)], capture_output=True, text=True)
        out = f"{g}.part.{k}"
        if r.returncode != 0 or not os.path.exists(out):
            return None
        with open(out) as f:
            part = [int(x) for x in f.read().split()]
    return part if len(part) == n else None


def _greedy(n, adj, sizes):
    """Groups grown one at a time: from the lowest unplaced rank, the
    unplaced rank most connected to the group joins next."""
    part = [-1] * n
    for p, size in enumerate(sizes):
        conn = {}
        for _ in range(size):
            free = [v for v in range(n) if part[v] < 0]
            if not free:
                break
            v = max(free, key=lambda x: (conn.get(x, 0), -x))
            part[v] = p
            conn.pop(v, None)
            for u, w in adj[v].items():
                if part[u] < 0:
                    conn[u] = conn.get(u, 0) + w
    return part


def _balance(n, adj, sizes, part):
    """Moves ranks out of oversized groups, the cheapest move each time."""
    have = [0] * len(sizes)
    for p in part:
        have[p] += 1
    while True:
        best = None
        for v in range(n):
            pv = part[v]
            if have[pv] <= sizes[pv]:
                continue
            to = {}
            for u, w in adj[v].items():
                to[part[u]] = to.get(part[u], 0) + w
            for p in range(len(sizes)):
                if have[p] < sizes[p]:
                    gain = to.get(p, 0) - to.get(pv, 0)
                    if best is None or gain > best[0]:
                        best = (gain, v, p)
        if best is None:
            return part
        _, v, p = best
        have[part[v]] -= 1
        have[p] += 1
        part[v] = p


def _refine(n, adj, part, passes=8):
    """Swaps of two ranks of different groups while the cut shrinks."""
    for _ in range(passes):
        moved = False
        for u in range(n):
            for v in range(u + 1, n):
                pu, pv = part[u], part[v]
                if pu == pv:
                    continue
                cu = {}
                for x, w in adj[u].items():
                    cu[part[x]] = cu.get(part[x], 0) + w
                cv = {}
                for x, w in adj[v].items():
                    cv[part[x]] = cv.get(part[x], 0) + w
                gain = (cu.get(pv, 0) - cu.get(pu, 0) + cv.get(pu, 0) - cv.get(pv, 0)
                        - 2 * adj[u].get(v, 0))
                if gain > 0:
                    part[u], part[v] = pv, pu
                    moved = True
        if not moved:
            return part
    return part


def partition(n, adj, sizes, partitioner="auto"):
    """Groups of exactly sizes[p] ranks: (part, what made the cut)."""
    if len(sizes) == 1:
        return [0] * n, "one host"
    part, how = None, "greedy"
    if partitioner in ("auto", "metis"):
        part = _gpmetis(n, adj, sizes)
        if part is not None:
            how = "gpmetis"
        elif partitioner == "metis":
            raise TopoError("gpmetis (Debian: metis) is not installed or failed")
    if part is None:
        part = _greedy(n, adj, sizes)
    _balance(n, adj, sizes, part)
    if n <= 512:
        _refine(n, adj, part)
    return part, how


# ---- groups onto hosts ----------------------------------------------------

def _qcost(q, dist, node_of):
    return sum(w * dist[node_of[p]][node_of[r]] for (p, r), w in q.items())


def lay_groups(q, dist, sizes):
    """node_of[group]: group p (sized for host p) onto a host of its size."""
    k = len(sizes)
    node_of = list(range(k))
    best = _qcost(q, dist, node_of)
    if k <= 8:
        for perm in itertools.permutations(range(k)):
            if all(sizes[perm[p]] == sizes[p] for p in range(k)):
                c = _qcost(q, dist, perm)
                if c < best:
                    best, node_of = c, list(perm)
        return node_of
    moved = True
    while moved:
        moved = False
        for a in range(k):
            for b in range(a + 1, k):
                if sizes[node_of[a]] != sizes[node_of[b]]:
                    continue
                node_of[a], node_of[b] = node_of[b], node_of[a]
                c = _qcost(q, dist, node_of)
                if c < best:
                    best, moved = c, True
                else:
                    node_of[a], node_of[b] = node_of[b], node_of[a]
    return node_of


class Placement:
    """hosts[r]: the host of rank r; default[r]: the host pxrun would give."""

    def __init__(self, hosts, default, how):
        self.hosts, self.default, self.how = hosts, default, how


def host_distance(fab, names):
    """Hops between hosts (0 for one host, at least 1 for two); hosts the
    fabric lacks count as farther than any it knows."""
    k = len(names)
    d = [[0] * k for _ in range(k)]
    far = 1
    for a in range(k):
        for b in range(k):
            if a != b:
                h = None
                if fab is not None and fab.host_find(names[a]) is not None \
                        and fab.host_find(names[b]) is not None:
                    h = fab.hops(names[a], names[b])
                d[a][b] = max(1, h) if h is not None and h >= 0 else -1
                far = max(far, d[a][b])
    for a in range(k):
        for b in range(k):
            if d[a][b] < 0:
                d[a][b] = far + 2 if fab is not None else 1
    return d


def place(n, edges, hostlist, fab=None, partitioner="auto"):
    """Places n ranks onto the slots of hostlist [(host, slots)], filled in
    order as pxrun fills them (the first n slots)."""
    slots = [h for h, s in hostlist for _ in range(s)]
    if len(slots) < n:
        raise TopoError(f"{n} ranks but only {len(slots)} slots in the host list")
    slots = slots[:n]
    names = []
    for h in slots:
        if h not in names:
            names.append(h)
    sizes = [slots.count(h) for h in names]
    adj = adjacency(n, edges)
    part, how = partition(n, adj, sizes, partitioner)
    q = {}
    for (u, v), w in edges.items():
        if part[u] != part[v]:
            q[(part[u], part[v])] = q.get((part[u], part[v]), 0) + w
            q[(part[v], part[u])] = q.get((part[v], part[u]), 0) + w
    dist = host_distance(fab, names)
    node_of = lay_groups(q, dist, sizes)
    hosts = [names[node_of[part[r]]] for r in range(n)]
    if cost(edges, hosts, fab) >= cost(edges, slots, fab):
        hosts, how = list(slots), how + ", no better than the host list's order"
    return Placement(hosts, slots, how)


def cost(edges, hosts, fab=None):
    """Sum of weight x hops between the ranks' hosts (0 on one host)."""
    names = sorted(set(hosts))
    d = host_distance(fab, names)
    idx = {h: i for i, h in enumerate(names)}
    return sum(w * d[idx[hosts[u]]][idx[hosts[v]]] for (u, v), w in edges.items())


def split(edges, hosts, fab=None):
    """{'intra': .., 'hops N': .., 'inter': ..}: weight of the edges (both
    directions) by where their ends sit."""
    out = {}
    for (u, v), w in edges.items():
        a, b = hosts[u], hosts[v]
        if a == b:
            key = "intra"
        elif fab is not None and fab.host_find(a) is not None and fab.host_find(b) is not None:
            key = f"{fab.hops(a, b)} hops"
        else:
            key = "inter"
        out[key] = out.get(key, 0) + 2 * w
    return out


def pxrun_hostfile(hosts):
    """A pxrun --hostfile: runs of one host as 'host:N', in rank order."""
    lines = []
    for h, run in itertools.groupby(hosts):
        lines.append(f"{h}:{len(list(run))}")
    return "\n".join(lines) + "\n"


def slurm_hostfile(hosts):
    """SLURM_HOSTFILE for srun --distribution=arbitrary: a host per task."""
    return "\n".join(hosts) + "\n"


# ---- node selection -------------------------------------------------------

def select(fab, free, count):
    """count nodes of free (in order) that share no link above the leaf
    level: the leaves with most free nodes are taken whole first, then each
    node that adds no sharing; when that is not enough, the nodes that add
    the fewest sharing hosts. Returns (nodes, sharing hosts among them)."""
    if count > len(free):
        raise TopoError(f"{count} nodes asked, {len(free)} free")
    for h in free:
        if fab.host_find(h) is None:
            raise TopoError(f"host {h} is not in the fabric")
    by_leaf = {}
    for h in free:
        by_leaf.setdefault(fab.host_leaf(fab.host(h)), []).append(h)
    leaves = sorted(by_leaf.values(), key=lambda hs: (-len(hs), free.index(hs[0])))
    chosen = []
    # whole leaves while they fit, leaving the rest to the checks below
    for hs in leaves:
        if len(chosen) + len(hs) <= count and not fab.sharing(chosen + hs):
            chosen += hs
    order = [h for hs in leaves for h in hs if h not in chosen]
    for h in order:
        if len(chosen) < count and not fab.sharing(chosen + [h]):
            chosen.append(h)
    while len(chosen) < count:
        rest = [h for h in order if h not in chosen]
        h = min(rest, key=lambda x: (len(fab.sharing(chosen + [x])), rest.index(x)))
        chosen.append(h)
    return chosen, fab.sharing(chosen)
