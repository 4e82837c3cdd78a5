"""Building, tearing down and changing the emulated fabric in the kernel.

Naming (everything pxfab creates is found again by these names and by the
state file, so `down` removes exactly what `up` made):
  - node namespaces carry the node's name (node0, node1, ...), so that
    `ip netns exec node0 ...` works as on a real cluster's host names;
  - switch namespaces are PREFIX + switch name (pxf-rail0, pxf-leaf0, ...);
  - in the root namespace: the management bridge PREFIX + "mgmt" and one veth
    end per node, PREFIX + "m<index>";
  - nftables tables "pxfab" (netdev for loss, inet for partitions) exist only
    inside those namespaces.
"""

import contextlib
import fcntl
import ipaddress
import json
import os
import signal
import time

from . import desc as D
from . import kernel as K
from .desc import FabError

PREFIX = "pxf-"
MGMT_BRIDGE = PREFIX + "mgmt"
NFT_TABLE = "pxfab"
STATE_VERSION = 1


def state_dir():
    return os.environ.get("PXFAB_STATE_DIR", "/run/pxfab")


def state_path():
    return os.path.join(state_dir(), "state.json")


def switch_ns(name):
    return PREFIX + name


def mgmt_root_dev(node_index):
    return f"{PREFIX}m{node_index}"


# ---- state file ---------------------------------------------------------------------

