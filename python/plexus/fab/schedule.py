"""Timed fault schedules: a JSON list of events, run in the foreground or in the background.

    [{"at": 5,  "action": "down", "link": "node1:rail1"},
     {"at": 25, "action": "up",   "link": "node1:rail1"},
     {"at": 0,  "action": "loss", "link": "leaf0:spine1", "percent": 2},
     {"at": 3,  "action": "rate", "link": "node0:rail1", "rate": "250mbit"},
     {"at": 8,  "action": "partition", "node": "node3", "mgmt": false},
     {"at": 12, "action": "heal", "node": "node3"},
     {"at": 30, "action": "flap", "link": "node2:rail0", "period": 2, "for": 10},
     {"at": 45, "action": "reset"}]

`at` is seconds from the start of the schedule. The whole schedule is checked
against the running fabric before the first event, so a typo changes nothing.
"""

import json
import os
import signal
import subprocess
import sys
import time

from . import desc as D
from . import fabric as F
from .desc import FabError

ACTIONS = {"down": ("link",), "up": ("link",), "loss": ("link", "percent"), "rate": ("link", "rate"),
           "partition": ("node",), "heal": ("node",), "flap": ("link", "period", "for"), "reset": ()}


def load_events(path_or_list):
    if isinstance(path_or_list, list):
        raw = path_or_list
    else:
        try:
            with open(path_or_list) as f:
                raw = json.load(f)
        except OSError as e:
            raise FabError(f"cannot read schedule: {e}") from None
        except json.JSONDecodeError as e:
            raise FabError(f"{path_or_list}: invalid JSON: {e}") from None
    if isinstance(raw, dict):
        raw = raw.get("events")
    if not isinstance(raw, list):
        raise FabError("a schedule is a JSON list of events (or {\"events\": [...]})")
    return raw


def check(events, fab):
    """Validate and expand (flap -> down/up pairs); returns [(at, action, target, value)]."""
    out = []
    for i, ev in enumerate(events):
        where = f"event {i}"
        if not isinstance(ev, dict):
            raise FabError(f"{where}: must be an object")
        action = ev.get("action")
        if action not in ACTIONS:
            raise FabError(f"{where}: action must be one of {', '.join(ACTIONS)}, not {action!r}")
        for key in ACTIONS[action]:
            if key not in ev:
                raise FabError(f"{where} ({action}): needs {key!r}")
        extra = set(ev) - {"at", "action", "mgmt", "comment"} - set(ACTIONS[action])
        if extra:
            raise FabError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        at = ev.get("at", 0)
        if isinstance(at, bool) or not isinstance(at, (int, float)) or at < 0:
            raise FabError(f"{where}: 'at' must be a number of seconds >= 0")
        try:
            if "link" in ACTIONS[action]:
                target = fab.resolve_link(ev["link"]).name
            elif "node" in ACTIONS[action]:
                target = fab.resolve_node(ev["node"])["name"]
            else:
                target = None
        except FabError as e:
            raise FabError(f"{where}: {e}") from None
        if action == "loss":
            out.append((at, action, target, F.parse_percent(ev["percent"])))
        elif action == "rate":
            link = fab.resolve_link(target)
            if isinstance(link, D.MgmtLink) and not fab.mgmt_rate:
                raise FabError(f"{where}: the management network is not shaped")
            D.parse_rate(ev["rate"])
            out.append((at, action, target, ev["rate"]))
        elif action == "partition":
            out.append((at, action, target, bool(ev.get("mgmt", True))))
        elif action == "flap":
            out += flap_events(target, ev["period"], ev["for"], start=at)
        else:
            out.append((at, action, target, None))
    out.sort(key=lambda e: e[0])     # stable: same-time events keep file order
    return out


def flap_events(link, period, duration, start=0.0):
    """Down for half a period, up for the other half, for `duration` seconds; ends up."""
    for name, v in (("period", period), ("for", duration)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            raise FabError(f"flap: {name} must be a positive number of seconds")
    half = period / 2.0
    if half < 0.05:
        raise FabError("flap: period must be at least 0.1 s")
    out = []
    t = 0.0
    while t < duration - 1e-9:
        out.append((start + t, "down", link, None))
        out.append((start + min(t + half, duration), "up", link, None))
        t += period
    return out


def run(events, log=print):
    """Run checked events in the foreground; returns when the last one is done."""
    t0 = time.monotonic()
    stop = {"now": False}

    def on_term(signum, frame):
        stop["now"] = True
    old = signal.signal(signal.SIGTERM, on_term)
    try:
        for at, action, target, value in events:
            while not stop["now"]:
                left = t0 + at - time.monotonic()
                if left <= 0:
                    break
                time.sleep(min(left, 0.2))
            if stop["now"]:
                log("pxfab schedule: stopped")
                return False
            F.apply_fault(action, target, value)
            desc = " ".join(str(x) for x in (action, target, value) if x is not None)
            log(f"t={time.monotonic() - t0:7.2f}s  {desc}")
        return True
    finally:
        signal.signal(signal.SIGTERM, old)


def spawn(events, what):
    """Run checked events in a background process recorded in the state file (down stops it)."""
    d = F.state_dir()
    os.makedirs(d, exist_ok=True)
    stamp = f"{int(time.time() * 1000)}-{os.getpid()}"
    path = os.path.join(d, f"job-{stamp}.json")
    with open(path, "w") as f:
        json.dump([{"at": at, "action": action, **({"target": target} if target else {}),
                    **({"value": value} if value is not None else {})}
                   for at, action, target, value in events], f)
    logfile = os.path.join(d, f"job-{stamp}.log")
    env = dict(os.environ)
    pkg_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with open(logfile, "w") as out:
        p = subprocess.Popen([sys.executable, "-m", "plexus.fab", "_job", path], stdout=out,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                             start_new_session=True)
    F.add_job(p.pid, what, logfile)
    return p.pid, logfile


def run_job_file(path):
    """Entry of the background process: events already checked and expanded."""
    with open(path) as f:
        raw = json.load(f)
    events = [(e["at"], e["action"], e.get("target"), e.get("value")) for e in raw]
    try:
        return run(events, log=lambda m: print(m, flush=True))
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
