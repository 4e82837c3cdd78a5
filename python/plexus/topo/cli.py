"""pxtopo: questions about a fabric description (PX_TOPO or --topo FILE).

Hosts are named as in the description; a hop is a switch on the route.
"""

import argparse
import os
import sys

from . import place as placement
from .formats import load
from .model import TopoError

EPILOG = """examples:
  pxtopo --topo fabric.json hops node0 node3     switches between two hosts
  pxtopo --topo fabric.json path node0 node3     and which ones
  pxtopo --topo ibnet.txt clusters               switch clusters at every level
  pxtopo --topo topology.conf sharing hosts.txt  hosts of a host file sharing a leaf uplink
  pxtopo --topo topology.conf depth              levels of the cluster tree
  pxtopo --topo fabric.json place comm.graph hosts.txt -o ranks.hosts --slurm slurm.hosts
                                                 ranks of a METIS graph (or a JSON profile)
                                                 onto hosts: pxrun --hostfile ranks.hosts,
                                                 SLURM_HOSTFILE=slurm.hosts srun -m arbitrary
  pxtopo --topo fabric.json select free.txt 8    8 free nodes that share no leaf uplink
  pxtopo report plexus-profile-<job>.json -o report.html
                                                 a profile (PX_PROFILE=topo) as a page
"""


def read_hostfile(path):
    """Host names of a host file, each once: 'host', 'host:N' or 'host slots=N' lines."""
    out = []
    for name, _ in placement.read_hosts(path):
        if name not in out:
            out.append(name)
    return out


def dump(fab, out):
    """Every answer for a description, in the lines tests/topo/topo_dump.c prints."""
    n, ns = len(fab.hosts), len(fab.switches)
    out.write(f"format {fab.format}\nhosts {n}\nswitches {ns}\nlinks {len(fab.links)}\n")
    depth = fab.depth()
    out.write(f"depth {depth}\n")
    for level in range(depth + 1):
        cl = fab.clusters(level)
        out.write(f"level {level}: {len(cl)} clusters:" +
                  " |".join("".join(f" {h}" for h in c) for c in cl) + "\n")
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            p = fab.path(a, b)
            k = -1 if p is None else len(p)
            out.write(f"path {fab.host_name(a)} {fab.host_name(b)} {k}:" +
                      "".join(f" [{s}]" for s in (p or [])) + "\n")
    out.write(f"hosts_per_leaf {fab.hosts_per_leaf():.3f}\n")
    sh = fab.sharing(fab.host_names())
    out.write(f"sharing {len(sh)}:" + "".join(f" {h}" for h in sh) + "\n")


def _write(path, text):
    if not path or path == "-":
        sys.stdout.write(text)
        return
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise TopoError(f"cannot write {path}: {e.strerror}") from None


def _split_text(d):
    return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "no traffic"


def cmd_place(fab, args):
    n, edges = placement.read_graph(args.graph)
    hostlist = placement.read_hosts(args.hostfile)
    pl = placement.place(n, edges, hostlist, fab, args.partitioner)
    _write(args.output, placement.pxrun_hostfile(pl.hosts))
    if args.slurm:
        _write(args.slurm, placement.slurm_hostfile(pl.hosts))
    print(f"pxtopo place: {n} ranks on {len(set(pl.hosts))} hosts ({pl.how}); messages "
          f"in host-file order: {_split_text(placement.split(edges, pl.default, fab))}; "
          f"placed: {_split_text(placement.split(edges, pl.hosts, fab))}", file=sys.stderr)
    return 0


