"""How notebooks show transformed functions: their generated module, as highlighted Python.

Jupyter and IPython call ``_repr_markdown_``; a fenced ``python`` block is
highlighted there, the way people look at ``jax.make_jaxpr``. Everywhere else
``print(f.source)`` prints the same text.
"""

from __future__ import annotations

from .errors import S2SError


class ShowsSource:
    """Mixin for objects with a ``.source`` (the generated module) and a ``repr``."""

    def _repr_markdown_(self) -> str:
        title = repr(self).strip("<>")
        try:
            source = self.source
        except (
            S2SError
        ) as err:  # shown, not hidden: the reason there is no single module
            return f"{title}: no module to show.\n\n```\n{err}\n```"
        return f"{title}\n\n```python\n{source.rstrip()}\n```"
