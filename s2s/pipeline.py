"""The pipeline, top to bottom: source -> normal form -> transform -> module text.

Each step is one module with one job; ``lower`` gives the normal form that
transforms read, ``S2S_DUMP=1`` prints the function after every pass.
"""

from __future__ import annotations

import os
import sys

from . import ir
from .frontend import (
    builtin_calls,
    called_lambdas,
    closure_state,
    combinatorics,
    comprehensions,
    constant_objects,
    counted_whiles,
    counter_appends,
    deleted_names,
    dict_fields,
    dict_merges,
    error_states,
    factories,
    fence,
    filled_lists,
    function_loops,
    generators,
    held_objects,
    index_grids,
    indexed_loops,
    inner_jacobians,
    item_loops,
    iterators,
    library_maps,
    library_objects,
    list_methods,
    listed_iterators,
    local_bindings,
    local_decorators,
    local_defaults,
    local_imports,
    local_objects,
    loop_else,
    nonzero_masks,
    numpy_maps,
    object_lists,
    partials,
    piecewise,
    prepends,
    pullbacks,
    resolve,
    reversed_ranges,
    source,
    spread_displays,
    star_items,
    starred,
    static_getattr,
    static_tests,
    strings,
    ufunc_methods,
    ufunc_outputs,
    written_back,
    written_loops,
)
from .frontend.array_semantics import immutable_arrays
from .passes import (
    aliasing,
    anf,
    bounded_ranges,
    control,
    cse,
    desugar,
    helper_results,
    inline,
    jumps,
    masks,
    ssa,
)
from .passes.helper_sharing import updated_in_place
from .transforms.simplify import propagate_copies


def copies(fn: ir.Function) -> ir.Function:
    """Drop ``a = b`` copies between names (parameters kept), so no value has two names."""
    return fn.with_body(propagate_copies(fn.body, keep=frozenset(fn.param_names)))


PASSES = (
    ("desugar", desugar.desugar),
    ("jumps", jumps.jumps),
    ("bounded_ranges", bounded_ranges.bounded_ranges),
    ("control", control.control),
    ("anf", anf.anf),
    ("inline", inline.inline),
    ("masks", masks.masks),
    ("ssa", ssa.ssa),
    ("copies", copies),
    ("cse", lambda fn: cse.cse(fn, copies)),
)


def _dump(stage: str, fn: ir.Function) -> None:
    if os.environ.get("S2S_DUMP"):
        print(f"# ---- after {stage} ----\n{ir.to_source(fn)}", file=sys.stderr)


def desugared(src: source.FunctionSource) -> source.FunctionSource:
    """``src`` with its Python sugar written out (loops over functions, f-strings, comprehensions, starred
    targets) and fenced: what the resolver reads."""
    src = piecewise.desugar(deleted_names.desugar(held_objects.desugar(src)))
    src = called_lambdas.desugar(static_tests.desugar(static_getattr.desugar(src)))
    src = ufunc_methods.desugar(pullbacks.desugar(local_imports.desugar(src)))
    src = nonzero_masks.desugar(ufunc_outputs.desugar(src))
    src = counter_appends.desugar(filled_lists.desugar(src))
    src = local_decorators.desugar(src)
    src = index_grids.desugar(reversed_ranges.desugar(combinatorics.pairwise(src)))
    src = star_items.desugar(src)
    src = numpy_maps.desugar(library_maps.desugar(src))
    src = dict_fields.desugar(dict_merges.desugar(src))
    src = inner_jacobians.desugar(src)
    src = factories.desugar(library_objects.desugar(src))
    src = local_objects.desugar(constant_objects.desugar(src))
    src = dict_fields.desugar(
        src
    )  # (the dicts an object's attributes hold, now names of the function)
    # (an object's settings, written out: ``if net_norm == "batchnorm":`` in its methods)
    src = static_tests.desugar(src)
    src = counted_whiles.desugar(object_lists.desugar(src))
    src = written_back.desugar(item_loops.desugar(src))
    src = loop_else.desugar(generators.desugar(src))
    src = listed_iterators.desugar(list_methods.desugar(src))
    src = iterators.desugar(builtin_calls.desugar(src))
    src = local_bindings.desugar(function_loops.desugar(strings.desugar(src)))
    src = indexed_loops.desugar(written_loops.desugar(src))
    # comprehensions' loops too (a dict comprehension keyed by its index; ``comps[k]`` read at its counter)
    looped = comprehensions.desugar(src)
    written = strings.desugar(starred.desugar(looped))
    src = indexed_loops.desugar(written) if looped is not src else written
    src = builtin_calls.transposed_loops(src)
    src = closure_state.desugar(local_defaults.desugar(partials.desugar(src)))
    src = builtin_calls.extended(prepends.desugar(src))
    src = spread_displays.desugar(error_states.desugar(src))
    fence.check(src)
    return src


def lower(
    src: source.FunctionSource,
    name: str | None = None,
    on_stage=_dump,
    scope=None,
    helper: bool = False,
) -> resolve.Resolved:
    """Check, resolve and normalise one function; helpers it calls are listed, not lowered.

    ``on_stage(stage, function)`` sees the function after every pass; ``scope`` names the
    module-level objects of the whole program (``frontend.scope``).
    """
    if not helper:
        generators.check_entry(src)
    written = desugared(src)
    resolved = resolve.resolve(written, name, scope)
    # a helper's writes into its parameters are checked at its calls (``updated_in_place``)
    updated = frozenset(updated_in_place(src.fn)) if helper else frozenset()
    fn = aliasing.check(
        resolved.function,
        resolved.helpers,
        updated=updated,
        handed_back=written.handed_back,
        rebinds=immutable_arrays(src),
    )
    on_stage("resolve", fn)
    # what a pass reads of the rest of the program, beyond the function
    context = {"control": {"results": helper_results.list_results(resolved.helpers)}}
    for stage, run in PASSES:
        fn = run(fn, **context.get(stage, {}))
        on_stage(stage, fn)
    resolved.function = fn
    return resolved
