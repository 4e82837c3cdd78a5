"""Fabric description: parsing, validation, generators, link names and routes.

Everything in this module is pure computation (no kernel access), so it can be
used and tested without root: `pxfab gen`, `pxfab validate` and `pxfab routes`
work from a description alone.
"""

import ipaddress
import json
import re

FORMAT_VERSION = 1
DEFAULT_RATE = "1gbit"
DEFAULT_MTU = 1500
DEFAULT_MGMT_SUBNET = "10.99.0.0/16"
DEFAULT_INFRA_SUBNET = "10.98.0.0/16"
MGMT_IFACE = "mgmt"
# dest-mod-k: equal-cost choice by (destination node index + path index), spreading
#   destinations over the spines (asymmetric: replies follow the source's address);
# path: by path index only, so path p crosses the same spine in both directions.
ROUTINGS = ("dest-mod-k", "path")
IFNAMSIZ = 15  # Linux interface names are at most 15 characters
MAX_NAME = 15  # node and switch names double as interface names in switches

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_RATE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")
# tc's units: "bit" suffixes are bits per second, "bps" suffixes bytes per second.
_RATE_UNITS = {
    "": 1, "bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12,
    "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
    "bps": 8, "kbps": 8 * 10**3, "mbps": 8 * 10**6, "gbps": 8 * 10**9, "tbps": 8 * 10**12,
}


class FabError(Exception):
    """An error the user can fix (bad description, unknown name, ...)."""


def parse_rate(text):
    """Return a rate in bit/s from tc-style text ("1gbit", "250mbit", "1000000")."""
    if isinstance(text, bool):
        raise FabError(f"invalid rate {text!r}")
    if isinstance(text, (int, float)):
        value, unit = float(text), ""
    else:
        m = _RATE_RE.match(str(text))
        if not m or m.group(2).lower() not in _RATE_UNITS:
            raise FabError(f"invalid rate {text!r} (use e.g. 100mbit, 1gbit, 2.5gbit)")
        value, unit = float(m.group(1)), m.group(2).lower()
    bps = int(round(value * _RATE_UNITS[unit]))
    if bps < 8000:
        raise FabError(f"rate {text!r} is below 8kbit")
    return bps


