"""Switch clusters: the topology dissertation's neighbour-joining variant.

Agglomerative minimum-distance complete-linkage clustering of the hosts by hop
count: each step takes the closest active pair, adds every active node at that
distance from the first of the pair, keeps those all at that distance from
each other, and joins them under a new node whose distance to the rest is the
largest of its members'. The steps and their order are those of
src/topo/cluster.c, so both give the same clusters.
"""

INF = float("inf")


def cluster(dist):
    """dist: symmetric matrix of host distances (INF: no route).

    Returns (depth, ids, counts): ids[level][host] is the host's cluster at that
    level (numbered in the order of their first host), counts[level] how many
    clusters there are. Level 0 is one cluster of all hosts; level `depth`
    every host on its own.
    """
    n = len(dist)
    d = [row[:] for row in dist]
    node = list(range(n))          # tree node held in each slot
    active = [True] * n
    parent = {}
    nxt = n
    while True:
        best, bi, bj = INF, -1, -1
        for i in range(n):
            if not active[i]:
                continue
            for j in range(i + 1, n):
                if active[j] and d[i][j] < best:
                    best, bi, bj = d[i][j], i, j
        if bi < 0:
            break
        lst = [bi, bj] + [k for k in range(n)
                          if active[k] and k not in (bi, bj) and d[bi][k] == best]
        gone = [False] * len(lst)
        for x in range(len(lst)):
            for y in range(len(lst)):
                if gone[x]:
                    break
                if y != x and not gone[y] and d[lst[x]][lst[y]] != best:
                    gone[y] = True
        members = [lst[x] for x in range(len(lst)) if not gone[x]]
        new = nxt
        nxt += 1
        for m in members:
            parent[node[m]] = new
        slot = min(members)
        row = [max(d[m][k] for m in members) for k in range(n)]
        for m in members:
            active[m] = False
        active[slot] = True
        node[slot] = new
        for k in range(n):
            if active[k] and k != slot:
                d[slot][k] = d[k][slot] = row[k]
    left = [node[k] for k in range(n) if active[k]]
    if len(left) == 1 and left[0] >= n:
        root = left[0]
    else:
        root = nxt
        nxt += 1
        for x in left:
            parent[x] = root
    depth = {root: 0}

    def depth_of(x):
        chain = []
        while x not in depth:
            chain.append(x)
            x = parent[x]
        for y in reversed(chain):
            depth[y] = depth[parent[y]] + 1
        return depth[chain[0]] if chain else depth[x]

    maxd = max([depth_of(h) for h in range(n)] or [0])
    ids, counts = [], []
    for level in range(maxd + 1):
        seen = {}
        row = []
        for h in range(n):
            x = h
            while depth[x] > level:
                x = parent[x]
            row.append(seen.setdefault(x, len(seen)))
        ids.append(row)
        counts.append(len(seen))
    return maxd, ids, counts
