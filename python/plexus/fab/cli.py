"""pxfab: an emulated cluster fabric on one machine (see docs/fabric.md)."""

import argparse
import json
import os
import sys

from . import desc as D
from . import export as E
from . import fabric as F
from . import kernel as K
from . import schedule as S
from .desc import FabError

EPILOG = """examples:
  pxfab up --nodes 2 --rails 2 --rate 1gbit
  pxfab up --leaves 2 --spines 2 --nodes-per-leaf 2 --rails 1 --paths 2
  pxfab exec node0 -- ip -br addr
  pxfab routes node0 node2
  pxfab fault down node1:rail1        pxfab fault loss leaf0:spine1 10
  pxfab fault flap node0:rail0 --period 2 --for 10 --background
  pxfab schedule faults.json --background
  pxfab stats | pxfab status | pxfab export --format slurm
  pxfab down
"""


def _gen_args(p):
    g = p.add_argument_group("generators (instead of a description file)")
    g.add_argument("--nodes", type=int, help="nodes (rails shape: one switch per rail)")
    g.add_argument("--rails", type=int, default=1, help="rails per node (default 1)")
    g.add_argument("--paths", type=int, default=1, help="addresses (routed paths) per rail interface")
    g.add_argument("--leaves", type=int, help="fat-tree: leaf switches per rail")
    g.add_argument("--spines", type=int, help="fat-tree: spine switches per rail")
    g.add_argument("--nodes-per-leaf", type=int, help="fat-tree: nodes under each leaf")
    g.add_argument("--rate", default=D.DEFAULT_RATE, help="link rate, tc units (default 1gbit)")
    g.add_argument("--uplink-rate", help="fat-tree: leaf-spine link rate (oversubscription)")
    g.add_argument("--mtu", type=int, default=D.DEFAULT_MTU, help="MTU of every fabric link (default 1500)")
    g.add_argument("--mgmt-subnet", default=D.DEFAULT_MGMT_SUBNET,
                   help=f"management network (default {D.DEFAULT_MGMT_SUBNET})")
    g.add_argument("--mgmt-rate", help="shape the management network too (default: unshaped)")
    g.add_argument("--lanes", help="weighted classes by DSCP on every link, e.g. 40:4:high,10:3,18:1 "
                                   "(DSCP:WEIGHT, ':high' for the high-priority group)")
    g.add_argument("--high-limit", type=int,
                   help="arbitration: 4 KB units of high-priority data before a low-priority packet "
                        "may go (0..255, 255 = strict priority, the default)")
    g.add_argument("--class-queue", choices=("fifo", "fq"),
                   help="queue of each class: fifo (default) or fq (fair queuing among its flows)")
    g.add_argument("--routing", default="dest-mod-k", choices=D.ROUTINGS,
                   help="fat-tree spine choice: dest-mod-k (default) or path (symmetric)")


def _generate(a):
    if a.leaves is not None or a.spines is not None or a.nodes_per_leaf is not None:
        leaves = a.leaves if a.leaves is not None else 1
        spines = a.spines if a.spines is not None else 0
        k = a.nodes_per_leaf
        if k is None:
            if a.nodes is None or a.nodes % leaves:
                raise FabError("fat-tree needs --nodes-per-leaf (or --nodes divisible by --leaves)")
            k = a.nodes // leaves
        elif a.nodes is not None and a.nodes != k * leaves:
            raise FabError(f"--nodes {a.nodes} does not match --leaves {leaves} x --nodes-per-leaf {k}")
        return D.gen_fattree(leaves, spines, k, a.rails, a.paths, a.rate, a.uplink_rate, a.mtu,
                             a.mgmt_subnet, a.lanes, routing=a.routing, mgmt_rate=a.mgmt_rate,
                             arbitration=_arbitration(a))
    if a.nodes is None:
        raise FabError("give a description file, --nodes N (one switch per rail) or a fat-tree "
                       "(--leaves L --spines S --nodes-per-leaf K)")
    if a.uplink_rate:
        raise FabError("--uplink-rate applies to fat-trees only")
    return D.gen_rails(a.nodes, a.rails, a.paths, a.rate, a.mtu, a.mgmt_subnet, a.lanes,
                       mgmt_rate=a.mgmt_rate, arbitration=_arbitration(a))


def _arbitration(a):
    arb = {}
    if a.high_limit is not None:
        arb["high_limit"] = a.high_limit
    if a.class_queue:
        arb["queue"] = a.class_queue
    return arb or None


def _description(a):
    if getattr(a, "file", None):
        return D.load(a.file)
    return D.Fabric(_generate(a))