def format_rate(bps):
    """Shortest exact tc spelling of a rate in bit/s."""
    for unit, mult in (("tbit", 10**12), ("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bps % mult == 0:
            return f"{bps // mult}{unit}"
    return f"{bps}bit"


def _check_name(kind, name):
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise FabError(f"{kind} name {name!r} is invalid (letters, digits, '_', '.', '-'; "
                       "must start with a letter)")
    if len(name) > MAX_NAME:
        raise FabError(f"{kind} name {name!r} is longer than {MAX_NAME} characters")


def _check_ifname(where, name):
    if not isinstance(name, str) or not _NAME_RE.match(name) or len(name) > IFNAMSIZ:
        raise FabError(f"{where}: interface name {name!r} is invalid "
                       f"(at most {IFNAMSIZ} characters, letters, digits, '_', '.', '-')")


class Endpoint:
    """One end of a link: the device `dev` inside the namespace of `owner`."""

    def __init__(self, owner, dev, is_node):
        self.owner = owner
        self.dev = dev
        self.is_node = is_node

    def __repr__(self):
        return f"{self.owner}:{self.dev}"


class Link:
    def __init__(self, index, a, b, rate, mtu, classes, queue, arbitration=None):
        self.index = index
        self.a = a
        self.b = b
        self.rate = rate          # bit/s
        self.mtu = mtu
        self.classes = classes    # list of {"dscp": [..], "weight": w, "minor": n}
        self.queue = queue        # bytes of buffer per egress, None = derived from rate
        self.arbitration = arbitration or dict(DEFAULT_ARBITRATION)
        if a.is_node:
            self.name = f"{a.owner}:{a.dev}"
        elif b.is_node:
            self.name = f"{b.owner}:{b.dev}"
        else:
            self.name = f"{a.owner}:{b.owner}"

    @property
    def kind(self):
        return "node" if (self.a.is_node or self.b.is_node) else "switch"

    def ends(self):
        return (self.a, self.b)

    def other(self, owner):
        return self.b if self.a.owner == owner else self.a

    def end_of(self, owner):
        return self.a if self.a.owner == owner else self.b


class Fabric:
    """A validated fabric description.

    Attributes are plain data; `raw` keeps the normalised JSON so it can be
    stored in the state file and printed back.
    """

    def __init__(self, raw):
        self.raw = raw
        self.nodes = []          # list of dicts: name, mgmt, ifaces {name: [iface objects]}
        self.switches = []       # list of dicts: name, kind, rail, addr
        self.links = []
        self._parse(raw)

    # ---- parsing and validation -------------------------------------------------

    def _parse(self, raw):
        if not isinstance(raw, dict):
            raise FabError("description must be a JSON object")
        version = raw.get("pxfab", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise FabError(f"unsupported description version {version!r} (expected {FORMAT_VERSION})")
        known = {"pxfab", "name", "mtu", "rate", "queue", "classes", "arbitration", "mgmt", "infra",
                 "routing",
                 "nodes", "switches", "links", "routes", "generator"}
        extra = set(raw) - known
        if extra:
            raise FabError(f"unknown top-level key(s): {', '.join(sorted(extra))}")
        self.name = raw.get("name", "fabric")
        self.mtu = _parse_mtu(raw.get("mtu", DEFAULT_MTU), "mtu")
        self.rate = parse_rate(raw.get("rate", DEFAULT_RATE))
        self.queue = _parse_queue(raw.get("queue"), "queue")
        self.classes = _parse_classes(raw.get("classes", []), "classes")
        self.arbitration = _parse_arbitration(raw.get("arbitration", {}), "arbitration")
        self.routing = raw.get("routing", "dest-mod-k")
        if self.routing not in ROUTINGS:
            raise FabError(f"routing must be one of {', '.join(ROUTINGS)}, not {self.routing!r}")

        mgmt = raw.get("mgmt", {})
        if not isinstance(mgmt, dict):
            raise FabError("mgmt must be an object")
        try:
            self.mgmt_subnet = ipaddress.IPv4Network(mgmt.get("subnet", DEFAULT_MGMT_SUBNET))
        except ValueError as e:
            raise FabError(f"mgmt.subnet: {e}") from None
        if self.mgmt_subnet.num_addresses < 4:
            raise FabError("mgmt.subnet is too small")
        _check_usable(self.mgmt_subnet, "mgmt.subnet")
        bad = set(mgmt) - {"subnet", "host", "rate"}
        if bad:
            raise FabError(f"mgmt: unknown key(s) {', '.join(sorted(bad))}")
        # The management network is unshaped unless given a rate.
        self.mgmt_rate = parse_rate(mgmt["rate"]) if mgmt.get("rate") is not None else None
        self.mgmt_host = _addr_in(mgmt.get("host", str(self.mgmt_subnet.broadcast_address - 1)),
                                  self.mgmt_subnet, "mgmt.host")
        try:
            self.infra_subnet = ipaddress.IPv4Network(raw.get("infra", DEFAULT_INFRA_SUBNET))
        except ValueError as e:
            raise FabError(f"infra: {e}") from None

        names = set()
        nodes = raw.get("nodes")
        if not isinstance(nodes, list) or not nodes:
            raise FabError("description needs a non-empty list 'nodes'")
        used_mgmt = {self.mgmt_host: "the root namespace"}
        for i, n in enumerate(nodes):
            if not isinstance(n, dict):
                raise FabError(f"nodes[{i}] must be an object")
            name = n.get("name")
            _check_name("node", name)
            if name in names:
                raise FabError(f"duplicate name {name!r}")
            names.add(name)
            bad = set(n) - {"name", "mgmt", "ifaces"}
            if bad:
                raise FabError(f"node {name}: unknown key(s) {', '.join(sorted(bad))}")
            if "mgmt" in n:
                maddr = _addr_in(n["mgmt"], self.mgmt_subnet, f"node {name} mgmt")
            else:
                maddr = self.mgmt_subnet.network_address + i + 1
                if maddr not in self.mgmt_subnet or maddr == self.mgmt_subnet.broadcast_address:
                    raise FabError("mgmt.subnet too small for the number of nodes")
            if maddr in used_mgmt:
                raise FabError(f"node {name}: mgmt address {maddr} already used by {used_mgmt[maddr]}")
            used_mgmt[maddr] = f"node {name}"
            ifaces = n.get("ifaces", {})
            if not isinstance(ifaces, dict) or not ifaces:
                raise FabError(f"node {name}: 'ifaces' must be a non-empty object "
                               "{\"rail0\": [\"10.100.0.1/24\", ...]}")
            parsed = {}
            for ifname, addrs in ifaces.items():
                _check_ifname(f"node {name}", ifname)
                if ifname in (MGMT_IFACE, "lo"):
                    raise FabError(f"node {name}: interface name {ifname!r} is reserved")
                if isinstance(addrs, str):
                    addrs = [addrs]
                if not isinstance(addrs, list) or not addrs:
                    raise FabError(f"node {name} {ifname}: needs a list of addresses")
                lst = []
                for a in addrs:
                    try:
                        lst.append(ipaddress.IPv4Interface(a))
                    except ValueError as e:
                        raise FabError(f"node {name} {ifname}: {e}") from None
                    if "/" not in str(a):
                        raise FabError(f"node {name} {ifname}: address {a!r} needs a prefix length (e.g. /24)")
                parsed[ifname] = lst
            self.nodes.append({"name": name, "index": i, "mgmt": maddr, "ifaces": parsed})

        switches = raw.get("switches", [])
        if not isinstance(switches, list):
            raise FabError("'switches' must be a list")
        infra_used = {}
        for i, s in enumerate(switches):
            if not isinstance(s, dict):
                raise FabError(f"switches[{i}] must be an object")
            name = s.get("name")
            _check_name("switch", name)
            if name in names:
                raise FabError(f"duplicate name {name!r}")
            names.add(name)
            bad = set(s) - {"name", "kind", "rail", "addr", "level", "routes"}
            if bad:
                raise FabError(f"switch {name}: unknown key(s) {', '.join(sorted(bad))}")
            kind = s.get("kind", "router")
            if kind not in ("bridge", "router"):
                raise FabError(f"switch {name}: kind must be 'bridge' or 'router', not {kind!r}")
            addr = None
            if kind == "router":
                if "addr" in s:
                    addr = _addr_in(s["addr"], self.infra_subnet, f"switch {name} addr")
                else:
                    addr = self.infra_subnet.network_address + i + 1
                    if addr not in self.infra_subnet:
                        raise FabError("infra subnet too small for the number of switches")
                if addr in infra_used:
                    raise FabError(f"switch {name}: address {addr} already used by {infra_used[addr]}")
                infra_used[addr] = name
            self.switches.append({"name": name, "index": i, "kind": kind, "rail": s.get("rail"),
                                  "level": s.get("level"), "addr": addr,
                                  "routes": s.get("routes")})
        self.node_by_name = {n["name"]: n for n in self.nodes}
        self.switch_by_name = {s["name"]: s for s in self.switches}

        links = raw.get("links")
        if not isinstance(links, list) or not links:
            raise FabError("description needs a non-empty list 'links'")
        devs = {}   # (owner, dev) -> link name, to catch double use
        for i, l in enumerate(links):
            if not isinstance(l, dict):
                raise FabError(f"links[{i}] must be an object")
            bad = set(l) - {"a", "b", "rate", "mtu", "classes", "queue", "arbitration"}
            if bad:
                raise FabError(f"links[{i}]: unknown key(s) {', '.join(sorted(bad))}")
            if "a" not in l or "b" not in l:
                raise FabError(f"links[{i}]: needs 'a' and 'b'")
            ea = self._endpoint(l["a"], f"links[{i}].a")
            eb = self._endpoint(l["b"], f"links[{i}].b")
            if ea.is_node and eb.is_node:
                raise FabError(f"links[{i}]: nodes must connect to switches, not to each other")
            if ea.owner == eb.owner:
                raise FabError(f"links[{i}]: both ends on {ea.owner}")
            # A switch port is named after the peer unless given explicitly.
            if ea.dev is None:
                ea.dev = eb.owner
            if eb.dev is None:
                eb.dev = ea.owner
            for e in (ea, eb):
                _check_ifname(f"links[{i}] end {e.owner}", e.dev)
                if e.dev in ("lo", "br0") or (e.is_node and e.dev == MGMT_IFACE):
                    raise FabError(f"links[{i}]: interface name {e.dev!r} is reserved")
                key = (e.owner, e.dev)
                if key in devs:
                    raise FabError(f"links[{i}]: interface {e.owner}:{e.dev} is already used by link {devs[key]}")
                if e.is_node and e.dev not in self.node_by_name[e.owner]["ifaces"]:
                    raise FabError(f"links[{i}]: node {e.owner} has no interface {e.dev!r} in its 'ifaces'")
            rate = parse_rate(l["rate"]) if "rate" in l else self.rate
            mtu = _parse_mtu(l["mtu"], f"links[{i}].mtu") if "mtu" in l else self.mtu
            classes = _parse_classes(l["classes"], f"links[{i}].classes") if "classes" in l else self.classes
            queue = _parse_queue(l["queue"], f"links[{i}].queue") if "queue" in l else self.queue
            arb = (_parse_arbitration(l["arbitration"], f"links[{i}].arbitration")
                   if "arbitration" in l else self.arbitration)
            link = Link(i, ea, eb, rate, mtu, classes, queue, arb)
            devs[(ea.owner, ea.dev)] = link.name
            devs[(eb.owner, eb.dev)] = link.name
            self.links.append(link)

        # Every node interface is cabled exactly once.
        for n in self.nodes:
            for ifname in n["ifaces"]:
                if (n["name"], ifname) not in devs:
                    raise FabError(f"node {n['name']}: interface {ifname} is not connected by any link")
        # Bridges only join nodes: routed switches and bridges do not mix.
        for l in self.links:
            if l.kind == "switch":
                for e in l.ends():
                    if self.switch_by_name[e.owner]["kind"] == "bridge":
                        raise FabError(f"link {l.name}: bridge switch {e.owner} may connect only to nodes")
        self._index_links()
        self._check_addresses()
        self._build_routes()

    def _endpoint(self, text, where):
        if not isinstance(text, str):
            raise FabError(f"{where}: endpoint must be a string like 'node0:rail0' or 'leaf0'")
        owner, _, dev = text.partition(":")
        if owner in self.node_by_name:
            if not dev:
                raise FabError(f"{where}: node endpoint {text!r} needs an interface ('{owner}:rail0')")
            return Endpoint(owner, dev, True)
        if owner in self.switch_by_name:
            return Endpoint(owner, dev or None, False)
        raise FabError(f"{where}: {owner!r} is neither a node nor a switch")

    def _index_links(self):
        self.link_by_name = {}
        aliases = {}
        for l in self.links:
            if l.name in self.link_by_name:
                raise FabError(f"two links are both named {l.name!r}; give switch ports explicit names")
            self.link_by_name[l.name] = l
        for l in self.links:
            names = {f"{l.a.owner}:{l.a.dev}", f"{l.b.owner}:{l.b.dev}",
                     f"{l.a.owner}:{l.b.owner}", f"{l.b.owner}:{l.a.owner}"}
            for n in names:
                aliases.setdefault(n, set()).add(l.name)
        self.alias = {}
        for n, targets in aliases.items():
            if n in self.link_by_name:
                self.alias[n] = n
            elif len(targets) == 1:
                self.alias[n] = next(iter(targets))
        # adjacency: owner -> list of (link, my endpoint, other endpoint)
        self.adj = {}
        for l in self.links:
            self.adj.setdefault(l.a.owner, []).append((l, l.a, l.b))
            self.adj.setdefault(l.b.owner, []).append((l, l.b, l.a))
        self.node_iface_link = {}
        for l in self.links:
            for e in l.ends():
                if e.is_node:
                    self.node_iface_link[(e.owner, e.dev)] = l

    def _plane_of(self):
        """Connected components of the switch graph, keyed by switch name."""
        comp = {}
        for s in self.switches:
            if s["name"] in comp:
                continue
            stack = [s["name"]]
            comp[s["name"]] = s["name"]
            while stack:
                cur = stack.pop()
                for l, me, other in self.adj.get(cur, []):
                    if not other.is_node and other.owner not in comp:
                        comp[other.owner] = s["name"]
                        stack.append(other.owner)
        return comp

    def _check_addresses(self):
        comp = self._plane_of()
        owner_of = {}            # address -> "node0 rail0"
        nets = {}                # network -> plane
        for n in self.nodes:
            mine = []
            for ifname, addrs in n["ifaces"].items():
                link = self.node_iface_link[(n["name"], ifname)]
                plane = comp[link.other(n["name"]).owner]
                for a in addrs:
                    where = f"node {n['name']} {ifname}"
                    if a.ip in owner_of:
                        raise FabError(f"{where}: address {a.ip} already used by {owner_of[a.ip]}")
                    if a.network.prefixlen >= 31:
                        raise FabError(f"{where}: {a} leaves no room for other nodes (use e.g. /24)")
                    _check_usable(a.network, where)
                    if a.ip in (a.network.network_address, a.network.broadcast_address):
                        raise FabError(f"{where}: {a.ip} is the network or broadcast address of {a.network}")
                    owner_of[a.ip] = where
                    for other in mine:
                        if other.overlaps(a.network):
                            raise FabError(f"{where}: subnet {a.network} overlaps {other} of the same node; "
                                           "each path and rail needs its own subnet")
                    mine.append(a.network)
                    if a.network in nets and nets[a.network] != plane:
                        raise FabError(f"{where}: subnet {a.network} is also used on a different, unconnected "
                                       "network (overlapping address ranges)")
                    nets[a.network] = plane
        netlist = sorted(nets, key=lambda x: (int(x.network_address), x.prefixlen))
        for i, x in enumerate(netlist):
            for y in netlist[i + 1:]:
                if x.overlaps(y):
                    raise FabError(f"address ranges {x} and {y} overlap")
        for x in netlist:
            if x.overlaps(self.mgmt_subnet):
                raise FabError(f"rail subnet {x} overlaps the management subnet {self.mgmt_subnet}")
            if x.overlaps(self.infra_subnet) and any(s["kind"] == "router" for s in self.switches):
                raise FabError(f"rail subnet {x} overlaps the switch subnet {self.infra_subnet}")
        if any(s["kind"] == "router" for s in self.switches) and self.infra_subnet.overlaps(self.mgmt_subnet):
            raise FabError(f"switch subnet {self.infra_subnet} overlaps the management subnet {self.mgmt_subnet}")
        self.addr_owner = {}     # ip -> (node, ifname, path index, interface)
        for n in self.nodes:
            for ifname, addrs in n["ifaces"].items():
                for p, a in enumerate(addrs):
                    self.addr_owner[a.ip] = (n["name"], ifname, p, a)

    # ---- routes ----------------------------------------------------------------

    def _build_routes(self):
        """Destination-based /32 routes in every router switch.

        For a destination address (node d, interface f, path p) each router sends
        toward the switch that f is cabled to along a shortest path; when several
        neighbours are equally close (the spines of a fat-tree) it picks
        candidates[(index(d) + p) % len(candidates)], so consecutive path
        addresses of a node leave over consecutive spines (fat-tree routing with
        LMC, as OpenSM does it). With routing "path" the node index is left out.
        """
        spread = self.routing == "dest-mod-k"
        self.routes = {s["name"]: {} for s in self.switches if s["kind"] == "router"}
        routers = set(self.routes)
        for n in self.nodes:
            for ifname, addrs in n["ifaces"].items():
                link = self.node_iface_link[(n["name"], ifname)]
                attach = link.other(n["name"])
                if attach.owner not in routers:
                    continue
                dist = {attach.owner: 0}
                frontier = [attach.owner]
                while frontier:
                    nxt = []
                    for cur in frontier:
                        for l, me, other in self.adj.get(cur, []):
                            if other.is_node or other.owner in dist:
                                continue
                            dist[other.owner] = dist[cur] + 1
                            nxt.append(other.owner)
                    frontier = nxt
                for p, a in enumerate(addrs):
                    for sw, d in dist.items():
                        if d == 0:
                            port = link.end_of(sw).dev
                        else:
                            cands = sorted(((l, me) for l, me, other in self.adj[sw]
                                            if not other.is_node and dist.get(other.owner) == d - 1),
                                           key=lambda x: _natural_key(x[0].other(sw).owner))
                            l, me = cands[((n["index"] if spread else 0) + p) % len(cands)]
                            port = me.dev
                        self.routes[sw][a.ip] = port
        # Explicit routes in the description override the computed ones.
        for s in self.switches:
            extra = s.get("routes")
            if extra is None:
                continue
            if s["kind"] != "router":
                raise FabError(f"switch {s['name']}: only router switches take 'routes'")
            if not isinstance(extra, dict):
                raise FabError(f"switch {s['name']}: 'routes' must map addresses to ports")
            ports = {me.dev for l, me, other in self.adj.get(s["name"], [])}
            for dst, port in extra.items():
                try:
                    ip = ipaddress.IPv4Address(dst)
                except ValueError as e:
                    raise FabError(f"switch {s['name']} routes: {e}") from None
                if port not in ports:
                    raise FabError(f"switch {s['name']} routes: no port {port!r} "
                                   f"(ports: {', '.join(sorted(ports))})")
                self.routes[s["name"]][ip] = port

    def trace(self, src_addr, dst_addr, down=()):
        """Switch-level path from a source address to a destination address.

        Returns a dict with 'hops' (owners in order, starting and ending with the
        nodes), 'links' (link names crossed) and 'ok'/'reason'. Links named in
        `down` are treated as cut.
        """
        src = self.addr_owner.get(ipaddress.IPv4Address(src_addr))
        dst = self.addr_owner.get(ipaddress.IPv4Address(dst_addr))
        if src is None or dst is None:
            raise FabError(f"unknown address {src_addr if src is None else dst_addr}")
        node = src[0]
        dip = ipaddress.IPv4Address(dst_addr)
        # The node sends out of the interface whose subnet holds the destination.
        out = None
        for ifname, addrs in self.node_by_name[node]["ifaces"].items():
            if any(dip in a.network for a in addrs):
                out = ifname
        res = {"src": str(src_addr), "dst": str(dst_addr), "hops": [node], "links": [], "ok": False}
        if node == dst[0]:
            res.update(ok=True, reason="local")
            return res
        if out is None:
            res["reason"] = f"{node} has no interface on the subnet of {dst_addr}"
            return res
        link = self.node_iface_link[(node, out)]
        cur = link.other(node).owner
        visited = set()
        while True:
            res["links"].append(link.name)
            if link.name in down:
                res["reason"] = f"link {link.name} is down"
                return res
            res["hops"].append(cur)
            if cur == dst[0]:
                res["ok"] = True
                return res
            if cur in visited:
                res["reason"] = "routing loop"
                return res
            visited.add(cur)
            sw = self.switch_by_name[cur]
            if sw["kind"] == "bridge":
                target = self.node_iface_link.get((dst[0], dst[1]))
                if target is None or target.other(dst[0]).owner != cur:
                    res["reason"] = f"{dst_addr} is not on bridge {cur}"
                    return res
                link = target
                cur = dst[0]
                continue
            port = self.routes[cur].get(dip)
            if port is None:
                res["reason"] = f"no route to {dst_addr} in {cur}"
                return res
            for l, me, other in self.adj[cur]:
                if me.dev == port:
                    link, nxt = l, other.owner
                    break
            if nxt in self.node_by_name and nxt != dst[0]:
                res["reason"] = f"{cur} routes {dst_addr} to {nxt}"
                return res
            cur = nxt

    # ---- lookups ---------------------------------------------------------------

    def resolve_link(self, name):
        """Canonical link for a user-given name (either end, either order)."""
        if name in self.alias:
            return self.link_by_name[self.alias[name]]
        if name.endswith(":" + MGMT_IFACE) and name.split(":")[0] in self.node_by_name:
            return MgmtLink(name.split(":")[0])
        hint = ", ".join(sorted(self.link_by_name)[:8])
        raise FabError(f"unknown link {name!r} (links: {hint}{', ...' if len(self.link_by_name) > 8 else ''}; "
                       "see 'pxfab status')")

    def resolve_node(self, name):
        if name not in self.node_by_name:
            raise FabError(f"unknown node {name!r} (nodes: {', '.join(n['name'] for n in self.nodes)})")
        return self.node_by_name[name]

    def switch_rail(self, sw):
        """Rail index of a switch: explicit, or the interface index of attached nodes."""
        s = self.switch_by_name[sw]
        if s.get("rail") is not None:
            return s["rail"]
        comp = self._plane_of()
        for l in self.links:
            for e in l.ends():
                if e.is_node and comp.get(l.other(e.owner).owner) == comp[sw]:
                    m = re.search(r"(\d+)$", e.dev)
                    return int(m.group(1)) if m else e.dev
        return None

    def to_json(self):
        return self.raw


class MgmtLink:
    """The management cable of a node: can be cut or made lossy, is not shaped."""

    kind = "mgmt"

    def __init__(self, node):
        self.node = node
        self.name = f"{node}:{MGMT_IFACE}"


def _natural_key(s):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def _parse_mtu(v, where):
    if isinstance(v, bool) or not isinstance(v, int) or not 576 <= v <= 65535:
        raise FabError(f"{where}: MTU must be an integer between 576 and 65535, not {v!r}")
    return v


def _parse_queue(v, where):
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 3000:
        raise FabError(f"{where}: queue must be a byte count >= 3000, not {v!r}")
    return v


def _parse_classes(v, where):
    """Weighted traffic classes (QoS lanes) selected by DSCP value."""
    if not isinstance(v, list):
        raise FabError(f"{where}: must be a list of {{\"dscp\": [..], \"weight\": w}}")
    out = []
    seen = set()
    for i, c in enumerate(v):
        if not isinstance(c, dict) or "dscp" not in c:
            raise FabError(f"{where}[{i}]: needs 'dscp'")
        dscp = c["dscp"] if isinstance(c["dscp"], list) else [c["dscp"]]
        for d in dscp:
            if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d <= 63:
                raise FabError(f"{where}[{i}]: DSCP values are integers 0..63, not {d!r}")
            if d in seen:
                raise FabError(f"{where}[{i}]: DSCP {d} is in two classes")
            seen.add(d)
        w = c.get("weight", 1)
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w <= 0:
            raise FabError(f"{where}[{i}]: weight must be a positive number")
        prio = c.get("priority", "low")
        if prio not in ("high", "low"):
            raise FabError(f"{where}[{i}]: priority must be 'high' or 'low', not {prio!r}")
        bad = set(c) - {"dscp", "weight", "priority"}
        if bad:
            raise FabError(f"{where}[{i}]: unknown key(s) {', '.join(sorted(bad))}")
        out.append({"dscp": dscp, "weight": w, "priority": prio, "minor": 20 + i})
    if len(out) > 40:
        raise FabError(f"{where}: at most 40 classes")
    return out


DEFAULT_ARBITRATION = {"high_limit": 255, "queue": "fifo"}


def _parse_arbitration(v, where):
    """How a link's egress picks among its classes, after InfiniBand's VL arbitration:
    classes of priority 'high' go first, 'low' ones (and unmarked traffic) get one
    packet after every high_limit x 4 KB of high-priority data (0: after every
    high packet; 255: only when no high class has data); within each group by
    weight. queue: each class's queue, 'fifo' (one byte FIFO) or 'fq' (fair
    queuing among the flows of the class, fq_codel)."""
    if not isinstance(v, dict):
        raise FabError(f"{where}: must be an object {{\"high_limit\": 0..255, \"queue\": \"fifo\"|\"fq\"}}")
    bad = set(v) - set(DEFAULT_ARBITRATION)
    if bad:
        raise FabError(f"{where}: unknown key(s) {', '.join(sorted(bad))}")
    out = dict(DEFAULT_ARBITRATION)
    lim = v.get("high_limit", out["high_limit"])
    if isinstance(lim, bool) or not isinstance(lim, int) or not 0 <= lim <= 255:
        raise FabError(f"{where}.high_limit: an integer 0..255 (units of 4 KB; 255: no limit), "
                       f"not {lim!r}")
    q = v.get("queue", out["queue"])
    if q not in ("fifo", "fq"):
        raise FabError(f"{where}.queue: 'fifo' or 'fq', not {q!r}")
    out.update(high_limit=lim, queue=q)
    return out


def _check_usable(net, where):
    for what, bad in (("loopback", net.is_loopback), ("multicast", net.is_multicast),
                      ("unspecified", net.network_address.is_unspecified),
                      ("reserved", net.is_reserved)):
        if bad:
            raise FabError(f"{where}: {net} is a {what} range")


def _addr_in(text, net, where):
    try:
        a = ipaddress.IPv4Address(str(text))
    except ValueError as e:
        raise FabError(f"{where}: {e}") from None
    if a not in net or a in (net.network_address, net.broadcast_address):
        raise FabError(f"{where}: {a} is not a host address of {net}")
    return a


# ---- generators -------------------------------------------------------------------

def _rail_addr(rail, path, node_index, base=100):
    if base + rail > 255 or path > 254 or node_index > 253:
        raise FabError("too many rails, paths or nodes for the 10.(100+rail).path.(node+1)/24 plan "
                       "(at most 155 rails, 255 paths, 254 nodes)")
    return f"10.{base + rail}.{path}.{node_index + 1}/24"


def _net(text, where):
    try:
        return ipaddress.IPv4Network(text)
    except ValueError as e:
        raise FabError(f"{where}: {e}") from None


def _mgmt_addr(subnet, i):
    net = _net(subnet, "management subnet")
    a = net.network_address + i + 1
    if a not in net or a >= net.broadcast_address - 1:
        raise FabError(f"management subnet {net} too small for {i + 1} nodes")
    return str(a)


def _classes_from_lanes(lanes):
    """'40:4:high,10:3,18:1' -> [{"dscp": [40], "weight": 4, "priority": "high"},
    {"dscp": [10], "weight": 3}, {"dscp": [18], "weight": 1}]"""
    if not lanes:
        return []
    out = []
    for item in lanes.split(","):
        dscp, _, rest = item.partition(":")
        weight, _, prio = rest.partition(":")
        try:
            c = {"dscp": [int(d) for d in dscp.split("+")], "weight": float(weight or 1)}
        except ValueError:
            raise FabError(f"invalid lane {item!r} (use DSCP:WEIGHT[:high], e.g. 40:4:high,18:1)") from None
        if prio:
            c["priority"] = prio
        out.append(c)
    return out


def _common(nodes, rate, mtu, mgmt_subnet, lanes, generator, routing="dest-mod-k", mgmt_rate=None,
            arbitration=None):
    d = {"pxfab": FORMAT_VERSION, "name": generator["shape"], "mtu": mtu, "rate": rate,
         "routing": routing,
         "mgmt": {"subnet": mgmt_subnet,
                  "host": str(_net(mgmt_subnet, "management subnet").broadcast_address - 1)},
         "generator": generator}
    if mgmt_rate:
        d["mgmt"]["rate"] = mgmt_rate
    if lanes:
        d["classes"] = _classes_from_lanes(lanes)
    if arbitration:
        d["arbitration"] = arbitration
    return d


def gen_rails(nodes, rails=1, paths=1, rate=DEFAULT_RATE, mtu=DEFAULT_MTU,
              mgmt_subnet=DEFAULT_MGMT_SUBNET, lanes=None, node_prefix="node", mgmt_rate=None,
              arbitration=None):
    """N nodes, R rails; each rail is one switch (a bridge)."""
    if nodes < 1 or rails < 1 or paths < 1:
        raise FabError("--nodes, --rails and --paths must be at least 1")
    gen = {"shape": "rails", "nodes": nodes, "rails": rails, "paths": paths}
    d = _common(nodes, rate, mtu, mgmt_subnet, lanes, gen, mgmt_rate=mgmt_rate,
                arbitration=arbitration)
    d["nodes"] = [{"name": f"{node_prefix}{i}", "mgmt": _mgmt_addr(mgmt_subnet, i),
                   "ifaces": {f"rail{r}": [_rail_addr(r, p, i) for p in range(paths)]
                              for r in range(rails)}} for i in range(nodes)]
    d["switches"] = [{"name": f"rail{r}", "kind": "bridge", "rail": r} for r in range(rails)]
    d["links"] = [{"a": f"{node_prefix}{i}:rail{r}", "b": f"rail{r}"}
                  for r in range(rails) for i in range(nodes)]
    return d


def gen_fattree(leaves, spines, nodes_per_leaf, rails=1, paths=1, rate=DEFAULT_RATE,
                uplink_rate=None, mtu=DEFAULT_MTU, mgmt_subnet=DEFAULT_MGMT_SUBNET, lanes=None,
                node_prefix="node", routing="dest-mod-k", mgmt_rate=None, arbitration=None):
    """Two-level fat-tree per rail: leaves (routers) with K nodes each, spines above.

    Each rail is its own plane of switches. With one rail the switches are
    leaf0.. and spine0..; with several, r<R>-leaf<L> and r<R>-spine<S>.
    """
    if leaves < 1 or nodes_per_leaf < 1 or rails < 1 or paths < 1 or spines < 0:
        raise FabError("--leaves, --nodes-per-leaf, --rails and --paths must be at least 1")
    if leaves > 1 and spines < 1:
        raise FabError("a fat-tree with several leaves needs at least one spine")
    gen = {"shape": "fattree", "leaves": leaves, "spines": spines, "nodes_per_leaf": nodes_per_leaf,
           "rails": rails, "paths": paths}
    d = _common(leaves * nodes_per_leaf, rate, mtu, mgmt_subnet, lanes, gen, routing, mgmt_rate,
                arbitration)
    n = leaves * nodes_per_leaf
    d["nodes"] = [{"name": f"{node_prefix}{i}", "mgmt": _mgmt_addr(mgmt_subnet, i),
                   "ifaces": {f"rail{r}": [_rail_addr(r, p, i) for p in range(paths)]
                              for r in range(rails)}} for i in range(n)]
    d["switches"] = []
    d["links"] = []

    def sw(kind, r, k):
        return f"{kind}{k}" if rails == 1 else f"r{r}-{kind}{k}"

    for r in range(rails):
        for l in range(leaves):
            d["switches"].append({"name": sw("leaf", r, l), "kind": "router", "rail": r, "level": 0})
        for s in range(spines):
            d["switches"].append({"name": sw("spine", r, s), "kind": "router", "rail": r, "level": 1})
        for i in range(n):
            d["links"].append({"a": f"{node_prefix}{i}:rail{r}", "b": sw("leaf", r, i // nodes_per_leaf)})
        for l in range(leaves):
            for s in range(spines):
                link = {"a": sw("leaf", r, l), "b": sw("spine", r, s)}
                if uplink_rate is not None:
                    link["rate"] = uplink_rate
                d["links"].append(link)
    # Ports in a switch are named after their peer: leaf ports toward spines get
    # the spine's name, which must fit an interface name.
    return d


def load(path_or_obj):
    """Parse and validate a description from a path, a JSON string or a dict."""
    if isinstance(path_or_obj, dict):
        raw = path_or_obj
    else:
        try:
            with open(path_or_obj) as f:
                text = f.read()
        except OSError as e:
            raise FabError(f"cannot read description: {e}") from None
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise FabError(f"{path_or_obj}: invalid JSON: {e}") from None
    return Fabric(raw)
