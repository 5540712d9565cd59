"""The numbers layer: the catalogue and the arithmetic of memory, compute, serving, training,
cost and the five questions (plan). Frozen records and functions only, the records written
as JSON by records.to_dict; imports nothing from the layers above (words, render, lesson,
widgets)."""
