"""The ``s2s`` command: print or write generated derivative modules.

It only parses arguments, imports the user's module and calls the API
(``s2s.generate``); every user error becomes one readable message and a
non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.machinery
import importlib.util
import inspect
import io
import linecache
import os
import re
import sys
import traceback

EXAMPLES = """examples:
  s2s grad examples/mlp.py::loss --wrt params
  s2s grad model.py::loss --wrt W,b -o loss_grad.py
  s2s grad examples/tanh_derivatives.py::f --order 3
  s2s jvp examples/mlp.py::loss --wrt params
  s2s hessian examples/polynomial.py::f
  s2s lower examples/mlp.py::loss --dump
  s2s vmap examples/mlp.py::loss --in-axes None,0,0
  s2s grad model.py::loss model.py::accuracy -o derivatives/
"""

DETAILS = """
output (-o):
  none or -      print the module(s) on stdout
  FILE.py        write one module there (missing folders are made)
  FOLDER/        write each module into FOLDER as FUNC_grad.py, FUNC_jvp.py, FUNC_grad_jvp.py,
                 FUNC_batched.py or FUNC.py (lower); an existing folder needs no slash
  Files are written atomically; the source file is never overwritten.

exit status:
  0  the module(s) were printed or written
  1  s2s could not transform a function (the message names the file:line:col)
  2  a mistake on the command line: file, function, parameter or output path
