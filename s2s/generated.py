"""What a transformation produces: a generated module's text and what running it needs.

Kept apart from the compiler (``codegen``) so that a checked-in module can be
used without importing it (``checked_in``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .freshness import Watch


@dataclass(frozen=True)
class Generated:
    """A generated module's text, the names of its entry functions, values it needs injected, and a watch
    on what it baked in: ``fresh()`` is false once one of those values has changed (see ``freshness``).
    """

    text: str
    entries: dict  # kind -> generated function name
    injected: dict = field(default_factory=dict)
    program: object = (
        None  # the codegen.Program it was made from (None: read from a checked-in file)
    )
    watch: Watch | None = field(default=None, compare=False)
    # the checked-in file the text was read from (None: made in memory): run from there, so tracebacks and
    # debuggers show the file a reviewer read
    path: str | None = None

    def fresh(self) -> bool:
        return self.watch is None or self.watch.fresh()
