"""Reading fabric descriptions: Plexus JSON (pxfab export), ibnetdiscover
output, Slurm's topology.conf. The format is recognised from the text."""

import json
import re

from .model import Fabric, TopoError

FORMATS = ("plexus-json", "ibnetdiscover", "slurm")


def load(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise TopoError(f"cannot open {path}: {e.strerror}") from None
    return parse(text, path)


def parse(text, name="<text>"):
    head = text.lstrip()
    if head.startswith("{"):
        return parse_json(text, name)
    for line in text.splitlines():
        if re.match(r"(Switch|Ca|Rt)\s", line) or line.startswith(("switchguid=", "caguid=")):
            return parse_ibnet(text, name)
    return parse_slurm(text, name)


# ---- Plexus JSON --------------------------------------------------------------

def parse_json(text, name):
    try:
        d = json.loads(text)
    except json.JSONDecodeError as e:
        raise TopoError(f"{name}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(d, dict) or d.get("format") != "plexus-topology" or \
            not isinstance(d.get("nodes"), list) or not isinstance(d.get("links"), list):
        raise TopoError(f'{name}: not a Plexus topology ("format": "plexus-topology" with nodes '
                        "and links; pxfab export --format plexus-json writes one)")
    fab = Fabric("plexus-json")
    for i, s in enumerate(d.get("switches") or []):
        if not isinstance(s.get("name"), str):
            raise TopoError(f"{name}: switch {i} has no name")
        lv = s.get("level")
        fab.add_switch(s["name"], lv if isinstance(lv, int) and not isinstance(lv, bool) else None)
    addrs = {}
    for i, n in enumerate(d["nodes"]):
        if not isinstance(n.get("name"), str):
            raise TopoError(f"{name}: node {i} has no name")
        hv = fab.add_host(n["name"])
        for j, r in enumerate(n.get("rails") or []):
            fab.add_port(hv, r.get("iface") if isinstance(r.get("iface"), str) else f"rail{j}")
            for k, a in enumerate(r.get("addresses") or []):
                if isinstance(a, str):
                    addrs.setdefault(a.split("/")[0], (fab.v[hv].index, j, k))

    def end(owner, port, peer):
        v = fab.host_vertex(owner)
        if v is None:
            v = fab.switch_vertex(owner)
        if v is None:
            return None, None
        return v, fab.add_port(v, port if isinstance(port, str) else peer)

    for i, l in enumerate(d["links"]):
        a, b = l.get("a"), l.get("b")
        va = vb = None
        if isinstance(a, str) and isinstance(b, str):
            va, pa = end(a, l.get("a_port"), b)
            if va is not None:
                vb, pb = end(b, l.get("b_port"), a)
        if va is None or vb is None:
            bad = "(none)" if not isinstance(a, str) else a if va is None else \
                b if isinstance(b, str) else "(none)"
            raise TopoError(f"{name}: link {i}: unknown end {bad}")
        rate = l.get("rate_bps")
        rate = int(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) \
            and rate > 0 else 0
        try:
            fab.connect(va, pa, vb, pb, rate)
        except TopoError:
            raise TopoError(f"{name}: link {i}: a port of {a}-{b} is cabled twice") from None
    routes = (d.get("routing") or {}).get("routes") or {}
    for sw, table in routes.items():
        sv = fab.switch_vertex(sw)
        if sv is None:
            raise TopoError(f"{name}: routes of unknown switch {sw}")
        for ip, port in table.items():
            p = fab.add_port(sv, port) if isinstance(port, str) else None
            if ip not in addrs or p is None or fab.v[sv].ports[p][1] is None:
                raise TopoError(f"{name}: switch {sw}: route to {ip}: unknown "
                                f"{'address' if ip not in addrs else 'port'}")
            fab.v[sv].fwd.setdefault(addrs[ip], p)
    return _finish(fab, name)


def _finish(fab, name):
    if not fab.hosts:
        raise TopoError(f"{name}: the description has no hosts")
    return fab


# ---- ibnetdiscover ----------------------------------------------------------------

_NODE = re.compile(r'^\s*(Switch|Ca|Rt)\s+\d+\s+"([^"]*)"(.*)$')
_PORT = re.compile(r'^\s*\[(\d+)\](?:\([0-9a-fA-F]*\))?\s*"([^"]*)"\[(\d+)\](?:\([0-9a-fA-F]*\))?(.*)$')
_LANE_MBPS = {"SDR": 2500, "DDR": 5000, "QDR": 10000, "FDR10": 10000, "FDR": 14000,
              "EDR": 25000, "HDR": 50000, "NDR": 100000, "XDR": 200000}
_UNIT = {"Gbit": 10**9, "Mbit": 10**6, "Kbit": 10**3, "bit": 1}


def ib_rate(comment):
    """Link rate in bit/s from a comment: IB width and speed (4xQDR) or pxfab's 'rate 10Gbit'."""
    m = re.search(r"rate (\d+(?:\.\d*)?)(Gbit|Mbit|Kbit|bit)", comment)
    if m:
        return int(float(m.group(1)) * _UNIT[m.group(2)])
    for m in re.finditer(r"(?:^|(?<=\s))(\d+)x([A-Z0-9]+)(?=\s|$)", comment):
        if m.group(2) in _LANE_MBPS:
            return int(m.group(1)) * _LANE_MBPS[m.group(2)] * 10**6
    return 0


def parse_ibnet(text, name):
    nodes = []           # [guid, desc, is_switch, ports]
    by_guid = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _NODE.match(line)
        if m:
            kind, guid, rest = m.groups()
            dm = re.match(r'\s*#\s*"([^"]*)"', rest)
            node = [guid, dm.group(1) if dm else "", kind != "Ca", []]
            nodes.append(node)
            by_guid.setdefault(guid, node)
            continue
        if line.lstrip().startswith("[") and nodes:
            pm = _PORT.match(line)
            if not pm:
                raise TopoError(f"{name}:{lineno}: not a port line: {line.strip()}")
            port, peer, peer_port, rest = pm.groups()
            comment = rest.split("#", 1)[1] if "#" in rest else ""
            dm = re.match(r'\s*"([^"]*)"', comment)
            after = comment[dm.end():] if dm else comment
            lm = re.search(r"lid (\d+)(?: lmc (\d+))?", after)
            nodes[-1][3].append((int(port), peer, int(peer_port),
                                 dm.group(1) if dm else "", ib_rate(comment),
                                 int(lm.group(1)) if lm else 0,
                                 int(lm.group(2)) if lm and lm.group(2) else 0))
    for node in list(nodes):
        for _, peer, _, peer_desc, *_ in node[3]:
            if peer not in by_guid:
                extra = [peer, peer_desc, not peer.startswith("H"), []]
                nodes.append(extra)
                by_guid[peer] = extra
    fab = Fabric("ibnetdiscover")
    vertex = {}
    switch_descs = [n[1] for n in nodes if n[2]]
    for pass_switch in (False, True):
        for guid, desc, is_switch, _ in nodes:
            if is_switch != pass_switch or guid in vertex:
                continue
            if not is_switch:
                host = desc.split()[0] if desc.split() else guid
                vertex[guid] = fab.add_host(host)
            else:
                repeated = not desc or switch_descs.count(desc) > 1
                vertex[guid] = fab.add_switch(guid if repeated else desc)
    desc_of = {n[0]: n for n in nodes}

    def port(guid, num):
        _, desc, is_switch, _ = desc_of[guid]
        words = desc.split(None, 1)
        rest = words[1].strip() if len(words) > 1 else ""
        pname = str(num) if is_switch or not rest else f"{rest}/{num}"
        return fab.add_port(vertex[guid], pname)

    for guid, _, is_switch, ports in nodes:
        if not is_switch:
            for p in ports:
                port(guid, p[0])
    for guid, _, _, ports in nodes:
        for num, peer, peer_port, _, rate, *_ in ports:
            pa, pb = port(guid, num), port(peer, peer_port)
            try:
                fab.connect(vertex[guid], pa, vertex[peer], pb, rate)
            except TopoError:
                raise TopoError(f"{name}: port {num} of {guid} is cabled to two places") from None
    if "Unicast lids" in text:
        _ib_lfts(fab, nodes, desc_of, vertex, port, text, name)
    return _finish(fab, name)


_IB_LIDS = 0xC000


def _ib_lfts(fab, nodes, desc_of, vertex, port, text, name):
    """OpenSM's forwarding tables after the ibnetdiscover text, as ibroute and
    dump_lfts.sh print them or as opensm-lfts.dump holds them: a switch by its
    GUID, a destination LID by the LIDs of the host ports (base LID + path
    under LMC); entries toward switches are skipped."""
    lids = {}
    for pass_switch in (False, True):
        for guid, _, is_switch, ports in nodes:
            if is_switch != pass_switch:
                continue
            for num, peer, peer_port, _, _, lid, lmc in ports:
                owner = desc_of.get(peer) if is_switch else desc_of[guid]
                if owner is None or owner[2] or lid <= 0:
                    continue
                rail = port(owner[0], peer_port if is_switch else num)
                host = fab.v[vertex[owner[0]]].index
                for p in range(1 << (0 if is_switch or not 0 < lmc < 8 else lmc)):
                    if lid + p < _IB_LIDS:
                        lids.setdefault(lid + p, (host, rail, p))
    guids = {int(g[2:], 16): vertex[g] for g, _, is_switch, _ in nodes if is_switch}
    sw = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        p = line.strip()
        if p.startswith("Unicast lids"):
            m = re.search(r" guid 0x([0-9a-fA-F]+)", p)
            g = int(m.group(1), 16) if m else 0
            sw = guids.get(g)
            if sw is None:
                raise TopoError(f"{name}:{lineno}: forwarding table of switch 0x{g:016x}, "
                                "which the description lacks")
        elif "lids dumped" in p:
            sw = None
        elif sw is not None and p.startswith("0x"):
            m = re.match(r"0x([0-9a-fA-F]+)\s+(\d+)", p)
            if not m:
                continue
            lid, out = int(m.group(1), 16), int(m.group(2))
            if lid not in lids:
                continue
            pi = fab.add_port(sw, str(out))
            if fab.v[sw].ports[pi][1] is None:
                raise TopoError(f"{name}:{lineno}: switch {fab.v[sw].name} sends LID {lid} to "
                                f"port {out}, not cabled")
            fab.v[sw].fwd.setdefault(lids[lid], pi)


# ---- Slurm topology.conf ------------------------------------------------------------

def expand_hostlist(text):
    """'node[01-03,7],gpu1' -> ['node01', 'node02', 'node03', 'node07', 'gpu1']."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text + ","):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "," and depth == 0:
            if i > start:
                items.append(text[start:i])
            start = i + 1
    if depth:
        raise TopoError(f"bad host list {text!r}")
    out = []
    for item in items:
        out.extend(_expand(item))
    return out


def _expand(item):
    m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", item)
    if not m:
        return [item]
    prefix, ranges, rest = m.groups()
    out = []
    for r in ranges.split(","):
        rm = re.match(r"^(\d+)(?:-(\d+))?$", r)
        if not rm or (rm.group(2) and int(rm.group(2)) < int(rm.group(1))):
            raise TopoError(f"bad host list {item!r}")
        width = len(rm.group(1))
        for v in range(int(rm.group(1)), int(rm.group(2) or rm.group(1)) + 1):
            out.extend(_expand(f"{prefix}{v:0{width}d}{rest}"))
    return out


def parse_slurm(text, name):
    fab = Fabric("slurm")
    lines = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        kv = {}
        for tok in line.split():
            k, sep, v = tok.partition("=")
            if sep:
                kv.setdefault(k.lower(), v)
        if "switchname" not in kv:
            raise TopoError(f"{name}:{lineno}: expected SwitchName=...: {line}")
        lines.append((lineno, kv))
        fab.add_switch(kv["switchname"])
    for lineno, kv in lines:
        sv = fab.switch_vertex(kv["switchname"])
        try:
            rate = int(re.match(r"\d*", kv.get("linkspeed", "")).group(0) or 0) * 10**6
            for host in expand_hostlist(kv.get("nodes", "")):
                hv = fab.add_host(host)
                fab.connect(sv, fab.add_port(sv, host), hv, fab.add_port(hv, "hca0"), rate)
            for child in expand_hostlist(kv.get("switches", "")):
                cv = fab.switch_vertex(child)
                if cv is None:
                    raise TopoError(f"{name}:{lineno}: switch {child} is not described")
                fab.connect(sv, fab.add_port(sv, child), cv,
                            fab.add_port(cv, kv["switchname"]), rate)
        except TopoError as e:
            msg = str(e)
            if msg.startswith(name):
                raise
            if "cabled twice" in msg:
                raise TopoError(f"{name}:{lineno}: {kv['switchname']} is listed twice") from None
            raise TopoError(f"{name}:{lineno}: bad host list") from None
    return _finish(fab, name)
