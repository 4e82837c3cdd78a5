"""pxtopo: questions about a fabric description (PX_TOPO or --topo FILE).

Hosts are named as in the description; a hop is a switch on the route.
"""

import argparse
import os
import sys

from .formats import load
from .model import TopoError

EPILOG = """examples:
  pxtopo --topo fabric.json hops node0 node3     switches between two hosts
  pxtopo --topo fabric.json path node0 node3     and which ones
  pxtopo --topo ibnet.txt clusters               switch clusters at every level
  pxtopo --topo topology.conf sharing hosts.txt  hosts of a host file sharing a leaf uplink
  pxtopo --topo topology.conf depth              levels of the cluster tree
  pxtopo report plexus-profile-<job>.json -o report.html
                                                 a profile (PX_PROFILE=topo) as a page
"""


def read_hostfile(path):
    """Host names of a host file: the first word of each line, without ':slots'."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TopoError(f"cannot open {path}: {e.strerror}") from None
    out = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            name = line.split()[0].split(":")[0]
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
    if not args.topo:
        ap.error("no fabric description: give --topo FILE or set PX_TOPO")
    try:
        fab = load(args.topo)
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
