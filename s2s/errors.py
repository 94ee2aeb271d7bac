"""User-facing errors: what went wrong, where in the user's file, and what to do instead."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Origin:
    """A span of the user's source: file, 1-based line, 0-based column, and the line's text."""

    path: str
    line: int
    col: int
    end_col: int
    text: str
    phase: str = ""  # "backward" for generated code derived from this span (starts a new comment block)

    @property
    def short(self) -> str:
        """``file.py:12`` with the file's base name, as generated comments cite it."""
        return f"{self.path.rsplit('/', 1)[-1]}:{self.line}"


class S2SError(Exception):
    """An error in the user's program or request, rendered as one readable message.

    Rendered form::

        model.py:12:9: error: no derivative rule for `np.fft.fft`
            y = np.fft.fft(x)
                ^^^^^^^^^^^^^
        hint: ...
    """

    def __init__(self, message: str, origin: Origin | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.origin = origin
        self.hint = hint

    def render(self) -> str:
        lines = []
        if self.origin is None:
            lines.append(f"error: {self.message}")
        else:
            o = self.origin
            lines.append(f"{o.path}:{o.line}:{o.col + 1}: error: {self.message}")
            stripped = o.text.lstrip()
            indent = len(o.text) - len(stripped)
            lines.append("    " + stripped.rstrip())
            width = max(1, min(o.end_col, len(o.text.rstrip())) - o.col)
            lines.append("    " + " " * max(0, o.col - indent) + "^" * width)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class UnsupportedSyntax(S2SError):
    """The function uses a construct s2s does not handle (yet)."""


class NameResolutionError(S2SError):
    """A name in the function cannot be resolved to a local, an op, a helper or a constant."""


class MissingRule(S2SError):
    """A differentiated value flows through an op that has no derivative rule."""
