"""Notes shown beside a field: what the engine accepted but a reader should know.

A note is not a refusal: the result is computed and shown, and the note sits beside the
field it is about (a widget returns it in :attr:`engine.render.widget.Rendered.notes`).
"""

from __future__ import annotations

# How each task is named in "unused while ...".
_WHILE = {"serve": "serving", "train": "training"}
_READER = {"serve": "serving", "train": "training"}


def unused_input_note(chosen_task: str, other_task: str, refusal: str) -> str:
    """A value only ``other_task`` reads, which it would refuse (``refusal``, the engine's
    message), kept as typed while ``chosen_task`` is shown."""
    return (f"Unused while {_WHILE[chosen_task]}, and {_READER[other_task]} would refuse it: "
            f"{refusal} Your text is kept.")


def context_beyond_note(tokens: int, model_name: str, max_context: int) -> str:
    """A context (or prompt, or training sequence) of ``tokens``, longer than the model's
    ``max_context``: computed all the same, since runtimes can extend a context."""
    return (f"{tokens:,} tokens is beyond {model_name}'s maximum context of {max_context:,}: "
            "the figures are for a runtime that extends it (RoPE scaling, for example); the "
            f"model as released was trained for {max_context:,}.")
