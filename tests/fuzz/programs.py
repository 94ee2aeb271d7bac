"""Random programs in the style people write, for differential testing of s2s (issue 10).

``generate(seed)`` draws one program from a seeded ``random.Random``: the same
seed gives the same program, byte for byte. A ``Program`` holds

- ``source``: a NumPy module (``import numpy as np``) that s2s reads from a file;
- ``twin``: the same module for ``jax.numpy`` (the oracle), made from
  ``source`` by ``jax_twin`` (in-place writes become ``.at[...]`` updates);
- ``entry``: the name of the function to differentiate;
- ``args_code``: Python text that builds ``args`` (a tuple) and ``kwargs``
  (a dict) from ``np`` and the loaded module ``mod`` (for namedtuple classes);
- ``argnums``: the positional arguments to differentiate (floats: arrays,
  pytrees of arrays, Python floats).

What programs contain (each drawn with some probability):

- a model over a parameter pytree read with constant paths: a list of
  ``(W, b)`` layers (``for W, b in params``, ``params[:-1]`` then
  ``params[-1]``, ``(W1, b1), (W2, b2) = params``, ``params[1][0]``), a dict
  (``p["w1"]``, nested dicts), namedtuples (``layer.w``, a namedtuple of
  layers), a logistic-regression ``(w, b)`` tuple, an RNN over time steps, an
  attention block with a softmax helper, a layer-norm helper;
- activations as NumPy calls, module-level helpers, lambdas and local ``def``s
  closing over differentiated values, and closures made by module-level
  factories (two closures of one factory in one function); sometimes the
  differentiated function is itself made by a factory;
- helpers with every parameter kind (positional-only, positional-or-keyword,
  keyword-only; with and without literal and array defaults) called with
  positional and keyword arguments in varied orders and omitted defaults;
- NumPy keyword calls (``np.sum(x, axis=0)``, ``np.clip(x, a_min=..,
  a_max=..)``, ``np.mean(x, keepdims=True)``), elementwise ops, reductions,
  matmul, constant/negative indices and slices, in-place writes into fresh
  arrays (``buf[-1] += v``), module-level global constants;
- moderate control flow: ``if``/``else`` on data, ``for`` over ``range`` with
  ``break``/``continue``, a bounded ``while``.

Programs are kept well-defined at their inputs: values stay bounded, logs and
square roots take positive arguments, divisions divide by ``1 + z*z``; kinks
(``abs``, ``maximum``, ``clip``, ``max``, ``where`` and data comparisons) are
applied to values that depend on the inputs, and the checker (``check.py``)
probes every kink and comparison at the drawn point and skips programs that sit
within a margin of one.

Layout: ``programs.py`` (this module: ``Gen``, ``generate``, ``KNOWN``) mixes
together ``expressions.py``, ``helpers.py``, ``models.py``, ``statements.py``,
``idioms.py``, ``python_idioms.py``, ``pitfalls.py`` and ``assembly.py`` (``Program``);
``vocabulary.py`` holds the templates and ``V``; ``twin.py`` the JAX twin.
"""

from __future__ import annotations

import random

from .assembly import Assembly, Program
from .expressions import Expressions
from .helpers import Helpers
from .idioms import Idioms
from .models import Models
from .pitfalls import Pitfalls
from .python_idioms import PythonIdioms
from .statements import Statements
from .twin import _load, _store, _Twin, jax_twin, to_jnp  # noqa: F401 (re-exported)
from .vocabulary import (  # noqa: F401 (re-exported)
    ACT_NAMES,
    BINARY,
    KINKED_BINARY,
    KINKED_UNARY,
    UNARY,
    B,
    D,
    V,
    _shape_text,
)


class Gen(
    Expressions, Helpers, Models, Statements, Idioms, PythonIdioms, Pitfalls, Assembly
):
    """Draws one program; ``lines`` of the main function, module-level ``top`` text, and the arguments."""

    def __init__(self, seed, avoid=frozenset()):
        self.seed = seed
        # known open bugs to steer away from (campaign exploration only)
        self.avoid = frozenset(avoid)
        self.r = random.Random(seed)
        self.env: dict[str, V] = {}
        self.names = 0
        # module-level assignments (constants, closures)
        self.module_globals: list[str] = []
        # module-level lines that read helpers (``ACT_TABLE = {"relu": relu_fn}``): after the helpers
        self.late_globals: list[str] = []
        self.helpers: list[str] = []  # module-level function definitions
        self.helper_names: set[str] = set()
        self.imports = {"import numpy as np"}
        self.features: list[str] = []
        # (template, in_shape_rule) usable as activations: "name({})"
        self.callables: list = []
        # names of Python-float scalars that may be used as coefficients
        self.scalars = []

    # ----------------------------------------------------------------- basics

    def p(self, prob):
        return self.r.random() < prob

    def pick(self, xs):
        return self.r.choice(list(xs))

    def fresh_name(self, prefix):
        self.names += 1
        return f"{prefix}{self.names}"

    def feature(self, name):
        if name not in self.features:
            self.features.append(name)

    def define(self, name, shape, const=False, fresh=False):
        self.env[name] = V(tuple(shape), const, fresh)


KNOWN = {
    "kwonly_by_keyword": "keyword-only parameters of the main function passed by keyword are ignored",
    "negative_index": "params[-1] (a negative constant index into a pytree) gives a zero gradient",
    "factory_two": "two closures from one factory share one value",
    "one_line_def": "`def f(x): return ...` on one line crashes",
    "list_concat": "`[h0] + hs` after appends is wrong on NumPy",
    "jvp_kwonly": "s2s.jvp of a function with keyword-only parameters crashes (findings #1)",
    "kwonly_order": "a keyword-only parameter without default after one with a default crashes (findings #2)",
    "empty_loop": "a for loop over an empty list crashes (findings #5)",
    "numpy_scalar_constant": "a module constant that is a NumPy scalar crashes (findings #10)",
    "record_loops": "a for loop over a list of dicts/namedtuples or dict.items() of dicts crashes (findings #11)",
    "container_truth": "`if not ws:` on a list/tuple crashes (findings #12)",
    "static_default_branch": "a static bool default in an if with differently-shaped branches crashes on XLA (findings #14)",
    "alias_after_update": "writes through views after an in-place update give wrong answers (findings #13, #16)",
}


def generate(seed: int, avoid=frozenset()) -> Program:
    """The program of ``seed`` (deterministic); ``avoid``: names from ``KNOWN`` to steer away from."""
    return Gen(seed, avoid).program()