def _fabric_for_read(a):
    """A description file if given, else the running fabric."""
    if getattr(a, "file", None):
        return None, D.load(a.file)
    st = F.load_state()
    if st is None:
        raise FabError("no fabric is up; pass --file DESCRIPTION")
    return st, D.Fabric(st["description"])


def cmd_up(a):
    fab = _description(a)
    st = F.up(fab)
    n, s, l = len(fab.nodes), len(fab.switches), len(fab.links)
    print(f"pxfab: fabric '{fab.name}' is up: {n} nodes, {s} switches, {l} links "
          f"in {st['build_seconds']:.2f}s")
    names = E.hostlist([x["name"] for x in fab.nodes])
    print(f"  nodes (network namespaces): {names}")
    print(f"  management: bridge {F.MGMT_BRIDGE}, host {fab.mgmt_host}, subnet {fab.mgmt_subnet}")
    print(f"  run:    pxfab exec {fab.nodes[0]['name']} -- CMD     or  ip netns exec {fab.nodes[0]['name']} CMD")
    print(f"  launch: pxrun --launcher 'ip netns exec {{host}}' --hosts {','.join(x['name'] for x in fab.nodes[:2])}"
          f"{',...' if len(fab.nodes) > 2 else ''} --bootstrap-iface {F.MGMT_BRIDGE} ...")
    print(f"  ssh-style agent for mpiexec: {os.path.join(F.state_dir(), 'rsh')}")
    return 0


def cmd_gen(a):
    raw = _generate(a)
    D.Fabric(raw)
    json.dump(raw, sys.stdout, indent=1)
    print()
    return 0


def cmd_validate(a):
    fab = D.load(a.file)
    print(f"{a.file}: valid ({len(fab.nodes)} nodes, {len(fab.switches)} switches, {len(fab.links)} links)")
    return 0


def cmd_down(a):
    F.down()
    return 0


def cmd_status(a):
    st = F.status()
    if a.json:
        print(json.dumps(st, indent=1))
        return 0
    if not st.get("phase"):
        print("pxfab: no fabric is up" + (f" (leftovers: {', '.join(st['leftovers'])})" if st["leftovers"] else ""))
        return 0
    print(f"fabric: {'up' if st['up'] else st['phase']}   state: {st['state_file']}   "
          f"mgmt: {st['mgmt']['bridge']} {st['mgmt']['host']} ({st['mgmt']['subnet']})")
    for n in st["nodes"]:
        ifs = "  ".join(f"{k}={','.join(v)}" for k, v in n["ifaces"].items())
        flags = (" PARTITIONED" if n["partitioned"] else "") + ("" if n["present"] else " MISSING")
        print(f"node   {n['name']:10s} mgmt={n['mgmt']}  {ifs}{flags}")
    for s in st["switches"]:
        print(f"switch {s['name']:10s} {s['kind']:6s} netns={s['netns']}{'' if s['present'] else ' MISSING'}")
    for l in st["links"]:
        extra = f" loss={l['loss_percent']}%" if l["loss_percent"] else ""
        print(f"link   {l['name']:22s} {l['state']:4s} {l['rate']:>8s} mtu={l['mtu']}{extra}   "
              f"{l['a']} <-> {l['b']}")
    for j in st["jobs"]:
        print(f"job    pid {j['pid']} {'running' if j['alive'] else 'finished'}: {j['what']}  (log {j['log']})")
    return 0


def cmd_stats(a):
    print(json.dumps(F.stats(a.links or None), indent=1))
    return 0


def cmd_show(a):
    st, fab = F.current(require_up=False)
    print(json.dumps(st["description"], indent=1))
    return 0


def _node_addrs(fab, name):
    n = fab.resolve_node(name)
    return [(ifname, p, a) for ifname, addrs in n["ifaces"].items() for p, a in enumerate(addrs)]


def route_table(fab, src, dst, down=()):
    rows = []
    for sif, sp, sa in _node_addrs(fab, src):
        for dif, dp, da in _node_addrs(fab, dst):
            # The kernel sends from the interface whose subnet holds the destination;
            # a source address on another interface does not change the path.
            out = [f for f, addrs in fab.node_by_name[src]["ifaces"].items()
                   if any(da.ip in x.network for x in addrs)]
            if out != [sif]:
                continue
            t = fab.trace(sa.ip, da.ip, down)
            b = fab.trace(da.ip, sa.ip, down)
            rows.append({"src": str(sa.ip), "dst": str(da.ip), "rail": dif, "path": dp,
                         "src_path": sp, "hops": t["hops"], "links": t["links"], "ok": t["ok"],
                         **({"reason": t["reason"]} if not t["ok"] else {}),
                         "back": {"hops": b["hops"], "links": b["links"], "ok": b["ok"],
                                  **({"reason": b["reason"]} if not b["ok"] else {})}})
    return rows


