"""pxfab: an emulated cluster fabric (nodes, rails, fat-trees, shaping, faults) in network namespaces.

Public entry points:
    desc.Fabric / desc.load      parse and validate a description (no root needed)
    desc.gen_rails / gen_fattree generators for the common shapes
    fabric.up / fabric.down      build and remove the fabric in the kernel (root)
    fabric.apply_fault           link down/up, loss, rate, partition/heal, reset
    fabric.stats / fabric.status observation
    export.export                Plexus JSON, Slurm topology.conf, ibnetdiscover-style, hosts
"""

from .desc import FabError, Fabric, gen_fattree, gen_rails, load, parse_rate  # noqa: F401
