"""The one error type the engine raises for bad input.

Every public entry point validates its inputs and raises :class:`EngineError` with a
message written for a reader (it is shown as is, inline in the page or on a terminal).
``field`` names the input that caused it, so a widget can show the message beside it.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Bad input or an impossible request, with a message a reader can act on."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_dict(self) -> dict[str, str]:
        """The error as plain strings, for JSON and for the browser."""
        out = {"error": self.message}
        if self.field is not None:
            out["field"] = self.field
        return out
