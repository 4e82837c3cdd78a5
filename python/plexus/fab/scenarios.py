"""Rail and path failure scenarios on a pxfab fabric.

Defined once for the fault-tolerance tests (tests/python/test_rail_faults.py)
and the comparison with other MPI libraries (bench/fault.py), so that both
break the fabric the same way. A scenario names the fabric it needs and the
faults to inject while a job streams from node0 to node1: `pxfab fault`
arguments, each at a time in seconds after the job's start (ft_stream's
FT_START). The times are parameters, since a test streams for seconds and the
benchmark for gigabytes; the defaults are the benchmark's.

  base      no fault
  1         one rail (node0:rail1) down for good
  2         one rail down, then up again
  3         one rail flapping (down for half a period, up for the other half)
  4         random loss on one rail
  5         every rail of node0 down, then up again
  6         node1 cut off on every rail for good (management stays)
  7         2-leaf 2-spine fat-tree, 2 paths routed by path index: a
            leaf-spine link down for good
  loss-all  random loss on every rail of node0
  silent    every packet of node1's rails dropped, the links staying up
  blackhole every packet of one rail (node0:rail1) dropped for good, the link
            staying up: a cable pulled where no carrier loss shows, so only
            timeouts can tell
  slow      node1's end of rail1 slowed to 20 Mbit/s for good: a degraded
            link, which its kernel still hears

    sc = scenario("2", at=3, end=23)
    pxfab up <fabric_args(sc.fabric, "1gbit")>
    for at, name, fn in plan(sc, lambda *a: run_pxfab("fault", *a)): ...
"""

import functools
from collections import namedtuple

CUT = "node0:rail1"                         # the cable the one-rail scenarios pull
RAILS = ("node0:rail0", "node0:rail1")      # every rail of node0 on the two-rail fabric
SPINES = ("leaf0:spine0", "leaf0:spine1")   # node0's leaf uplinks on the fat-tree

# at: seconds after FT_START; name: how a caller finds when the fault took
# effect; fault: the arguments of `pxfab fault`.
Event = namedtuple("Event", "at name fault")

# fabric: "rails" or "fattree" (fabric_args); fault_at / fault_end: when the
# fault starts and ends as ft_stream's --fault-at / --fault-end take them
# (None: no fault, or a fault that stays).
Scenario = namedtuple("Scenario", "key title fabric events fault_at fault_end")


def _s(t):
    return "%g" % t


def _base():
    return "no fault", "rails", [], None, None


def _rail_down(at=5):
    return ("%s down for good %s s into the transfer" % (CUT, _s(at)), "rails",
            [Event(at, "down", ("down", CUT))], at, None)


def _rail_down_up(at=3, end=23):
    return ("%s down for %s s (%s s to %s s), then up" % (CUT, _s(end - at), _s(at), _s(end)),
            "rails", [Event(at, "down", ("down", CUT)), Event(end, "up", ("up", CUT))], at, end)


def _rail_flap(at=3, period=2, duration=30):
    return ("%s flapping, period %s s, for %s s from %s s in" % (CUT, _s(period), _s(duration), _s(at)),
            "rails", [Event(at, "flap", ("flap", CUT, "--period", period, "--for", duration))],
            at, at + duration)


def _rail_loss(at=1, percent=5):
    return ("%s%% random loss on %s from %s s in" % (_s(percent), CUT, _s(at)), "rails",
            [Event(at, "loss", ("loss", CUT, percent))], at, None)


def _all_down_up(at=3, end=13):
    events = [Event(at, "down%d" % i, ("down", l)) for i, l in enumerate(RAILS)]
    events += [Event(end, "up%d" % i, ("up", l)) for i, l in enumerate(RAILS)]
    return ("both rails of node0 down for %s s (%s s to %s s), then up" % (_s(end - at), _s(at), _s(end)),
            "rails", events, at, end)


def _partition(at=3):
    return ("node1 cut off on every rail for good %s s in" % _s(at), "rails",
            [Event(at, "partition", ("partition", "node1", "--rails-only"))], at, None)


def _spine_down(at=3, link=SPINES[0]):
    # routed by path index, path p crosses spine p both ways
    return ("fat-tree, 2 paths: %s (path %d) down for good %s s in"
            % (link.replace(":", "-"), SPINES.index(link), _s(at)), "fattree",
            [Event(at, "down", ("down", link))], at, None)


def _loss_all(at=0.5, percent=5):
    return ("%s%% random loss on every rail of node0 from %s s in" % (_s(percent), _s(at)), "rails",
            [Event(at, "loss%d" % i, ("loss", l, percent)) for i, l in enumerate(RAILS)], at, None)


def _silent(at=3):
    return ("every packet of node1's rails dropped for good %s s in, the links up" % _s(at), "rails",
            [Event(at, "loss%d" % i, ("loss", "node1:rail%d" % i, 100)) for i in range(len(RAILS))],
            at, None)


def _blackhole(at=3):
    return ("every packet of %s dropped for good %s s in, the link up" % (CUT, _s(at)), "rails",
            [Event(at, "loss", ("loss", CUT, 100))], at, None)


def _slow(at=3, rate="20mbit"):
    return ("node1:rail1 slowed to %s for good %s s in" % (rate, _s(at)), "rails",
            [Event(at, "rate", ("rate", "node1:rail1", rate))], at, None)


_BUILD = {
    "base": _base, "1": _rail_down, "2": _rail_down_up, "3": _rail_flap, "4": _rail_loss,
    "5": _all_down_up, "6": _partition, "7": _spine_down, "loss-all": _loss_all, "silent": _silent,
    "blackhole": _blackhole, "slow": _slow, "down5": lambda **k: _rail_down_up(**dict({"end": 8}, **k)),
}
KEYS = tuple(_BUILD)


def scenario(key, **timing):
    """The scenario `key` with the given times (keyword arguments of its builder:
    at, end, period, duration, percent, link) in place of the defaults."""
    if key not in _BUILD:
        raise KeyError("unknown fault scenario %r (known: %s)" % (key, ", ".join(KEYS)))
    return Scenario(key, *_BUILD[key](**timing))


def plan(sc, apply):
    """[(at, name, fn)] in time order; fn() calls apply(*fault) (apply runs `pxfab fault`)."""
    return [(e.at, e.name, functools.partial(apply, *e.fault))
            for e in sorted(sc.events, key=lambda e: e.at)]


def fabric_args(shape, rate, rails=2, uplink_rate=None):
    """`pxfab up` arguments of a scenario's fabric: 2 nodes joined by `rails` rails
    ("rails"), or 2 nodes under a 2-leaf 2-spine fat-tree, one rail with 2 paths
    routed by path index, so that one leaf-spine cable breaks exactly one path
    ("fattree"; uplinks at `uplink_rate`, default the node links' rate)."""
    if shape == "fattree":
        return ["--leaves", 2, "--spines", 2, "--nodes-per-leaf", 1, "--rails", 1, "--paths", 2,
                "--rate", rate, "--uplink-rate", uplink_rate or rate, "--routing", "path"]
    if shape != "rails":
        raise ValueError("unknown fabric shape %r" % shape)
    return ["--nodes", 2, "--rails", rails, "--rate", rate]
