"""The render kit: HTML (html: tag, esc, tables, scroll boxes), the SVG plotting kit (svg:
shapes; plot: frame, scales, axes, bars, legends, the chart root; placer: labels that do not
collide; charts and curves: the lesson's shared charts), controls and the widget protocol.
Imports the numbers and words layers only."""
