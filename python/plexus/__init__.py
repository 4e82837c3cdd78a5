"""Plexus Python tooling: the emulated fabric (plexus.fab) and helpers around the MPI library."""

__version__ = "0.1.0"
