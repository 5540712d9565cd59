"""Diagrams drawn by the engine at build time: a model's layer, a server's topology."""
