"""The numbers layer: the catalogue and the arithmetic of memory, compute, serving, training
and cost. Frozen records and functions only; imports nothing from the layers above
(words, render, lesson, widgets)."""
