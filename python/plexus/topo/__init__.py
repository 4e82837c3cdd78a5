"""plexus.topo: the fabric model of Plexus in Python (pxtopo).

Reads the descriptions the C library reads (Plexus JSON as pxfab exports it,
ibnetdiscover output, Slurm's topology.conf), routes as pxfab's fabrics route,
clusters hosts into switch clusters and answers the topology queries:

    fab = plexus.topo.load("fabric.json")
    fab.hops("node0", "node3"); fab.path("node0", "node3")
    fab.depth(); fab.clusters(1); fab.cluster_of("node0", 1)
    fab.sharing(["node0", "node1", "node2"]); fab.hosts_per_leaf()

and places ranks and picks nodes (plexus.topo.place: pxtopo place, select).
"""

from .formats import FORMATS, expand_hostlist, load, parse  # noqa: F401
from .model import Fabric, TopoError  # noqa: F401