def cmd_select(fab, args):
    free = [h for h, _ in placement.read_hosts(args.hostfile)]
    chosen, shared = placement.select(fab, free, args.count)
    _write(args.output, "".join(f"{h}\n" for h in chosen))
    if shared:
        print(f"pxtopo select: not enough free nodes apart: {len(shared)} share a link above "
              f"the leaf level: {' '.join(shared)}", file=sys.stderr)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="pxtopo", description=__doc__, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topo", default=os.environ.get("PX_TOPO"),
                    help="fabric description (default: $PX_TOPO)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, hlp in (("hops", "number of switches on the route from host A to host B"),
                      ("path", "the switches on the route from host A to host B")):
        p = sub.add_parser(name, help=hlp)
        p.add_argument("a")
        p.add_argument("b")
        p.add_argument("--rail", type=int, default=0, help="rail (port) of the hosts (default 0)")
        p.add_argument("--path", type=int, default=0, dest="path_index",
                       help="path index toward B's address on that rail, as LMC (default 0)")
    p = sub.add_parser("clusters", help="switch clusters (hosts) at each level, or one level")
    p.add_argument("--level", type=int)
    sub.add_parser("depth", help="levels of the switch-cluster tree")
    p = sub.add_parser("sharing", help="hosts of a host file whose routes to each other share "
                       "a link just above the leaf level")
    p.add_argument("hostfile")
    p = sub.add_parser("per-leaf", help="hosts per leaf switch (of a host file, or all)")
    p.add_argument("hostfile", nargs="?")
    sub.add_parser("dump", help="every answer for the description (compared with the C library)")
    p = sub.add_parser("place", help="place the ranks of a communication graph onto a host "
                       "file's slots; writes a pxrun host file and a SLURM_HOSTFILE")
    p.add_argument("graph", help="METIS graph file, or a JSON profile "
                   "{\"nranks\": N, \"bytes\": [[...]]}")
    p.add_argument("hostfile", help="hosts with slots ('host', 'host:N', 'host slots=N'), "
                   "filled in order as pxrun fills them")
    p.add_argument("-o", "--output", help="pxrun host file to write (default: standard output)")
    p.add_argument("--slurm", help="SLURM_HOSTFILE to write, a host per task, for "
                   "srun --distribution=arbitrary")
    p.add_argument("--partitioner", choices=("auto", "metis", "greedy"), default="auto",
                   help="auto: gpmetis when installed, else greedy")
    p = sub.add_parser("select", help="pick COUNT nodes of a host file of free nodes that share "
                       "no link above the leaf level")
    p.add_argument("hostfile")
    p.add_argument("count", type=int)
    p.add_argument("-o", "--output", help="host file to write (default: standard output)")
    p = sub.add_parser("report", help="an HTML page of a profile (PX_PROFILE=topo): the fabric "
                       "coloured by link load, bytes per rank by hop class, the matrix")
    p.add_argument("profile", help="the JSON file the job wrote")
    p.add_argument("-o", "--output", required=True, help="the HTML page to write")
    p.add_argument("--fabric", help="classify against this description instead of the "
                   "profile's own (e.g. a profile taken without PX_TOPO)")
    p.add_argument("--by", choices=("rank", "node"),
                   help="bars of the histogram (default: rank up to 64 ranks, else node)")
    args = ap.parse_args(argv)
    if args.cmd == "report":
        from .report import report
        try:
            prof = report(args.profile, args.output, args.fabric, args.by)
        except TopoError as e:
            print(f"pxtopo: {e}", file=sys.stderr)
            return 1
        print(f"pxtopo: {args.output}: {prof['ranks']} ranks, "
              f"{sum(p['bytes'] for p in prof['pairs'])} bytes in "
              f"{sum(p['msgs'] for p in prof['pairs'])} messages")
        return 0
    if not args.topo and args.cmd != "place":
        ap.error("no fabric description: give --topo FILE or set PX_TOPO")
    try:
        fab = load(args.topo) if args.topo else None
        if args.cmd == "place":
            return cmd_place(fab, args)
        if args.cmd == "select":
            return cmd_select(fab, args)
        if args.cmd in ("hops", "path"):
            r = fab.walk(args.a, args.b, args.rail, args.path_index)
            if r is None:
                print(f"pxtopo: no route from {args.a} to {args.b}", file=sys.stderr)
                return 1
            if args.cmd == "hops":
                print(len(r[0]))
            else:
                print(" ".join([args.a] + [fab.switch_name(s) for s in r[0]] + [args.b]))
        elif args.cmd == "clusters":
            depth = fab.depth()
            levels = [args.level] if args.level is not None else range(depth + 1)
            for level in levels:
                for i, c in enumerate(fab.clusters(level)):
                    print(f"level {level} cluster {i}: {' '.join(c)}")
        elif args.cmd == "depth":
            print(fab.depth())
        elif args.cmd == "sharing":
            hosts = read_hostfile(args.hostfile)
            sh = fab.sharing(hosts)
            print(f"{len(sh)} of {len(hosts)} hosts share a link above the leaf level"
                  + (f": {' '.join(sh)}" if sh else ""))
        elif args.cmd == "per-leaf":
            hosts = read_hostfile(args.hostfile) if args.hostfile else None
            print(f"{fab.hosts_per_leaf(hosts):.3f}")
        elif args.cmd == "dump":
            dump(fab, sys.stdout)
    except TopoError as e:
        print(f"pxtopo: {e}", file=sys.stderr)
        return 1
    return 0
