"""Named numbers for prose: {{ figure(...) }} in a page."""
