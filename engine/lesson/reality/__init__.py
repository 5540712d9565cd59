"""The reality check: the engine's numbers beside published measurements and figures."""