"""


class UsageError(Exception):
    """A mistake on the command line (file, function or parameter names)."""


def _version() -> str:
    from s2s import __version__

    return __version__


def _add_targets(command) -> None:
    command.add_argument(
        "targets",
        nargs="+",
        metavar="PATH::FUNC",
        help="the Python file and the function in it (several: one module each)",
    )


def _add_output(command) -> None:
    """``-o`` and ``--dump``, last among a writing command's options."""
    command.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="a file, a folder, or - for stdout (default: print the module)",
    )
    command.add_argument(
        "--dump",
        action="store_true",
        help="print the function after every pass to stderr",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s",
        description="Source-to-source transformations of NumPy functions: readable derivative "
        "modules that run compiled through XLA (jax.jit) or eagerly on NumPy.",
        epilog=EXAMPLES + DETAILS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"s2s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = {
        "grad": (
            "write the gradient of a function as a Python module",
            "Write a module defining FUNC_grad, which takes FUNC's parameters and returns the gradient of "
            "FUNC's (scalar) result with respect to the --wrt parameters: one value, or a tuple when several "
            "are named. With --order N, FUNC_grad_grad...: the gradient of the gradient, s2s transforming "
            "its own generated code again (one --wrt parameter, a scalar). The module imports only the s2s runtime.",
        ),
        "jvp": (
            "write the forward-mode derivative (Jacobian-vector product) of a function",
            "Write a module defining FUNC_jvp(*params, *tangents), which returns (FUNC's result, its tangent): "
            "the derivative along the tangents of the --wrt parameters (default: all of them).",
        ),
        "hessian": (
            "write Hessian-vector products of a function (forward over reverse)",
            "Write a module defining FUNC_grad_jvp(*params, *tangents), the forward-mode derivative of FUNC's "
            "generated gradient: it returns (the gradient, the Hessian times the tangents) for the --wrt "
            "parameters. s2s.hessian(FUNC) builds the whole matrix from it.",
        ),
    }
    for name, (summary, description) in commands.items():
        command = sub.add_parser(
            name,
            help=summary,
            description=description,
            epilog=EXAMPLES + DETAILS,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        _add_targets(command)
        command.add_argument(
            "--wrt",
            metavar="NAME[,NAME...]",
            help="parameters to differentiate with respect to (default: "
            + ("all of them" if name == "jvp" else "the first parameter")
            + ")",
        )
        if name == "grad":
            command.add_argument(
                "--order",
                type=int,
                default=1,
                metavar="N",
                help="the N-th derivative (default: 1)",
            )
        _add_output(command)
    vmap = sub.add_parser(
        "vmap",
        help="write the batched form of a function (JAX's vmap, as a module)",
        description="Write a module defining FUNC_batched, which takes FUNC's parameters with a batch axis "
        "where --in-axes maps them and returns FUNC's results for every example, the batch axis where "
        "--out-axes puts it. Python if/while on batched values are batched too.",
        epilog="examples:\n  s2s vmap examples/mlp.py::loss --in-axes None,0,0\n"
        "  s2s vmap model.py::predict --in-axes 1,None --out-axes 1 -o predict_batched.py\n"
        + DETAILS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_targets(vmap)
    vmap.add_argument(
        "--in-axes",
        default="0",
        metavar="AXES",
        help="one axis per parameter, comma-separated (an int, or None for a shared one), "
        "or one for all of them (default: 0)",
    )
    vmap.add_argument(
        "--out-axes",
        default="0",
        metavar="AXES",
        help="where the batch axis goes in the result: an int, None, or one per returned value (default: 0)",
    )
    vmap.add_argument(
        "--axis-size",
        type=int,
        metavar="N",
        help="the batch size, when no parameter is mapped",
    )
    vmap.add_argument(
        "--axis-name",
        metavar="NAME",
        help="the name collectives (`s2s.psum(x, NAME)`) give the mapped axis",
    )
    _add_output(vmap)
    lower = sub.add_parser(
        "lower",
        help="write the normal form of a function, the code s2s differentiates",
        description="Write a module defining FUNC as s2s lowers it (names resolved to xp.<op>, one "
        "op per line, helpers alongside), runnable on NumPy and under jax.jit.",
        epilog="example:\n  s2s lower examples/mlp.py::loss --dump\n" + DETAILS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_targets(lower)
    _add_output(lower)
    generate = sub.add_parser(
        "generate",
        help="regenerate the checked-in modules declared in pyproject.toml [tool.s2s]",
        description="Regenerate the modules declared as [[tool.s2s.targets]] in the nearest "
        "pyproject.toml with a [tool.s2s] table: those whose inputs are among PATHS, or all of them. "
        "A module whose header names the current hash of each input file is fresh and left alone "
        "(nothing is imported); the others are written again, atomically.",
        epilog=GENERATE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    generate.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="changed files (a pre-commit hook passes them): regenerate the targets they feed",
    )
    generate.add_argument(
        "--check",
        action="store_true",
        help="write nothing; list the stale modules and exit 1 if there are any (for CI)",
    )
    generate.add_argument(
        "--exit-non-zero-on-write",
        action="store_true",
        help="exit 1 when a module was written (the pre-commit hook: the commit stops until it is added)",
    )
    return parser


GENERATE_HELP = """pyproject.toml:
  [[tool.s2s.targets]]
  source = "model.py::loss"          # PATH::FUNC, relative to the project root
  transform = "grad"                 # grad, value_and_grad, jvp, hessian, vmap, lower,
                                     # vmap(grad), grad(grad)
  wrt = "params"                     # or ["W", "b"]
  in_axes = "None,0,0"               # vmap
  output = "derivatives/loss_grad.py"

examples:
  s2s generate                       # regenerate every stale module
  s2s generate model.py              # the modules made from model.py
  s2s generate --check               # CI: exit 1 and list stale modules, write nothing

exit status:
  0  every module is fresh, or was written
  1  --check found stale modules; --exit-non-zero-on-write wrote some; or s2s could not transform a function
  2  a mistake in the command line or in [tool.s2s]
"""


def load_function(target: str):
    """Import ``PATH`` (see ``import_file``) and return its function ``FUNC``."""
    path, sep, name = target.rpartition("::")
    if not sep or not path or not name:
        raise UsageError(f"expected PATH::FUNC, got {target!r}")
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    module = import_file(path, name)
    fn = getattr(module, name, None)
    if fn is None:
        defined = sorted(
            k
            for k, v in vars(module).items()
            if inspect.isfunction(v) and v.__module__ == module.__name__
        )
        raise UsageError(
            f"{path}: no function named `{name}` (functions defined there: {', '.join(defined) or 'none'})"
        )
    if not callable(fn) or isinstance(fn, type):
        raise UsageError(f"{path}: `{name}` is a {type(fn).__name__}, not a function")
    return fn  # a plain function, or one s2s reads through (``@jax.jit``, ``functools.wraps``) as the API does


GUARD = "put the script's own work under `if __name__ == '__main__':`"


def _module_name(path: str) -> str:
    """The name a file is imported under: its stem, made an identifier."""
    stem = os.path.basename(path).split(".")[0]
    return re.sub(r"\W", "_", stem) or "module"


def import_file(path: str, name: str):
    """Run ``path`` as the module named after it, to read ``name`` from it.

    It is imported under its own name (so its ``__main__`` block does not
    run; under another one when a module already imported has it, like
    ``inspect.py``), never writing bytecode next to it, with an empty stdin and with what
    it prints sent to stderr (``quiet_stdout``). A ``sys.exit`` or an
    exception while it runs becomes an ``S2SError`` at the line of ``path``
    it came from; Ctrl-C goes on as it is.
    """
    folder = os.path.dirname(os.path.abspath(path))
    module_name = _module_name(path)
    taken = sys.modules.get(module_name)
    if taken is not None and _same_file(getattr(taken, "__file__", None) or "", path):
        return taken  # imported for an earlier target of this command
    if (
        taken is not None
    ):  # named like a module already imported (``inspect.py``): imported under another name
        module_name = f"s2s_cli_{module_name}"
    sys.dont_write_bytecode = True
    sys.path.insert(0, folder)
    # any file name: ``model`` or ``model.txt`` is read as Python source, as ``python model`` would
    loader = importlib.machinery.SourceFileLoader(module_name, path)
    spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    stdin = sys.stdin
    try:
        sys.stdin = io.StringIO()
        with quiet_stdout():
            spec.loader.exec_module(module)
    except SystemExit as e:
        code = "" if e.code is None else repr(e.code)
        hint = f"s2s imports the file to read `{name}`: {GUARD}"
        raise _failure(
            path,
            e,
            f"the module exited (SystemExit({code})) while s2s imported it",
            hint,
        ) from None
    except SyntaxError as e:
        raise _failure(
            path, e, f"cannot import it: {type(e).__name__}: {e.msg}"
        ) from None
    except Exception as e:
        hint = (
            f"s2s imports the file with nothing on stdin: {GUARD}"
            if isinstance(e, EOFError)
            else None
        )
        said = str(e).strip().splitlines()
        raise _failure(
            path,
            e,
            f"importing it failed: {type(e).__name__}"
            + (f": {said[0]}" if said else ""),
            hint,
        ) from None
    finally:
        sys.stdin = stdin
    return module


def _failure(path: str, err: BaseException, message: str, hint: str | None = None):
    """An ``S2SError`` at the line of ``path`` where ``err`` was raised (a syntax error's line, or the innermost frame's)."""
    from s2s.runtime.located import in_library

    from s2s.errors import Origin, S2SError

    if isinstance(err, SyntaxError) and err.lineno:
        line = linecache.getline(path, err.lineno).rstrip("\n") or (
            err.text or ""
        ).rstrip("\n")
        col = max(0, (err.offset or 1) - 1)
        return S2SError(message, Origin(path, err.lineno, col, col + 1, line), hint)
    frames = list(traceback.walk_tb(err.__traceback__))
    mine = [
        (f, n)
        for f, n in frames
        if os.path.abspath(f.f_code.co_filename) == os.path.abspath(path)
    ]
    if not mine:
        return S2SError(f"{path}: {message}", None, hint)
    deepest, deepest_line = [
        (f, n)
        for f, n in frames
        if (f, n) in mine or not in_library(f.f_code.co_filename)
    ][-1]
    if deepest is not mine[-1][0]:  # raised in a module that it imports
        message += f" (at {deepest.f_code.co_filename}:{deepest_line})"
    number = mine[-1][1]
    line = linecache.getline(path, number).rstrip("\n")
    indent = len(line) - len(line.lstrip())
    return S2SError(
        message, Origin(path, number, indent, len(line.rstrip()), line), hint
    )


class _ToStderr(io.TextIOBase):
    """Python's stdout while the user's module runs: text goes to stderr; remembers whether a line is left open."""

    def __init__(self):
        self.open_line = False

    def write(self, text: str) -> int:
        if text:
            self.open_line = not text.endswith("\n")
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


@contextlib.contextmanager
def quiet_stdout():
    """Inside, everything written to stdout (``print``, C code, child processes) goes to stderr instead.

    So stdout carries only the generated module, and stays valid Python; a
    line the module leaves open (an ``input`` prompt) is ended.
    """
    if sys.stdout is not None:
        sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1: only Python's sys.stdout to redirect
        saved = None
    if saved is not None:
        os.dup2(2, 1)
    target = _ToStderr()
    try:
        with contextlib.redirect_stdout(target):
            yield
    finally:
        if sys.__stdout__ is not None:
            sys.__stdout__.flush()  # what was written around sys.stdout, while fd 1 still goes to stderr
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)
        if target.open_line:
            sys.stderr.write("\n")


def argnums_for(fn, wrt: str | None, default=0):
    params = list(inspect.signature(fn).parameters)
    if not params:
        raise UsageError(f"`{fn.__name__}` has no parameters to differentiate")
    if not wrt:
        return default if default is not None else tuple(range(len(params)))
    names = [w.strip() for w in wrt.split(",") if w.strip()]
    unknown = [n for n in names if n not in params]
    if unknown:
        raise UsageError(
            f"`{fn.__name__}` has no parameter {', '.join(map(repr, unknown))} (its parameters: {', '.join(params)})"
        )
    nums = tuple(params.index(n) for n in names)
    return nums[0] if len(nums) == 1 else nums


def parse_axes(text: str, what: str):
    """``0``, ``None`` or ``1,None``: an int, None, or a tuple of them."""

    def one(item: str):
        item = item.strip()
        if item == "None":
            return None
        try:
            return int(item)
        except ValueError:
            raise UsageError(f"{what}: expected ints or None, got {item!r}") from None

    items = [one(i) for i in text.split(",")]
    return items[0] if len(items) == 1 and "," not in text else tuple(items)


def _command_line(args, target: str) -> str:
    """The command that writes this one target's module again (its header names it)."""
    parts = ["s2s", args.command, target]
    if args.command == "vmap":
        parts += ["--in-axes", args.in_axes]
        if args.out_axes != "0":
            parts += ["--out-axes", args.out_axes]
        if args.axis_size is not None:
            parts += ["--axis-size", str(args.axis_size)]
        if args.axis_name is not None:
            parts += ["--axis-name", args.axis_name]
    if getattr(args, "wrt", None):
        parts += ["--wrt", args.wrt]
    if getattr(args, "order", 1) != 1:
        parts += ["--order", str(args.order)]
    if args.output and args.output != "-":
        parts += ["-o", args.output]
    return " ".join(parts)


KINDS = {
    "lower": "primal",
    "vmap": "batch",
    "jvp": "jvp",
    "hessian": "jvp",
    "grad": "grad",
}


def _generate(args, fn, target):
    """The module the command asks for, through the API: higher orders transform generated code again."""
    import s2s

    command = _command_line(args, target)
    if args.command == "lower":
        return s2s.generate(fn, ("primal",), command=command)
    if args.command == "vmap":
        in_axes = parse_axes(args.in_axes, "--in-axes")
        out_axes = parse_axes(args.out_axes, "--out-axes")
        params = list(inspect.signature(fn).parameters)
        per = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(params)
        if len(per) != len(params):
            raise UsageError(
                f"--in-axes names {len(per)} axes; `{fn.__name__}` has {len(params)} parameters "
                f"({', '.join(params)})"
            )
        axes = (per, out_axes, args.axis_size, args.axis_name)
        return s2s.generate(fn, ("batch",), command=command, axes=axes)
    if args.command == "jvp":
        return s2s.generate(
            fn, ("jvp",), argnums_for(fn, args.wrt, default=None), command=command
        )
    argnums = argnums_for(fn, args.wrt)
    if args.command == "hessian":
        return s2s.generate(s2s.grad(fn, argnums), ("jvp",), argnums, command=command)
    if args.order < 1:
        raise UsageError(f"--order must be 1 or more, got {args.order}")
    if args.order > 1 and not isinstance(argnums, int):
        raise UsageError(
            "--order above 1 differentiates a gradient again: name one --wrt parameter"
        )
    for _ in range(args.order - 1):
        fn = s2s.grad(fn, argnums)
    return s2s.generate(fn, ("grad",), argnums, command=command)


def main(argv=None) -> int:
    from s2s import S2SError

    args = _parser().parse_args(argv)
    try:
        if args.command == "generate":
            from .generate import run

            return run(args.paths, args.check, args.exit_non_zero_on_write)
        if args.dump:
            os.environ["S2S_DUMP"] = "1"
        modules = (
            []
        )  # (target, entry function name, text): all generated before anything is written
        for target in args.targets:
            fn = load_function(target)
            generated = _generate(args, fn, target)
            if generated.injected:
                names = ", ".join(sorted(generated.injected))
                raise UsageError(
                    f"`{fn.__name__}` reads values that are neither literals nor a module's by name ({names}), "
                    "which a generated file cannot carry or import: pass them as arguments"
                )
            entry = generated.entries[KINDS[args.command]]
            modules.append((target, entry, generated.text))
        destinations = output_paths(args.output, modules)
        for (target, _, text), path in zip(modules, destinations):
            if path is None:
                sys.stdout.write(text)
            else:
                write_module(path, text, target.rpartition("::")[0])
    except S2SError as e:
        print(e.render(), file=sys.stderr)
        return 1
    except UsageError as e:
        print(f"s2s: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("s2s: interrupted", file=sys.stderr)
        return 130
    return 0


def output_paths(output: str | None, modules) -> list[str | None]:
    """Where each module goes: None for stdout (no ``-o``, or ``-o -``), else a file path.

    ``-o FOLDER/`` (or an existing folder) holds one file per module, named after
    the function it defines; ``-o FILE`` takes exactly one module.
    """
    if output is None or output == "-":
        return [None] * len(modules)
    if output.endswith(("/", os.sep)) or os.path.isdir(output):
        paths = [os.path.join(output, f"{entry}.py") for _, entry, _ in modules]
        seen = {}
        for (target, _, _), path in zip(modules, paths):
            if path in seen:
                raise UsageError(
                    f"{seen[path]} and {target} would both write {path}; run them separately with -o FILE"
                )
            seen[path] = target
        return paths
    if len(modules) > 1:
        raise UsageError(
            f"-o {output} is one file, for {len(modules)} targets: give a folder (-o {output}/) or one target"
        )
    return [output]


def write_module(path: str, text: str, source: str) -> None:
    """Write ``text`` to ``path`` atomically, making missing folders; never over the ``source`` file."""
    from s2s.runtime.loader import write_atomic

    if _same_file(path, source):
        raise UsageError(
            f"-o {path} is the source file {source}: refusing to overwrite it; choose another -o"
        )
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        write_atomic(path, text)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror or e}") from None


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file (through links too)."""
    if not a or not b:
        return False
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


if __name__ == "__main__":
    sys.exit(main())
