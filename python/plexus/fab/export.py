"""Topology export: Plexus JSON (read by src/topo), Slurm topology.conf, ibnetdiscover-style text, hosts."""

import json
import re

from . import desc as D

FORMATS = ("plexus-json", "slurm", "ibnetdiscover", "hosts")


def levels(fab):
    """Switch level: 0 for switches with nodes attached, then one more per hop away."""
    lvl = {}
    frontier = []
    for s in fab.switches:
        if s.get("level") is not None:
            continue
        if any(other.is_node for _, _, other in fab.adj.get(s["name"], [])):
            lvl[s["name"]] = 0
            frontier.append(s["name"])
    while frontier:
        nxt = []
        for cur in frontier:
            for _, _, other in fab.adj.get(cur, []):
                if not other.is_node and other.owner not in lvl:
                    lvl[other.owner] = lvl[cur] + 1
                    nxt.append(other.owner)
        frontier = nxt
    for s in fab.switches:
        if s.get("level") is not None:
            lvl[s["name"]] = s["level"]
        lvl.setdefault(s["name"], 0)
    return lvl


def plexus_json(fab, rates=None):
    rates = rates or {}
    lvl = levels(fab)
    nodes = []
    for n in fab.nodes:
        rails = []
        for ifname, addrs in n["ifaces"].items():
            link = fab.node_iface_link[(n["name"], ifname)]
            sw = link.other(n["name"])
            m = re.search(r"(\d+)$", ifname)
            rails.append({"rail": int(m.group(1)) if m else len(rails), "iface": ifname,
                          "addresses": [str(a) for a in addrs], "paths": len(addrs),
                          "switch": sw.owner, "port": sw.dev, "link": link.name,
                          "rate_bps": rates.get(link.name, link.rate), "mtu": link.mtu})
        nodes.append({"name": n["name"], "mgmt": str(n["mgmt"]), "rails": rails})
    switches = [{"name": s["name"], "kind": s["kind"], "rail": fab.switch_rail(s["name"]),
                 "level": lvl[s["name"]], "addr": str(s["addr"]) if s["addr"] else None}
                for s in fab.switches]
    links = [{"name": l.name, "a": l.a.owner, "a_port": l.a.dev, "b": l.b.owner, "b_port": l.b.dev,
              "rate_bps": rates.get(l.name, l.rate), "mtu": l.mtu,
              "classes": [{"dscp": c["dscp"], "weight": c["weight"], "classid": f"1:{c['minor']}",
                           "priority": c.get("priority", "low")} for c in l.classes],
              "arbitration": l.arbitration}
             for l in fab.links]
    routes = {sw: {str(ip): port for ip, port in sorted(t.items())} for sw, t in fab.routes.items()}
    return {"format": "plexus-topology", "version": 1, "name": fab.name,
            "mgmt": {"subnet": str(fab.mgmt_subnet), "host": str(fab.mgmt_host)},
            "nodes": nodes, "switches": switches, "links": links,
            "routing": {"scheme": "destination /32 routes; equal-cost choice "
                                  "(node index + path index) mod candidates",
                        "routes": routes}}


def hostlist(names):
    """Compress node3,node4,node5,leaf0 -> leaf0,node[3-5] (Slurm hostlist syntax)."""
    groups = {}
    plain = []
    for n in names:
        m = re.match(r"^(.*?)(\d+)$", n)
        if m and not (len(m.group(2)) > 1 and m.group(2).startswith("0")):
            groups.setdefault(m.group(1), []).append(int(m.group(2)))
        else:
            plain.append(n)
    out = list(plain)
    for prefix, nums in sorted(groups.items()):
        nums = sorted(set(nums))
        if len(nums) == 1:
            out.append(f"{prefix}{nums[0]}")
            continue
        ranges = []
        start = prev = nums[0]
        for x in nums[1:] + [None]:
            if x is not None and x == prev + 1:
                prev = x
                continue
            ranges.append(f"{start}" if start == prev else f"{start}-{prev}")
            if x is not None:
                start = prev = x
        out.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(out)


