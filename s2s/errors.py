"""User-facing errors: what went wrong, where in the user's file, and what to do instead."""

from __future__ import annotations

from dataclasses import dataclass

# defined in the runtime, whose errors in generated code are S2SErrors too
from .runtime.located import (
    S2SError,
)


@dataclass(frozen=True)
class Origin:
    """A span of the user's source: file, 1-based line, 0-based column, and the line's text."""

    path: str
    line: int
    col: int
    end_col: int
    text: str
    phase: str = (
        ""  # "backward" for generated code derived from this span (starts a new comment block)
    )
    # in a generated module s2s reads again (``s2s.vmap(s2s.grad(f))``): the user's line its comment
    # cites, which errors and the new module's comments show
    cited: Origin | None = None

    @property
    def short(self) -> str:
        """``file.py:12`` with the file's base name, as generated comments cite it."""
        return f"{self.path.rsplit('/', 1)[-1]}:{self.line}"


class UnsupportedSyntax(S2SError):
    """The function uses a construct s2s does not handle (yet)."""


class NameResolutionError(S2SError):
    """A name in the function cannot be resolved to a local, an op, a helper or a constant."""


class MissingRule(S2SError):
    """A differentiated value flows through an op that has no derivative rule."""
