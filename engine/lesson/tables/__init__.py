"""Tables rendered from the engine for pages: {{ table(...) }}."""
