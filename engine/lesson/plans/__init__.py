"""A plan's inputs as fields and its result as JSON; a model read from a config.json."""
