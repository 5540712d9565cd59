"""Every number of the lesson 'What AI workloads need', as a pure-Python package.

Standard library only. Importing ``engine`` loads nothing else: use the modules
(``engine.numbers.plan``, ``engine.numbers.memory``, ``engine.numbers.catalog`` ...) directly; the catalogue is
read lazily on first use.
"""

__version__ = "0.1.0"
