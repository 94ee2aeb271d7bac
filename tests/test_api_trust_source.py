"""What runs is what is transformed: the source s2s reads must be the code of the live function.

A file edited after its module was imported is an error naming the function
and the file, never a derivative of code the program does not run (linecache's
stale copy of the text included); a function transformed before the edit keeps
the module generated from the code that runs. The check must not fire on
unchanged files: module-level and nested functions, closures, lambdas (several
on one line too), decorated functions, docstrings, literal defaults,
annotations under ``from __future__ import annotations``, generators, methods
(name mangling, ``super()``), indented definitions, generated modules read
again for higher derivatives, and every function of ``examples/``.

Oracles: ``jax.grad`` of the same expressions in ``jax.numpy``.
"""

import importlib
import importlib.util
import inspect
import itertools
import linecache
import os
import pathlib
import sys
import tempfile
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import s2s
from s2s.frontend import source

jax.config.update("jax_enable_x64", True)

X = np.random.default_rng(11).normal(size=3)
FOLDER = pathlib.Path(tempfile.mkdtemp(prefix="s2s_api_trust_source_"))
_counter = itertools.count()


def _module(text: str):
    """Write ``text`` to a new module file and import it."""
    name = f"api_trust_source_{next(_counter)}"
    path = FOLDER / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def assert_close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)


def _edit(module, old, new):
    path = pathlib.Path(module.__file__)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    stat = path.stat()
    # a new mtime even on coarse clocks
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def test_a_file_edited_after_import_is_an_error_not_code_that_never_runs():
    module = _module("""
        import numpy as np


        def f(x):
            return np.sum(x**2)


        def h(x):
            return np.sum(np.sin(x))


        g = lambda x: np.sum(x**3)  # noqa: E731
        """)
    before = s2s.grad(module.f)
    before(X)
    linecache.getlines(module.__file__)  # linecache now holds the text as imported
    _edit(module, "x**3", "x**5")
    _edit(module, "np.sin(x)", "np.cos(x)")
    for fn in (module.g, module.h):
        with pytest.raises(s2s.S2SError, match="changed since it was imported") as info:
            s2s.grad(fn)(X)
        assert info.value.origin.path == module.__file__ and "reload" in info.value.hint
    # generated before the edit, from the code that runs: still right
    assert_close(before(X), jax.grad(lambda x: jnp.sum(x**2))(X))
    importlib.util.spec_from_file_location(
        module.__name__,
        module.__file__,
        # a reload
    ).loader.exec_module(module)
    assert_close(s2s.grad(module.h)(X), jax.grad(lambda x: jnp.sum(jnp.cos(x)))(X))


def test_an_edited_default_is_an_error():
    module = _module("""
        import numpy as np


        def f(x, scale=2.0):
            return np.sum(x * scale)
        """)
    _edit(module, "scale=2.0", "scale=3.0")
    with pytest.raises(s2s.S2SError, match="changed since it was imported"):
        s2s.grad(module.f)(X)


SHAPES = _module('''
    from __future__ import annotations

    import functools
    import math

    import numpy as np
    from numpy import linalg


    def annotated(x: np.ndarray, k: int = 3, *, s: float = -0.0) -> float:
        """A docstring
           over two lines."""
        return np.sum(x * k) + linalg.norm(x) + math.pi + s


    def outer(a):
        b = 2.0

        def inner(x):
            """Inner."""
            return np.sum(x * a * b)

        return inner


    closure = outer(3.0)
    lam = lambda x: np.sum(x**2)  # noqa: E731
    lam2, lam3 = (lambda x: x + 1.0), (lambda x: x - 1.0)
    spread = (
        lambda x,
        y=1.0: np.sum(x * y)
    )


    def identity(fn):
        return fn


    @identity
    @functools.lru_cache(maxsize=None)
    def decorated(x):
        return x * 2


    def generator(n):
        for i in range(n):
            yield i * 2


    class Shapes:
        scale = 2.0
        __private = 1.0

        def method(self, x):
            """Method.

            More.
            """
            return np.sum(x * self.scale) + self.__private

        def uses_super(self):
            return super().__init__()

        @staticmethod
        def static(x):
            return np.sum(x)

        class Inner:
            def deep(self, x):
                return x * 2


    if True:
        def indented(x):
            return np.sum(x)


    def local_class():
        c = 5.0

        class Local:
            def m(self, x):
                return x * c

        return Local


    def curried(a):
        return lambda x: lambda y: x * y * a
    ''')


def _shaped_functions():
    s = SHAPES
    return [
        s.annotated, s.outer, s.closure, s.lam, s.lam2, s.lam3, s.spread, s.decorated.__wrapped__, s.generator,
        s.Shapes.method, s.Shapes.uses_super, s.Shapes.static, s.Shapes.Inner.deep, s.indented,
        s.local_class().m, s.curried(1.0), s.curried(1.0)(2.0),
    ]  # fmt: skip


def _example_functions():
    folder = pathlib.Path(__file__).parent.parent / "examples"
    sys.path.insert(0, str(folder))
    try:
        for path in sorted(folder.glob("*.py")):
            module = importlib.import_module(path.stem)
            for value in vars(module).values():
                if inspect.isfunction(value) and value.__module__ == module.__name__:
                    yield value
    finally:
        sys.path.remove(str(folder))


def test_the_check_does_not_fire_on_unchanged_files():
    for fn in [*_shaped_functions(), *_example_functions()]:
        source.load(fn)  # no error
    text = source.load(SHAPES.lam3).text
    assert "x - 1.0" in text and "x + 1.0" not in text


def test_generated_code_read_again_passes_the_check():
    for fn in (SHAPES.annotated, SHAPES.closure):
        generated = s2s.grad(fn).s2s_generated_function
        assert source.load(generated).fn is generated
    hess = s2s.jacfwd(s2s.grad(SHAPES.closure))(X)
    np.testing.assert_allclose(hess, jax.hessian(lambda x: jnp.sum(x * 3.0 * 2.0))(X))
    second = s2s.grad(s2s.grad(SHAPES.curried(2.0)(3.0)))(0.5)
    np.testing.assert_allclose(second, jax.grad(jax.grad(lambda y: 3.0 * y * 2.0))(0.5))


def test_a_lambda_whose_lines_do_not_parse_alone_is_read_from_its_statement():
    """A lambda inside a longer expression is parsed with the module-level statement around it (not the
    whole file), and its positions are the file's."""
    module = _module("""
        import numpy as np


        def before(x):
            return np.sum(x)


        f = (
            lambda x:
                np.sum(np.sort(x) ** 2)
        )


        def loss(xs):
            return np.sum(
                np.stack(list(map(lambda v: np.tanh(v) * 2.0,
                                  xs)))
            )
        """)
    src = source.load(module.f)
    assert src.file.line_offset == 8  # the statement ``f = (`` starts on line 9
    origin = src.origin(src.node)
    assert (origin.line, origin.col, origin.text) == (10, 4, "    lambda x:")
    assert_close(s2s.grad(module.f)(X), 2 * X)  # (sorting only permutes)
    xs = [X, 2 * X]
    got = s2s.grad(module.loss)(xs)
    want = jax.grad(lambda xs: jnp.sum(jnp.stack([jnp.tanh(v) * 2.0 for v in xs])))(xs)
    for g, w in zip(got, want):
        assert_close(g, w)