def cmd_routes(a):
    st, fab = _fabric_for_read(a)
    down = set((st or {}).get("faults", {}).get("down", []))
    rows = route_table(fab, a.src, a.dst, down)
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    for r in rows:
        path = " -> ".join(r["hops"])
        bad = "" if r["ok"] else f"   BROKEN: {r['reason']}"
        back = r["back"]
        # Routes depend on the destination only, so replies may take another spine.
        back_txt = "" if back["hops"] == list(reversed(r["hops"])) else \
            f"   (back: {' -> '.join(back['hops'])}{'' if back['ok'] else ' BROKEN: ' + back['reason']})"
        print(f"{r['src']:>15s} -> {r['dst']:<15s} {r['rail']} path {r['path']}: {path}{bad}{back_txt}")
    if not rows:
        print(f"no address of {a.dst} is on a subnet of {a.src}")
    return 0


def cmd_exec(a):
    cmd = list(a.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    ns = F.node_ns(a.node)
    if not cmd:
        cmd = [os.environ.get("SHELL", "/bin/sh")]
    K.require_root("'pxfab exec'")
    os.execvp("ip", ["ip", "netns", "exec", ns] + cmd)


def cmd_rsh(a):
    """ssh-compatible agent: `pxfab rsh [ssh options] HOST COMMAND...`."""
    args = list(a.args)
    takes_value = set("opliFEbcDeJLmOQRSWw")
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if len(opt) == 2 and opt[1] in takes_value and args:
            args.pop(0)
    if not args:
        raise FabError("pxfab rsh: no host given")
    host, rest = args[0], args[1:]
    ns = F.node_ns(host)
    os.execvp("ip", ["ip", "netns", "exec", ns, "sh", "-c", " ".join(rest) if rest else "exec $SHELL"])


def cmd_fault(a):
    act = a.action
    if act in ("down", "up"):
        F.apply_fault(act, a.target)
        print(f"pxfab: {F.current()[1].resolve_link(a.target).name} {act}")
    elif act == "loss":
        F.apply_fault("loss", a.target, a.value)
        print(f"pxfab: loss {F.parse_percent(a.value):g}% on {a.target}")
    elif act == "rate":
        F.apply_fault("rate", a.target, a.value)
        print(f"pxfab: {a.target} rate {a.value}")
    elif act == "block":
        F.apply_fault("block", a.target, a.value)
        print(f"pxfab: DSCP {a.value} dropped on {a.target}")
    elif act == "unblock":
        F.apply_fault("unblock", a.target)
        print(f"pxfab: {a.target} carries every class again")
    elif act == "partition":
        F.apply_fault("partition", a.target, not a.rails_only)
        print(f"pxfab: {a.target} partitioned" + (" (rails only)" if a.rails_only else ""))
    elif act == "heal":
        F.apply_fault("heal", a.target)
        print(f"pxfab: {a.target} healed")
    elif act == "reset":
        F.apply_fault("reset")
        print("pxfab: all faults cleared")
    elif act == "flap":
        K.require_root("'pxfab fault flap'")
        st, fab = F.current()
        name = fab.resolve_link(a.target).name
        events = S.flap_events(name, a.period, getattr(a, "for"))
        if a.background:
            pid, log = S.spawn(events, f"flap {name} period {a.period}s for {getattr(a, 'for')}s")
            print(f"pxfab: flapping {name} in the background (pid {pid}, log {log})")
        else:
            S.run(events)
    return 0


def cmd_schedule(a):
    K.require_root("'pxfab schedule'")
    st, fab = F.current()
    events = S.check(S.load_events(a.file), fab)
    if a.background:
        pid, log = S.spawn(events, f"schedule {a.file}")
        print(f"pxfab: schedule {a.file} running in the background (pid {pid}, log {log})")
        return 0
    return 0 if S.run(events) else 1


def cmd_job(a):
    return 0 if S.run_job_file(a.path) else 1


def cmd_export(a):
    st, fab = _fabric_for_read(a)
    rates = (st or {}).get("faults", {}).get("rate", {})
    text = E.export(fab, a.format, a.rail, rates)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def parser():
    ap = argparse.ArgumentParser(prog="pxfab", description=__doc__, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("up", help="build a fabric (from a description file or a generator)")
    p.add_argument("file", nargs="?", help="fabric description (JSON)")
    _gen_args(p)
    p.set_defaults(fn=cmd_up)

    p = sub.add_parser("gen", help="print the description a generator makes (no root needed)")
    _gen_args(p)
    p.set_defaults(fn=cmd_gen)

    p = sub.add_parser("validate", help="check a description file")
    p.add_argument("file")
    p.set_defaults(fn=cmd_validate)

    p = sub.add_parser("down", help="remove everything pxfab created")
    p.set_defaults(fn=cmd_down)

    p = sub.add_parser("status", help="what exists: nodes, switches, links, faults, jobs")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_status)

    p = sub.add_parser("stats", help="per-link bytes, packets and drops as JSON")
    p.add_argument("links", nargs="*")
    p.set_defaults(fn=cmd_stats)

    p = sub.add_parser("show", help="print the running fabric's description")
    p.set_defaults(fn=cmd_show)

    p = sub.add_parser("routes", help="switch-level path for every address pair from node A to node B")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--json", action="store_true")
    p.add_argument("--file", help="a description instead of the running fabric")
    p.set_defaults(fn=cmd_routes)

    p = sub.add_parser("exec", help="run a command on a node: pxfab exec NODE -- CMD ...")
    p.add_argument("node")
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    p.set_defaults(fn=cmd_exec)

    p = sub.add_parser("rsh", help="ssh-compatible agent for MPI launchers: pxfab rsh [opts] HOST CMD")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=cmd_rsh)

    p = sub.add_parser("fault", help="inject or clear a fault")
    fs = p.add_subparsers(dest="action", metavar="ACTION")
    fs.required = True
    for act, hlp in (("down", "cut a link"), ("up", "restore a link")):
        q = fs.add_parser(act, help=hlp)
        q.add_argument("target", metavar="LINK")
        q.set_defaults(fn=cmd_fault)
    for act, value, hlp in (
            ("loss", "PERCENT", "drop PERCENT of the packets in each direction (0 clears)"),
            ("rate", "RATE", "change a link's rate (both directions)"),
            ("block", "DSCP[,DSCP...]", "drop every packet of some DSCP values (a QoS lane failing)")):
        q = fs.add_parser(act, help=hlp)
        q.add_argument("target", metavar="LINK")
        q.add_argument("value", metavar=value)
        q.set_defaults(fn=cmd_fault)
    q = fs.add_parser("unblock", help="end a block")
    q.add_argument("target", metavar="LINK")
    q.set_defaults(fn=cmd_fault)
    q = fs.add_parser("partition", help="isolate a node (rails and management)")
    q.add_argument("target", metavar="NODE")
    q.add_argument("--rails-only", action="store_true", help="keep the management network")
    q.set_defaults(fn=cmd_fault)
    q = fs.add_parser("heal", help="end a node's partition")
    q.add_argument("target", metavar="NODE")
    q.set_defaults(fn=cmd_fault)
    q = fs.add_parser("flap", help="take a link down and up repeatedly")
    q.add_argument("target", metavar="LINK")
    q.add_argument("--period", type=float, required=True, help="seconds per down+up cycle")
    q.add_argument("--for", type=float, required=True, help="total seconds (the link ends up)")
    q.add_argument("--background", action="store_true")
    q.set_defaults(fn=cmd_fault)
    q = fs.add_parser("reset", help="clear every fault")
    q.set_defaults(fn=cmd_fault)

    p = sub.add_parser("schedule", help="run timed fault events from a JSON file")
    p.add_argument("file")
    p.add_argument("--background", action="store_true")
    p.set_defaults(fn=cmd_schedule)

    p = sub.add_parser("_job")
    p.add_argument("path")
    p.set_defaults(fn=cmd_job)

    p = sub.add_parser("export", help="write the topology: plexus-json, slurm, ibnetdiscover, hosts")
    p.add_argument("--format", default="plexus-json", choices=E.FORMATS)
    p.add_argument("--rail", type=int, help="slurm: which rail's plane (default 0)")
    p.add_argument("--file", help="a description instead of the running fabric")
    p.add_argument("-o", "--output")
    p.set_defaults(fn=cmd_export)
    return ap


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] == "rsh":
        # ssh options come first and must not be parsed as pxfab's own.
        a = argparse.Namespace(fn=cmd_rsh, args=argv[1:])
    else:
        a = parser().parse_args(argv)
    try:
        return a.fn(a)
    except PermissionError as e:
        print(str(e) if str(e).startswith("pxfab") else f"pxfab: {e}", file=sys.stderr)
        return 3
    except FabError as e:
        print(f"pxfab: error: {e}", file=sys.stderr)
        return 2
    except K.KernelError as e:
        print(f"pxfab: failed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # output piped into `head` and the like: not an error of pxfab's
        sys.stderr.close()
        return 0
