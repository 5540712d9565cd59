"""The render kit: HTML (tag, esc), SVG charts, controls and the widget protocol. Imports the
numbers and words layers only."""
