"""Thin wrappers around ip, tc and nft (iproute2 and nftables are the only dependencies)."""

import json
import os
import shutil
import subprocess


class KernelError(Exception):
    """A command that changes kernel state failed."""


def require_root(what="this command"):
    if os.geteuid() != 0:
        raise PermissionError(
            f"pxfab: {what} needs root (it creates network namespaces, links, qdiscs and "
            "nftables rules); run it as root, e.g. 'sudo pxfab ...'")


def require_tools(*tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise KernelError(f"missing command(s): {', '.join(missing)}; "
                          "install them with 'apt-get install -y iproute2 nftables'")


def run(args, input=None, check=True):
    p = subprocess.run(args, input=input, capture_output=True, text=True)
    if check and p.returncode != 0:
        cmd = " ".join(args)
        detail = (p.stderr or p.stdout).strip()
        if input:
            detail += "\n  input was:\n    " + "\n    ".join(input.strip().splitlines()[:20])
        raise KernelError(f"'{cmd}' failed: {detail}")
    return p


def ip(ns, *args, check=True):
    base = ["ip"] + (["-n", ns] if ns else [])
    return run(base + list(args), check=check)


def ip_json(ns, *args):
    p = ip(ns, "-j", *args, check=False)
    if p.returncode != 0 or not p.stdout.strip():
        return []
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        return []


def ip_batch(ns, lines):
    if lines:
        base = ["ip"] + (["-n", ns] if ns else [])
        run(base + ["-batch", "-"], input="\n".join(lines) + "\n")


def tc_batch(ns, lines):
    if lines:
        base = ["tc"] + (["-n", ns] if ns else [])
        try:
            run(base + ["-batch", "-"], input="\n".join(lines) + "\n")
        except KernelError as e:
            if "qdisc kind is unknown" not in str(e):
                raise
            kinds = sorted({l.split(" handle ")[1].split()[1] for l in lines
                            if l.startswith("qdisc ") and " handle " in l})
            raise KernelError(f"this kernel lacks a queueing discipline pxfab asked for "
                              f"(one of {', '.join(kinds)}: CONFIG_NET_SCH_* not built); "
                              f"with --class-queue fq it needs fq_codel, with fifo only "
                              f"htb and bfifo\n{e}") from None


def tc_json(ns, *args):
    base = ["tc"] + (["-n", ns] if ns else [])
    p = run(base + ["-s", "-j"] + list(args), check=False)
    try:
        return json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else []
    except json.JSONDecodeError:
        return []


def tc_class_stats(ns, dev):
    """Bytes, packets and drops sent through each HTB class of dev's egress,
    by class id ("1:20"). tc has no JSON for classes here: its text is read."""
    base = ["tc"] + (["-n", ns] if ns else [])
    p = run(base + ["-s", "class", "show", "dev", dev], check=False)
    out, cur = {}, None
    for line in p.stdout.splitlines() if p.returncode == 0 else []:
        f = line.split()
        if len(f) >= 3 and f[0] == "class":
            cur = f[2]
        elif cur and len(f) >= 6 and f[0] == "Sent" and f[2] == "bytes":
            drops = f[5].rstrip(",") if f[4] == "(dropped" else "0"
            out[cur] = {"bytes": int(f[1]), "packets": int(f[3]), "drops": int(drops)}
            cur = None
    return out


def nft(ns, script):
    if ns is None:
        raise KernelError("pxfab never installs nftables rules in the root namespace")
    run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script)


def nft_json(ns, *args):
    p = run(["ip", "netns", "exec", ns, "nft", "-j"] + list(args), check=False)
    try:
        return json.loads(p.stdout) if p.returncode == 0 and p.stdout.strip() else {}
    except json.JSONDecodeError:
        return {}


def sysctl(ns, settings):
    sysctl_many({ns: settings})


def sysctl_many(per_ns):
    """Write sysctls in many namespaces from one forked child that setns()es into each
    (much cheaper than one `ip netns exec sysctl` per namespace)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWNET = 0x40000000
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        err = b""
        try:
            for ns, settings in per_ns.items():
                fd = os.open(os.path.join("/run/netns", ns), os.O_RDONLY)
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into {ns}")
                os.close(fd)
                for key, value in settings:
                    path = "/proc/sys/" + key.replace(".", "/") if "/" not in key else "/proc/sys/" + key
                    with open(path, "w") as f:
                        f.write(f"{value}\n")
        except Exception as e:  # reported to the parent through the pipe
            err = f"{e}".encode()
        os.write(w, err)
        os._exit(1 if err else 0)
    os.close(w)
    msg = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        msg += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise KernelError(f"setting sysctls failed: {msg.decode() or status}")


def netns_list():
    """Names of the named network namespaces (those under /run/netns)."""
    try:
        return sorted(os.listdir("/run/netns"))
    except FileNotFoundError:
        return []


def netns_exists(name):
    return os.path.exists(os.path.join("/run/netns", name))


def netns_pids(name):
    p = run(["ip", "netns", "pids", name], check=False)
    return [int(x) for x in p.stdout.split()] if p.returncode == 0 else []


def link_exists(ns, dev):
    return ip(ns, "link", "show", "dev", dev, check=False).returncode == 0


def root_links():
    return [l.get("ifname") for l in ip_json(None, "link", "show")]