@contextlib.contextmanager
def locked():
    """Serialise pxfab commands (and background schedules) on one lock file."""
    os.makedirs(state_dir(), mode=0o755, exist_ok=True)
    fd = os.open(os.path.join(state_dir(), "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def load_state():
    try:
        with open(state_path()) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError) as e:
        raise FabError(f"state file {state_path()} is unreadable ({e}); "
                       "'pxfab down --force' removes everything with the pxfab prefix") from None


def save_state(st):
    os.makedirs(state_dir(), mode=0o755, exist_ok=True)
    tmp = state_path() + ".tmp"
    with open(tmp, "w") as f:
        json.dump(st, f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, state_path())


def remove_state():
    try:
        names = os.listdir(state_dir())
    except FileNotFoundError:
        return
    for name in names:
        if name in ("state.json", "state.json.tmp", "rsh") or name.startswith("job-"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(state_dir(), name))


def current(require_up=True):
    """The running fabric as (state, Fabric)."""
    st = load_state()
    if st is None:
        raise FabError("no fabric is up (start one with 'pxfab up ...')")
    if require_up and st.get("phase") != "up":
        raise FabError(f"the fabric is in phase {st.get('phase')!r} (a crashed 'up'?); "
                       "run 'pxfab down' or 'pxfab up' again")
    return st, D.Fabric(st["description"])


def new_faults():
    return {"down": [], "loss": {}, "rate": {}, "partition": {}, "block": {}}


# ---- plan ---------------------------------------------------------------------------

def owner_ns(fab, owner):
    return owner if owner in fab.node_by_name else switch_ns(owner)


def namespaces(fab):
    return [n["name"] for n in fab.nodes] + [switch_ns(s["name"]) for s in fab.switches]


def root_devices(fab):
    return [MGMT_BRIDGE] + [mgmt_root_dev(n["index"]) for n in fab.nodes]


def link_ends(fab, link):
    """[(namespace or None for root, device)] of a link, fabric or management."""
    if isinstance(link, D.MgmtLink):
        node = fab.node_by_name[link.node]
        return [(link.node, D.MGMT_IFACE), (None, mgmt_root_dev(node["index"]))]
    return [(owner_ns(fab, e.owner), e.dev) for e in link.ends()]


def queue_bytes(link_queue, rate):
    # About 5 ms of buffer at the link rate, but room for a few 64 KB GSO packets.
    return link_queue or max(int(rate / 8 * 0.005), 200_000)


# largest packet a veth hands its qdisc (generic segmentation offload)
GSO_MAX = 65536


def htb_lines(dev, rate, mtu, classes, queue, change=False, arbitration=None):
    """tc batch lines shaping one egress: root HTB, a parent class at the link rate,
    a default child class 1:10 and one weighted child class per QoS lane.

    Without high-priority classes every class is guaranteed its weight's share
    of the link and borrows the rest. With some (InfiniBand-style arbitration,
    D._parse_arbitration), the low-priority group (the low classes and 1:10) is
    guaranteed what high_limit leaves it, one packet per high_limit x 4 KB of
    high-priority data (almost nothing at 255), the high group the rest; HTB
    serves and lends to prio 0 (high) before prio 1 (low)."""
    verb = "change" if change else "add"
    arb = arbitration or D.DEFAULT_ARBITRATION
    burst = max(int(rate / 8 / 1000), 4 * (mtu + 14))   # ~1 ms of traffic

    parts = [(10, 1, "low")] + [(c["minor"], c["weight"], c.get("priority", "low")) for c in classes]

    def quantum(w, group):
        # bytes a class may send per turn when the classes of its group borrow, by weight;
        # the lightest gets one segmentation-offload packet (what a veth hands HTB, up to
        # 64 KB), since a class whose quantum is smaller than its packets loses turns to
        # the others and may stop borrowing at all (docs/fabric.md)
        least = min(p[1] for p in parts if p[2] == group)
        return max(int(GSO_MAX * w / least), mtu + 14)

    high = [p for p in parts if p[2] == "high"]
    if high:
        frame = mtu + 14
        low_n = len(parts) - len(high)
        if arb["high_limit"] == 255:
            low_total = 8000 * low_n
        else:
            low_total = int(rate * frame / (max(arb["high_limit"] * 4096, frame) + frame))
        share = {"high": (rate - low_total, sum(p[1] for p in high)),
                 "low": (low_total, sum(p[1] for p in parts if p[2] == "low"))}
    else:
        share = {"low": (rate, sum(p[1] for p in parts))}
    lines = []
    if not change:
        lines.append(f"qdisc replace dev {dev} root handle 1: htb default 10")
    lines.append(f"class {verb} dev {dev} parent 1: classid 1:1 htb rate {rate}bit ceil {rate}bit "
                 f"burst {burst} cburst {burst} quantum {GSO_MAX}")
    for minor, w, group in parts:
        total, total_w = share[group]
        r = max(int(total * w / total_w), 8000)
        prio = f" prio {0 if group == 'high' else 1}" if high else ""
        # spare bandwidth goes to a group's classes in proportion to their quantum
        lines.append(f"class {verb} dev {dev} parent 1:1 classid 1:{minor} htb rate {r}bit ceil {rate}bit "
                     f"burst {burst} cburst {burst} quantum {quantum(w, group)}{prio}")
        qd = (f"fq_codel memory_limit {queue}" if arb["queue"] == "fq" and classes
              else f"bfifo limit {queue}")
        lines.append(f"qdisc {'change' if change else 'add'} dev {dev} parent 1:{minor} "
                     f"handle {minor}: {qd}")
    if not change:
        for c in classes:
            for d in c["dscp"]:
                lines.append(f"filter add dev {dev} parent 1: protocol ip prio 1 u32 "
                             f"match ip dsfield {d << 2:#04x} 0xfc flowid 1:{c['minor']}")
    return lines


# ---- up / down ----------------------------------------------------------------------

def _step(name):
    """Test hooks: PXFAB_TEST_FAIL_AT makes `up` fail at a step (to test rollback),
    PXFAB_TEST_CRASH_AT makes it die there without cleaning (to test recovery)."""
    if os.environ.get("PXFAB_TEST_FAIL_AT") == name:
        raise K.KernelError(f"injected failure at step {name!r} (PXFAB_TEST_FAIL_AT)")
    if os.environ.get("PXFAB_TEST_CRASH_AT") == name:
        os._exit(99)


def preflight(fab, leftovers):
    """Checks that change nothing: names free, management subnet free in the root namespace."""
    K.require_tools("ip", "tc", "nft", "bridge")
    ours = set(leftovers.get("namespaces", []))
    for ns in namespaces(fab):
        if K.netns_exists(ns) and ns not in ours and not ns.startswith(PREFIX):
            raise FabError(f"network namespace {ns!r} already exists and was not created by pxfab; "
                           "remove it or use other node names")
    ours_dev = set(leftovers.get("root_devices", []))
    existing = set(K.root_links())
    for dev in root_devices(fab):
        if dev in existing and dev not in ours_dev and not dev.startswith(PREFIX):
            raise FabError(f"interface {dev!r} already exists in the root namespace")
    for r in K.ip_json(None, "route", "show", "table", "all"):
        dst = r.get("dst", "")
        if r.get("dev", "").startswith(PREFIX) or dst in ("default", "") or ":" in dst:
            continue
        if r.get("type") in ("local", "broadcast", "multicast"):
            continue
        try:
            net = ipaddress.IPv4Network(dst if "/" in dst else dst + "/32", strict=False)
        except ValueError:
            continue
        if net.overlaps(fab.mgmt_subnet):
            raise FabError(f"management subnet {fab.mgmt_subnet} overlaps route {dst} on "
                           f"{r.get('dev', '?')} in the root namespace; choose another with --mgmt-subnet")


def cleanup_leftovers(log=print):
    """Remove a previous fabric (running or half-built) and anything named with the prefix."""
    st = load_state()
    removed = []
    if st is not None:
        stop_jobs(st)
        removed += teardown(st.get("namespaces", []), st.get("root_devices", []))
    removed += teardown([ns for ns in K.netns_list() if ns.startswith(PREFIX)],
                        [d for d in K.root_links() if d and d.startswith(PREFIX)])
    remove_state()
    if removed and log:
        shown = ", ".join(removed[:6]) + (f", ... ({len(removed)} in all)" if len(removed) > 6 else "")
        log(f"pxfab: removed leftovers of an earlier fabric: {shown}")
    return removed


def teardown(nss, devs):
    removed = []
    pids = []
    for ns in nss:
        if K.netns_exists(ns):
            pids += [p for p in K.netns_pids(ns) if p != os.getpid()]
    _terminate(pids)
    for ns in nss:
        if K.netns_exists(ns):
            K.run(["ip", "netns", "del", ns], check=False)
            removed.append(ns)
    existing = set(K.root_links())
    for dev in devs:
        if dev in existing:
            K.ip(None, "link", "del", "dev", dev, check=False)
            removed.append(dev)
    return removed


def _terminate(pids, grace=1.0):
    """Processes still running on the emulated nodes go down with them."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for p in pids:
            try:
                os.kill(p, sig)
                alive.append(p)
            except ProcessLookupError:
                pass
        if not alive or sig == signal.SIGKILL:
            return
        deadline = time.time() + grace
        while time.time() < deadline:
            alive = [p for p in alive if os.path.exists(f"/proc/{p}")]
            if not alive:
                return
            time.sleep(0.05)
        pids = alive


def up(fab, log=print):
    K.require_root("'pxfab up'")
    with locked():
        old = load_state() or {}
        preflight(fab, old)
        cleanup_leftovers(log)
        st = {"version": STATE_VERSION, "phase": "creating", "created": time.time(),
              "prefix": PREFIX, "description": fab.raw, "namespaces": namespaces(fab),
              "root_devices": root_devices(fab), "faults": new_faults(), "jobs": []}
        # Recorded before anything exists, so a crash half-way leaves a complete list.
        save_state(st)
        t0 = time.time()
        try:
            build(fab)
        except BaseException as e:
            teardown(st["namespaces"], st["root_devices"])
            remove_state()
            if isinstance(e, (K.KernelError, FabError)):
                raise FabError(f"up failed, everything it created was removed: {e}") from None
            raise
        st["phase"] = "up"
        st["build_seconds"] = round(time.time() - t0, 3)
        save_state(st)
        write_rsh()
        return st


def link_mac(link, end):
    """Deterministic, locally administered MAC of a link end (0 = a, 1 = b)."""
    i = link.index
    return f"02:58:{(i >> 16) & 0xff:02x}:{(i >> 8) & 0xff:02x}:{i & 0xff:02x}:{end:02x}"


def mgmt_mac(node_index):
    i = node_index
    return f"02:59:{(i >> 16) & 0xff:02x}:{(i >> 8) & 0xff:02x}:{i & 0xff:02x}:01"


MGMT_BRIDGE_MAC = "02:59:ff:ff:ff:fe"


def l3_plan(fab):
    """Static neighbours and routes: {namespace: [(device, ip batch line)]}.

    Neighbours are permanent entries computed from the deterministic MACs: the
    kernel's ARP table is shared by all namespaces and holds 1024 dynamic entries
    (gc_thresh3), which a fabric of a few dozen nodes would overflow; permanent
    entries do not count against it, and no packet waits for ARP. Routed hops
    go through next-hop gateways (a router's address on lo, or a node's first
    address), so each port needs one neighbour, not one per destination.
    """
    plan = {}

    def add(ns, dev, line):
        plan.setdefault(ns, []).append((dev, line))

    def gateway(end, link):
        """Address a neighbour uses to reach `end`'s owner over `link`."""
        if end.is_node:
            return fab.node_by_name[end.owner]["ifaces"][end.dev][0].ip
        return fab.switch_by_name[end.owner]["addr"]

    for l in fab.links:
        for me, other, m_other in ((l.a, l.b, link_mac(l, 1)), (l.b, l.a, link_mac(l, 0))):
            ns = owner_ns(fab, me.owner)
            if me.is_node:
                sw = fab.switch_by_name[other.owner]
                addrs = fab.node_by_name[me.owner]["ifaces"][me.dev]
                if sw["kind"] == "router":
                    gw = sw["addr"]
                    add(ns, me.dev, f"neigh replace {gw} lladdr {m_other} dev {me.dev} nud permanent")
                    for a in addrs:
                        add(ns, me.dev, f"route replace {a.network} via {gw} dev {me.dev} onlink src {a.ip}")
                else:
                    # L2 rail: every other node on the bridge, every address of it
                    for l2, _, peer in fab.adj[sw["name"]]:
                        if peer.is_node and peer.owner != me.owner:
                            mac = link_mac(l2, 0 if l2.a is peer else 1)
                            for a in fab.node_by_name[peer.owner]["ifaces"][peer.dev]:
                                add(ns, me.dev, f"neigh replace {a.ip} lladdr {mac} dev {me.dev} nud permanent")
            elif fab.switch_by_name[me.owner]["kind"] == "router":
                add(ns, me.dev, f"neigh replace {gateway(other, l)} lladdr {m_other} dev {me.dev} nud permanent")
    for sw, table in fab.routes.items():
        ports = {me.dev: (l, other) for l, me, other in fab.adj.get(sw, [])}
        for dst, port in sorted(table.items()):
            l, other = ports[port]
            add(switch_ns(sw), port, f"route replace {dst}/32 via {gateway(other, l)} dev {port} onlink")
    return plan


def mgmt_neigh_plan(fab):
    plan = {}
    for n in fab.nodes:
        lines = [f"neigh replace {fab.mgmt_host} lladdr {MGMT_BRIDGE_MAC} dev {D.MGMT_IFACE} nud permanent"]
        lines += [f"neigh replace {m['mgmt']} lladdr {mgmt_mac(m['index'])} dev {D.MGMT_IFACE} nud permanent"
                  for m in fab.nodes if m is not n]
        plan[n["name"]] = lines
    plan[None] = [f"neigh replace {n['mgmt']} lladdr {mgmt_mac(n['index'])} dev {MGMT_BRIDGE} nud permanent"
                  for n in fab.nodes]
    return plan


def build(fab):
    nodes = [n["name"] for n in fab.nodes]
    routers = [s["name"] for s in fab.switches if s["kind"] == "router"]
    bridges = [s["name"] for s in fab.switches if s["kind"] == "bridge"]
    _step("namespaces")
    for ns in namespaces(fab):
        K.run(["ip", "netns", "add", ns])
    common = [("net.ipv6.conf.all.disable_ipv6", 1), ("net.ipv6.conf.default.disable_ipv6", 1),
              ("net.ipv4.conf.all.rp_filter", 0), ("net.ipv4.conf.default.rp_filter", 0)]
    settings = {}
    for n in nodes:
        # A multi-homed node answers ARP only on the interface holding the address.
        settings[n] = common + [("net.ipv4.conf.all.arp_ignore", 1), ("net.ipv4.conf.all.arp_announce", 2)]
    for s in routers:
        settings[switch_ns(s)] = common + [
            ("net.ipv4.ip_forward", 1), ("net.ipv4.conf.all.forwarding", 1),
            ("net.ipv4.conf.all.send_redirects", 0), ("net.ipv4.conf.default.send_redirects", 0)]
    for s in bridges:
        settings[switch_ns(s)] = common
    K.sysctl_many(settings)

    _step("links")
    lines = [f"link add name {MGMT_BRIDGE} address {MGMT_BRIDGE_MAC} type bridge forward_delay 0 stp_state 0"]
    for n in fab.nodes:
        lines.append(f"link add name {D.MGMT_IFACE} netns {n['name']} address {mgmt_mac(n['index'])} "
                     f"type veth peer name {mgmt_root_dev(n['index'])}")
    for l in fab.links:
        lines.append(f"link add name {l.a.dev} netns {owner_ns(fab, l.a.owner)} address {link_mac(l, 0)} "
                     f"mtu {l.mtu} type veth peer name {l.b.dev} netns {owner_ns(fab, l.b.owner)} "
                     f"address {link_mac(l, 1)} mtu {l.mtu}")
    K.ip_batch(None, lines)
    lines = [f"addr add {fab.mgmt_host}/{fab.mgmt_subnet.prefixlen} dev {MGMT_BRIDGE}",
             f"link set {MGMT_BRIDGE} up"]
    for n in fab.nodes:
        lines.append(f"link set {mgmt_root_dev(n['index'])} master {MGMT_BRIDGE} up")
    K.ip_batch(None, lines)

    _step("addresses")
    per_ns = {ns: ["link set lo up"] for ns in namespaces(fab)}
    for n in fab.nodes:
        per_ns[n["name"]] += [f"addr add {n['mgmt']}/{fab.mgmt_subnet.prefixlen} dev {D.MGMT_IFACE}",
                              f"link set {D.MGMT_IFACE} up"]
        for ifname, addrs in n["ifaces"].items():
            routed = fab.switch_by_name[fab.node_iface_link[(n["name"], ifname)].other(n["name"]).owner]
            # Behind a router the subnet is reached through the leaf, not on the wire.
            flag = " noprefixroute" if routed["kind"] == "router" else ""
            per_ns[n["name"]] += [f"addr add {a} dev {ifname}{flag}" for a in addrs]
    for s in fab.switches:
        if s["kind"] == "bridge":
            mtu = max([l.mtu for l in fab.links if s["name"] in (l.a.owner, l.b.owner)] or [fab.mtu])
            per_ns[switch_ns(s["name"])] += [
                "link add name br0 type bridge forward_delay 0 stp_state 0", f"link set br0 mtu {mtu} up"]
        else:
            per_ns[switch_ns(s["name"])].append(f"addr add {s['addr']}/32 dev lo")
    for l in fab.links:
        for e in l.ends():
            ns = owner_ns(fab, e.owner)
            if not e.is_node and fab.switch_by_name[e.owner]["kind"] == "bridge":
                per_ns[ns].append(f"link set {e.dev} master br0")
            per_ns[ns].append(f"link set {e.dev} up")
    mgmt = mgmt_neigh_plan(fab)
    K.ip_batch(None, mgmt.pop(None))
    plan = l3_plan(fab)
    for ns, lines in per_ns.items():
        items = plan.get(ns, [])
        # neighbours before routes: an onlink route is fine without, but traffic is not
        K.ip_batch(ns, lines + mgmt.get(ns, []) + [x for _, x in items if x.startswith("neigh")] +
                   [x for _, x in items if x.startswith("route")])

    _step("shaping")
    per_ns = {}
    for l in fab.links:
        for e in l.ends():
            per_ns.setdefault(owner_ns(fab, e.owner), []).extend(
                htb_lines(e.dev, l.rate, l.mtu, l.classes, queue_bytes(l.queue, l.rate),
                          arbitration=l.arbitration))
    if fab.mgmt_rate:
        q = queue_bytes(None, fab.mgmt_rate)
        for n in fab.nodes:
            per_ns.setdefault(n["name"], []).extend(htb_lines(D.MGMT_IFACE, fab.mgmt_rate, 1500, [], q))
            per_ns.setdefault(None, []).extend(htb_lines(mgmt_root_dev(n["index"]), fab.mgmt_rate, 1500, [], q))
    for ns, lines in per_ns.items():
        K.tc_batch(ns, lines)

    _step("settle")
    settle([(owner_ns(fab, e.owner), e.dev, not e.is_node and
             fab.switch_by_name[e.owner]["kind"] == "bridge") for l in fab.links for e in l.ends()]
           + [(n["name"], D.MGMT_IFACE, False) for n in fab.nodes]
           + [(None, mgmt_root_dev(n["index"]), True) for n in fab.nodes])
    _step("done")


def settle(ends, timeout=5.0):
    """Wait until devices have carrier and bridge ports forward.

    The kernel applies carrier changes from a work queue that runs at most once a
    second, so right after `ip link set up` a veth may have no carrier and a
    bridge port may still be disabled: packets sent then are lost.
    """
    pending = {}
    for ns, dev, bridged in ends:
        pending.setdefault(ns, {})[dev] = bridged
    deadline = time.time() + timeout
    while pending:
        for ns in list(pending):
            state = {l["ifname"]: l.get("operstate") for l in K.ip_json(ns, "link", "show")}
            ports = {}
            if any(pending[ns].values()):
                p = K.run(["bridge"] + (["-n", ns] if ns else []) + ["-j", "link", "show"], check=False)
                try:
                    ports = {x["ifname"]: x.get("state") for x in json.loads(p.stdout or "[]")}
                except ValueError:
                    ports = {}
            for dev, bridged in list(pending[ns].items()):
                if state.get(dev) == "UP" and (not bridged or ports.get(dev) == "forwarding"):
                    del pending[ns][dev]
            if not pending[ns]:
                del pending[ns]
        if not pending or time.time() > deadline:
            break
        time.sleep(0.05)
    return pending


def reapply_l3(fab, ends):
    """Put back what taking devices down flushed: their neighbours and routes."""
    plan = l3_plan(fab)
    for ns, dev in ends:
        items = [x for d, x in plan.get(ns, []) if d == dev]
        K.ip_batch(ns, [x for x in items if x.startswith("neigh")] +
                   [x for x in items if x.startswith("route")])


def down(log=print):
    K.require_root("'pxfab down'")
    with locked():
        had = load_state() is not None
        removed = cleanup_leftovers(log=None)
        if log:
            if had or removed:
                log(f"pxfab: removed {len(removed)} namespaces and root devices")
            else:
                log("pxfab: no fabric was up")
        return removed


RSH = """#!/bin/sh
# ssh-compatible agent for MPI launchers (Open MPI plm_rsh_agent, MPICH -launcher-exec):
# skips ssh options, then runs the remote command in the node's network namespace.
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-p|-l|-i|-F|-E|-b|-c|-D|-e|-J|-L|-m|-O|-Q|-R|-S|-W|-w) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host="$1"; shift
exec ip netns exec "$host" sh -c "$*"
"""


def write_rsh():
    path = os.path.join(state_dir(), "rsh")
    with open(path, "w") as f:
        f.write(RSH)
    os.chmod(path, 0o755)


# ---- faults -------------------------------------------------------------------------

def _save_faults(st, faults):
    st["faults"] = faults
    save_state(st)


def fault_link_state(fab, link, up_):
    ends = link_ends(fab, link)
    state = "up" if up_ else "down"
    for ns, dev in ends:
        K.ip(ns, "link", "set", "dev", dev, state)
    if up_:
        settle([(ns, dev, ns is not None and ns.startswith(PREFIX) and
                 fab.switch_by_name.get(ns[len(PREFIX):], {}).get("kind") == "bridge")
                for ns, dev in ends if ns is not None])
        # Taking a device down flushed its routes and (even permanent) neighbours.
        if isinstance(link, D.MgmtLink):
            plan = mgmt_neigh_plan(fab)
            K.ip_batch(link.node, plan[link.node])
        else:
            reapply_l3(fab, ends)


def apply_fault(action, target=None, value=None, log=print):
    """One fault change: down/up/loss/rate/block/unblock/partition/heal/reset. Validates first."""
    K.require_root(f"'pxfab fault {action}'")
    with locked():
        st, fab = current()
        faults = st.get("faults") or new_faults()
        faults.setdefault("block", {})
        if action in ("block", "unblock"):
            link = fab.resolve_link(target)
            if isinstance(link, D.MgmtLink):
                raise FabError(f"{link.name}: classes are blocked on fabric links only")
            if action == "block":
                faults["block"][link.name] = parse_dscps(value)
            else:
                faults["block"].pop(link.name, None)
            render_nft(fab, faults, {ns for ns, _ in link_ends(fab, link) if ns})
        elif action in ("down", "up", "loss", "rate"):
            link = fab.resolve_link(target)
            name = link.name
            if action == "down":
                fault_link_state(fab, link, False)
                if name not in faults["down"]:
                    faults["down"].append(name)
            elif action == "up":
                fault_link_state(fab, link, True)
                faults["down"] = [x for x in faults["down"] if x != name]
            elif action == "loss":
                pct = parse_percent(value)
                if pct == 0:
                    faults["loss"].pop(name, None)
                else:
                    faults["loss"][name] = pct
                render_nft(fab, faults, {ns for ns, _ in link_ends(fab, link) if ns})
            else:
                if isinstance(link, D.MgmtLink) and not fab.mgmt_rate:
                    raise FabError(f"{name}: the management network is not shaped (up --mgmt-rate)")
                rate = D.parse_rate(value)
                set_rate(fab, link, rate)
                if rate == (fab.mgmt_rate if isinstance(link, D.MgmtLink) else link.rate):
                    faults["rate"].pop(name, None)
                else:
                    faults["rate"][name] = rate
        elif action in ("partition", "heal"):
            node = fab.resolve_node(target)["name"]
            if action == "partition":
                faults["partition"][node] = {"mgmt": bool(value)}
            else:
                faults["partition"].pop(node, None)
            render_nft(fab, faults, {node})
        elif action == "reset":
            for name in list(faults["down"]):
                fault_link_state(fab, fab.resolve_link(name), True)
            for name in list(faults["rate"]):
                link = fab.resolve_link(name)
                set_rate(fab, link, fab.mgmt_rate if isinstance(link, D.MgmtLink) else link.rate)
            touched = {n for n in faults["partition"]}
            for name in list(faults["loss"]) + list(faults["block"]):
                touched |= {ns for ns, _ in link_ends(fab, fab.resolve_link(name)) if ns}
            faults = new_faults()
            render_nft(fab, faults, touched)
        else:
            raise FabError(f"unknown fault action {action!r}")
        _save_faults(st, faults)
        return faults


def parse_dscps(v):
    """'8' or '8,10' -> [8, 10]: the DSCP values a 'block' fault drops."""
    try:
        out = sorted({int(x) for x in str(v).split(",")})
    except ValueError:
        raise FabError(f"invalid DSCP list {v!r} (e.g. 8 or 8,34)") from None
    if not out or not all(0 <= d <= 63 for d in out):
        raise FabError(f"DSCP values are 0..63, not {v!r}")
    return out


def parse_percent(v):
    try:
        pct = float(str(v).rstrip("%"))
    except ValueError:
        raise FabError(f"invalid loss percentage {v!r}") from None
    if not 0 <= pct <= 100:
        raise FabError(f"loss percentage must be between 0 and 100, not {v!r}")
    return pct


def set_rate(fab, link, rate):
    mgmt = isinstance(link, D.MgmtLink)
    for ns, dev in link_ends(fab, link):
        K.tc_batch(ns, htb_lines(dev, rate, 1500 if mgmt else link.mtu, [] if mgmt else link.classes,
                                 queue_bytes(None if mgmt else link.queue, rate), change=True,
                                 arbitration=None if mgmt else link.arbitration))


def loss_chain(hook, dev):
    return f"loss_{hook}_{dev.replace('-', '_').replace('.', '_')}"


def render_nft(fab, faults, nss):
    """Rewrite the pxfab nftables tables of the given namespaces from the fault state."""
    for ns in sorted(nss):
        netdev = []
        for name, pct in sorted(faults["loss"].items()):
            link = fab.resolve_link(name)
            for ens, dev in link_ends(fab, link):
                if ens != ns:
                    continue
                thr = int(round(pct * 100))
                # numgen yields 0..9999 and nft refuses the constant 10000: all is all
                rule = "counter drop" if thr >= 10000 else \
                    f"numgen random mod 10000 < {thr} counter drop"
                hooks = ["ingress", "egress"] if isinstance(link, D.MgmtLink) else ["ingress"]
                for hook in hooks:
                    # Every end drops its share of what it receives, so each direction
                    # loses `pct` percent (the management end in the root namespace is
                    # untouched: both directions are handled on the node's side).
                    netdev.append(f"  chain {loss_chain(hook, dev)} {{\n"
                                  f"    type filter hook {hook} device \"{dev}\" priority 0;\n"
                                  f"    {rule}\n  }}")
        for name, dscps in sorted(faults.get("block", {}).items()):
            link = fab.resolve_link(name)
            for ens, dev in link_ends(fab, link):
                if ens != ns:
                    continue
                # each end drops what it receives of those classes: both directions
                vals = ", ".join(str(d) for d in dscps)
                netdev.append(f"  chain block_ingress_{dev.replace('-', '_').replace('.', '_')} {{\n"
                              f"    type filter hook ingress device \"{dev}\" priority 1;\n"
                              f"    ip dscp {{ {vals} }} counter drop\n  }}")
        inet = []
        part = faults["partition"].get(ns)
        if part is not None:
            node = fab.node_by_name[ns]
            devs = sorted(node["ifaces"]) + ([D.MGMT_IFACE] if part.get("mgmt") else [])
            dset = ", ".join(f'"{d}"' for d in devs)
            inet.append(f"  chain partition_in {{\n    type filter hook input priority 0;\n"
                        f"    iifname {{ {dset} }} counter drop\n  }}")
            inet.append(f"  chain partition_out {{\n    type filter hook output priority 0;\n"
                        f"    oifname {{ {dset} }} counter drop\n  }}")
        # A lossy link loses datagrams one at a time, as a wire does: its ends
        # cut the UDP sends the stack hands them whole (segmentation offload)
        # into datagrams before sending them across, so that the other end's
        # loss rule sees each one. TCP's offloaded packets still cross, and
        # are lost, whole (docs/fabric.md).
        lossy = {dev for name in faults["loss"]
                 for ens, dev in link_ends(fab, fab.resolve_link(name)) if ens == ns}
        for link in fab.links:
            for ens, dev in link_ends(fab, link):
                if ens == ns:
                    K.run(["ip", "netns", "exec", ns, "ethtool", "-K", dev,
                           "tx-udp-segmentation", "off" if dev in lossy else "on"])
        script = (f"table netdev {NFT_TABLE}\ndelete table netdev {NFT_TABLE}\n"
                  f"table inet {NFT_TABLE}\ndelete table inet {NFT_TABLE}\n")
        if netdev:
            script += f"table netdev {NFT_TABLE} {{\n" + "\n".join(netdev) + "\n}\n"
        if inet:
            script += f"table inet {NFT_TABLE} {{\n" + "\n".join(inet) + "\n}\n"
        K.nft(ns, script)


# ---- background jobs ----------------------------------------------------------------

def add_job(pid, what, logfile):
    with locked():
        st = load_state()
        if st is None:
            return
        st.setdefault("jobs", []).append({"pid": pid, "what": what, "log": logfile,
                                          "started": time.time()})
        save_state(st)


def job_alive(job):
    try:
        with open(f"/proc/{job['pid']}/cmdline", "rb") as f:
            cmd = f.read()
    except OSError:
        return False
    return b"plexus.fab" in cmd or b"pxfab" in cmd


def stop_jobs(st):
    for job in st.get("jobs", []):
        if job_alive(job):
            with contextlib.suppress(ProcessLookupError):
                os.kill(job["pid"], signal.SIGTERM)
    deadline = time.time() + 2
    while time.time() < deadline and any(job_alive(j) for j in st.get("jobs", [])):
        time.sleep(0.05)
    for job in st.get("jobs", []):
        if job_alive(job):
            with contextlib.suppress(ProcessLookupError):
                os.kill(job["pid"], signal.SIGKILL)


# ---- observation --------------------------------------------------------------------

def _dev_stats(ns, cache):
    if ns not in cache:
        links = {l["ifname"]: l for l in K.ip_json(ns, "-s", "link", "show")}
        qd = {}
        for q in K.tc_json(ns, "qdisc", "show"):
            if q.get("kind") == "htb" and q.get("root"):
                qd[q["dev"]] = q
        loss = {}           # chain name -> dropped packets
        if ns is not None:
            js = K.nft_json(ns, "list", "table", "netdev", NFT_TABLE).get("nftables", [])
            for item in js:
                r = item.get("rule")
                for ex in (r or {}).get("expr", []):
                    if "counter" in ex:
                        loss[r["chain"]] = loss.get(r["chain"], 0) + ex["counter"]["packets"]
        cache[ns] = (links, qd, loss)
    return cache[ns]


def end_stats(ns, dev, cache):
    links, qd, loss = _dev_stats(ns, cache)
    l = links.get(dev)
    if l is None:
        return {"ns": ns or "", "dev": dev, "present": False}
    s = l.get("stats64", {})
    rx, tx = s.get("rx", {}), s.get("tx", {})
    out = {"ns": ns or "", "dev": dev, "present": True, "oper": l.get("operstate"),
           "admin_up": "UP" in l.get("flags", []),
           "rx_bytes": rx.get("bytes", 0), "rx_packets": rx.get("packets", 0),
           "rx_dropped": rx.get("dropped", 0),
           "tx_bytes": tx.get("bytes", 0), "tx_packets": tx.get("packets", 0),
           "tx_dropped": tx.get("dropped", 0)}
    q = qd.get(dev)
    if q is not None:
        out["qdisc_drops"] = q.get("drops", 0)
        out["qdisc_overlimits"] = q.get("overlimits", 0)
        out["qdisc_backlog"] = q.get("backlog", 0)
    out["loss_drops"] = sum(loss.get(loss_chain(h, dev), 0) for h in ("ingress", "egress"))
    return out


def stats(link_names=None):
    K.require_root("'pxfab stats'")
    st, fab = current()
    faults = st.get("faults") or new_faults()
    cache = {}
    links = [fab.resolve_link(n) for n in link_names] if link_names else fab.links
    out = {"time": time.time(), "links": {}}
    for link in links:
        ends = link_ends(fab, link)
        a = end_stats(ends[0][0], ends[0][1], cache)
        b = end_stats(ends[1][0], ends[1][1], cache)
        if getattr(link, "classes", None) and a.get("present") and b.get("present"):
            # the QoS lanes' classes: what each end sent through each (1:10 takes the rest)
            ca, cb = K.tc_class_stats(ends[0][0], ends[0][1]), K.tc_class_stats(ends[1][0], ends[1][1])
            a["classes"] = [{"dscp": c["dscp"], "weight": c["weight"],
                             "priority": c.get("priority", "low"),
                             "a_to_b": ca.get(f"1:{c['minor']}", {}),
                             "b_to_a": cb.get(f"1:{c['minor']}", {})}
                            for c in link.classes]
            a["classes"].append({"dscp": "other", "weight": 1, "priority": "low",
                                 "a_to_b": ca.get("1:10", {}), "b_to_a": cb.get("1:10", {})})
        rec = {"kind": link.kind, "a": a, "b": b,
               "state": "down" if link.name in faults["down"] else "up",
               "loss_percent": faults["loss"].get(link.name, 0),
               "blocked_dscp": faults.get("block", {}).get(link.name, []),
               # Bytes a->b are what a sent; drops on the way are the shaper's and the loss rule's.
               "a_to_b": {"bytes": a.get("tx_bytes", 0), "packets": a.get("tx_packets", 0),
                          "drops": a.get("qdisc_drops", 0) + b.get("loss_drops", 0)},
               "b_to_a": {"bytes": b.get("tx_bytes", 0), "packets": b.get("tx_packets", 0),
                          "drops": b.get("qdisc_drops", 0) + a.get("loss_drops", 0)}}
        if not isinstance(link, D.MgmtLink):
            rec["rate_bps"] = faults["rate"].get(link.name, link.rate)
        if "classes" in a:
            rec["classes"] = a.pop("classes")
        out["links"][link.name] = rec
    return out


def status():
    st = load_state()
    if st is None:
        leftovers = [ns for ns in K.netns_list() if ns.startswith(PREFIX)]
        return {"up": False, "leftovers": leftovers}
    fab = D.Fabric(st["description"])
    faults = st.get("faults") or new_faults()
    present = set(K.netns_list())
    out = {"up": st.get("phase") == "up", "phase": st.get("phase"), "state_file": state_path(),
           "created": st.get("created"), "build_seconds": st.get("build_seconds"),
           "mgmt": {"bridge": MGMT_BRIDGE, "host": str(fab.mgmt_host), "subnet": str(fab.mgmt_subnet)},
           "rsh": os.path.join(state_dir(), "rsh"),
           "nodes": [], "switches": [], "links": [], "faults": faults,
           "jobs": [dict(j, alive=job_alive(j)) for j in st.get("jobs", [])]}
    for n in fab.nodes:
        out["nodes"].append({"name": n["name"], "netns": n["name"], "present": n["name"] in present,
                             "mgmt": str(n["mgmt"]),
                             "ifaces": {k: [str(a) for a in v] for k, v in n["ifaces"].items()},
                             "partitioned": n["name"] in faults["partition"]})
    for s in fab.switches:
        out["switches"].append({"name": s["name"], "netns": switch_ns(s["name"]), "kind": s["kind"],
                                "present": switch_ns(s["name"]) in present})
    for l in fab.links:
        out["links"].append({"name": l.name, "a": f"{owner_ns(fab, l.a.owner)}/{l.a.dev}",
                             "b": f"{owner_ns(fab, l.b.owner)}/{l.b.dev}",
                             "rate": D.format_rate(faults["rate"].get(l.name, l.rate)),
                             "mtu": l.mtu, "state": "down" if l.name in faults["down"] else "up",
                             "loss_percent": faults["loss"].get(l.name, 0),
                             "blocked_dscp": faults.get("block", {}).get(l.name, [])})
    return out


def node_ns(name):
    """Namespace of a node or switch of the running fabric (plain names accepted)."""
    st = load_state()
    if st is not None:
        fab = D.Fabric(st["description"])
        if name in fab.node_by_name:
            return name
        if name in fab.switch_by_name:
            return switch_ns(name)
        if name in namespaces(fab):
            return name
        raise FabError(f"unknown node {name!r} (nodes: {', '.join(n['name'] for n in fab.nodes)})")
    if K.netns_exists(name):
        return name
    raise FabError(f"no fabric is up and there is no namespace {name!r}")