def slurm(fab, rail=None):
    """topology.conf (topology/tree) for one rail's plane (rail 0 unless told)."""
    lvl = levels(fab)
    if rail is None:
        rail = 0
    sws = [s for s in fab.switches if fab.switch_rail(s["name"]) == rail]
    if not sws:
        raise D.FabError(f"no switches on rail {rail}")
    lines = [f"# Slurm topology.conf for fabric '{fab.name}', rail {rail} (written by pxfab export)"]
    for s in sorted(sws, key=lambda s: (lvl[s["name"]], D._natural_key(s["name"]))):
        nodes = [o.owner for _, _, o in fab.adj.get(s["name"], []) if o.is_node]
        below = [o.owner for _, _, o in fab.adj.get(s["name"], [])
                 if not o.is_node and lvl[o.owner] < lvl[s["name"]]]
        rate = max([l.rate for l, _, _ in fab.adj.get(s["name"], [])] or [0])
        line = f"SwitchName={s['name']}"
        if nodes:
            line += f" Nodes={hostlist(nodes)}"
        if below:
            line += f" Switches={hostlist(below)}"
        line += f" LinkSpeed={rate // 10**6}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def ibnetdiscover(fab):
    """Text in the shape of `ibnetdiscover` output: switches and CAs with their ports."""
    guid = {}
    for i, s in enumerate(fab.switches):
        guid[s["name"]] = f"S-{0x0002c90000000000 + i:016x}"
    for i, n in enumerate(fab.nodes):
        guid[n["name"]] = f"H-{0x0002c90100000000 + i:016x}"
    ports = {}
    for owner in list(guid):
        for idx, (l, me, other) in enumerate(fab.adj.get(owner, []), start=1):
            ports[(owner, me.dev)] = idx
    out = [f"#\n# Topology file: generated by pxfab from fabric '{fab.name}'\n#", ""]
    for s in fab.switches:
        adj = fab.adj.get(s["name"], [])
        out.append(f"vendid=0x2c9\ndevid=0xcafe\nsysimgguid=0x{guid[s['name']][2:]}")
        out.append(f"switchguid=0x{guid[s['name']][2:]}")
        out.append(f"Switch\t{len(adj)} \"{guid[s['name']]}\"\t\t# \"{s['name']}\" base port 0 lid 0 lmc 0")
        for l, me, other in adj:
            out.append(f"[{ports[(s['name'], me.dev)]}]\t\"{guid[other.owner]}\"[{ports[(other.owner, other.dev)]}]"
                       f"\t\t# \"{other.owner}\" {_speed(l.rate)}")
        out.append("")
    for n in fab.nodes:
        adj = fab.adj.get(n["name"], [])
        out.append(f"vendid=0x2c9\ndevid=0xbeef\nsysimgguid=0x{guid[n['name']][2:]}")
        out.append(f"caguid=0x{guid[n['name']][2:]}")
        out.append(f"Ca\t{len(adj)} \"{guid[n['name']]}\"\t\t# \"{n['name']}\"")
        for l, me, other in adj:
            out.append(f"[{ports[(n['name'], me.dev)]}]\t\"{guid[other.owner]}\"[{ports[(other.owner, other.dev)]}]"
                       f"\t\t# {me.dev} lmc {max(0, (len(n['ifaces'][me.dev]) - 1).bit_length())} {_speed(l.rate)}")
        out.append("")
    return "\n".join(out)


def _speed(bps):
    return f"rate {D.format_rate(bps)}"


def hosts(fab):
    lines = [f"{fab.mgmt_host}\tpxfab-host"]
    lines += [f"{n['mgmt']}\t{n['name']}" for n in fab.nodes]
    return "\n".join(lines) + "\n"


def export(fab, fmt, rail=None, rates=None):
    if fmt == "plexus-json":
        return json.dumps(plexus_json(fab, rates), indent=1) + "\n"
    if fmt == "slurm":
        return slurm(fab, rail)
    if fmt == "ibnetdiscover":
        return ibnetdiscover(fab)
    if fmt == "hosts":
        return hosts(fab)
    raise D.FabError(f"unknown export format {fmt!r} (one of {', '.join(FORMATS)})")
