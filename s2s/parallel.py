"""Many devices through XLA's SPMD partitioner: ``s2s.pmap`` and ``s2s.data_parallel`` (no ``jax.pmap``/``jax.vmap``).

``pmap(f, axis_name, in_axes, out_axes, devices)`` has JAX's ``pmap``
semantics. It runs the batched module ``s2s.vmap(f, in_axes, out_axes,
axis_name)`` generates (``.source``) once under ``jax.jit``: the mapped axis
of each mapped argument is sharded over a 1-D ``jax.sharding.Mesh`` of as
many devices as the axis is long (one example per device), unmapped
arguments are replicated, and each output is constrained to be sharded along
its ``out_axes``. XLA partitions the program; a collective in ``f`` (already a
reduction over the batch axis in the batched module) becomes an all-reduce.

``data_parallel(fn, batch_argnums, devices=, mesh=)`` runs any s2s function
(or any function ``jax.jit`` can trace) under ``jax.jit`` with the arguments
at ``batch_argnums`` sharded along axis 0 over a mesh and every other
argument replicated: the results are ``fn``'s on one device.

Nothing falls back silently: an axis that does not match the devices is an
error, in JAX's words where JAX has them. With several processes
(``jax.distributed.initialize()``), the mesh spans ``jax.devices()`` and each
process passes its own share of the batch
(``jax.make_array_from_process_local_data``).
"""

from __future__ import annotations

import functools

import numpy as np

from .display import ShowsSource
from .runtime.located import locate
from .runtime.trees import tree_leaves, tree_map
from .vmapping import Vmapped, checked_axes, vmap

__all__ = ["DataParallel", "Pmapped", "data_parallel", "pmap"]

_PMAP_AXIS = "pmap"  # the mesh axis's name when ``axis_name`` is None


def _is_static(value) -> bool:
    """Python ints, bools, strings and None (and tuples of them): compile-time constants, as in ``s2s``'s runner."""
    if isinstance(value, tuple):
        return all(_is_static(v) for v in value)
    return isinstance(value, (bool, int, str, type(None))) and not isinstance(
        value, np.generic
    )


def _describe(leaf) -> str:
    """``float32[4,3]``: a leaf's type as JAX's messages write it."""
    dtype = getattr(leaf, "dtype", None) or np.asarray(leaf).dtype
    return f"{np.dtype(dtype).name}[{','.join(str(d) for d in np.shape(leaf))}]"


def _leaves_with_axes(value, axes, where):
    """(leaf, its mapped axis or None, where) for each leaf of ``value``; ``axes`` is a prefix of its tree."""
    if axes is None or isinstance(axes, int):
        for leaf in tree_leaves(value):
            if axes is None:
                yield leaf, None, where
                continue
            ndim = np.ndim(leaf)
            if not -ndim <= axes < ndim:
                raise ValueError(
                    f"pmap was requested to map its argument along axis {axes}, which implies that its rank "
                    f"should be at least {axes + 1 if axes >= 0 else -axes}, but is only {ndim} "
                    f"(its shape is {tuple(np.shape(leaf))})"
                )
            yield leaf, axes % ndim, where
        return
    if isinstance(axes, dict):
        if not isinstance(value, dict) or not set(axes) <= set(value):
            raise ValueError(
                f"pmap in_axes specification must be a tree prefix of the corresponding value, got "
                f"specification {axes!r} for {where} of type {type(value).__name__}"
            )
        for key in axes:
            yield from _leaves_with_axes(value[key], axes[key], f"{where}[{key!r}]")
        return
    if not isinstance(value, (tuple, list)) or len(axes) != len(value):
        raise ValueError(
            f"pmap in_axes specification must be a tree prefix of the corresponding value, got "
            f"specification {axes!r} for {where} of type {type(value).__name__}"
            + (f" of length {len(value)}" if isinstance(value, (tuple, list)) else "")
        )
    for i, (item, axis) in enumerate(zip(value, axes)):
        yield from _leaves_with_axes(item, axis, f"{where}[{i}]")


def _spec(axis, name):
    """The PartitionSpec that shards ``axis`` over the mesh axis ``name`` (replicated for None)."""
    from jax.sharding import PartitionSpec

    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, name)


def _place(leaf, sharding):
    """``leaf`` on the mesh: put there from this process's data (with several processes, its own share)."""
    import jax

    if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable:
        return leaf  # already a global array
    if jax.process_count() > 1:
        return jax.make_array_from_process_local_data(sharding, np.asarray(leaf))
    return jax.device_put(leaf, sharding)


def _map_prefix(fn, value, axes):
    """``value`` with ``fn(leaf, axis)`` applied to each leaf; ``axes`` is a prefix of its tree."""
    if axes is None or isinstance(axes, int):
        return tree_map(lambda leaf: fn(leaf, axes), value)
    if isinstance(axes, dict):
        out = dict(value)
        for key in axes:
            out[key] = _map_prefix(fn, value[key], axes[key])
        return out
    items = [_map_prefix(fn, v, a) for v, a in zip(value, axes)]
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


def _located(call, *args, **kwargs):
    """``call(...)``; an error raised in generated code comes out at the user's line (as ``s2s``'s runner does)."""
    try:
        return call(*args, **kwargs)
    except Exception as err:
        located = locate(err)
        if located is None:
            raise
        raise located.with_traceback(err.__traceback__) from err


class Pmapped(ShowsSource):
    """``s2s.pmap(f, ...)``: call it like ``f`` with one example per device; ``.source`` is the batched module."""

    def __init__(
        self, fun, axis_name=None, in_axes=0, out_axes=0, devices=None, backend="xla"
    ):
        if backend != "xla":
            raise ValueError(
                f"s2s.pmap runs on XLA devices: backend must be 'xla', got {backend!r} "
                '(s2s.vmap(f, backend="numpy") runs the same batched module on NumPy)'
            )
        in_axes = checked_axes(in_axes, out_axes, axis_name, "pmap")
        if devices is not None:
            devices = tuple(devices)
            if not devices:
                raise ValueError("pmap got an empty list of devices")
            if len(set(devices)) != len(devices):
                raise ValueError(f"pmap got the same device twice: {list(devices)}")
        self.fun, self.axis_name, self.devices = fun, axis_name, devices
        self.in_axes, self.out_axes = in_axes, out_axes
        self._vmapped = vmap(fun, in_axes, out_axes, axis_name, backend="xla")
        self._mesh_axis = axis_name or _PMAP_AXIS
        self._jitted = {}
        functools.update_wrapper(self, fun, updated=())
        del self.__wrapped__  # a mapped function is not the one it came from

    @property
    def source(self) -> str:
        """The batched module that runs (``s2s.vmap(f, in_axes, out_axes, axis_name).source``)."""
        return self._vmapped.source

    def __repr__(self):
        return f"<s2s.pmap of {getattr(self.fun, '__name__', self.fun)!r}>"

    def __call__(self, *args, **kwargs):
        jitted, placed = self._prepare(args, kwargs)
        return _located(jitted, *placed)

    def lower(self, *args, **kwargs):
        """JAX's ``Lowered`` for this call: ``.lower(x).compile().as_text()`` is the partitioned program."""
        jitted, placed = self._prepare(args, kwargs)
        return jitted.lower(*placed)

    def _prepare(self, args, kwargs):
        """The jitted batched function for this call, and its arguments placed on the mesh."""
        if isinstance(self.in_axes, tuple) and len(self.in_axes) != len(args):
            raise ValueError(
                "pmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                f"arguments passed to the function, but got len(in_axes)={len(self.in_axes)}, len(args)={len(args)}"
            )
        batched = self._vmapped.at(len(args), tuple(kwargs))
        values = batched.binding(args, kwargs)
        axes = batched.argnums.spec[0]  # per parameter of the generated function
        names = batched.binding.names
        mesh = self._mesh(self._axis_size(values, axes, names))
        static = tuple(i for i, v in enumerate(values) if _is_static(v))
        function = batched.s2s_generated_function  # generated again if stale
        key = (function, tuple(d.id for d in mesh.devices.flat), static)
        jitted = self._jitted.get(key)
        if jitted is None:
            jitted = self._jitted[key] = self._jit(function, mesh, static)
        placed = [
            (
                value
                if i in static
                else _map_prefix(lambda leaf, a: self._put(leaf, a, mesh), value, axis)
            )
            for i, (value, axis) in enumerate(zip(values, axes))
        ]
        return jitted, placed

    def _axis_size(self, values, axes, names) -> int:
        """The mapped axes' common size (per process, as ``jax.pmap``'s); JAX's errors when there is none or they differ."""
        found = []
        for value, axis, name in zip(values, axes, names):
            for leaf, a, where in _leaves_with_axes(value, axis, f"argument {name}"):
                if a is not None:
                    found.append((int(np.shape(leaf)[a]), a, where, leaf))
        if not found:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        sizes = {size for size, *_ in found}
        if len(sizes) > 1:
            lines = [
                f"  * one axis had size {size}: axis {a} of {where} of type {_describe(leaf)}"
                for size, a, where, leaf in found
            ]
            raise ValueError(
                "pmap got inconsistent sizes for array axes to be mapped:\n"
                + ";\n".join(lines)
            )
        return sizes.pop()

    def _mesh(self, size: int):
        """A 1-D mesh of the devices that run the ``size`` examples (of every process), one example each."""
        import jax
        from jax.sharding import Mesh

        processes = jax.process_count()
        if self.devices is not None:
            if size * processes != len(self.devices):
                raise ValueError(
                    "Leading axis size of input to pmapped function must equal the number of local devices "
                    f"passed to pmap. Got axis_size={size}, num_local_devices={len(self.devices) // processes}."
                )
            devices = list(self.devices)
        elif processes > 1:
            local = jax.local_device_count()
            if size != local:
                raise ValueError(
                    f"s2s.pmap over {processes} processes maps one example per device: each process passes "
                    f"a mapped axis of size {local} (its local devices), got {size}"
                )
            devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
        else:
            available = jax.devices()
            if size > len(available):
                raise ValueError(
                    f"compiling computation that requires {size} logical devices, but only {len(available)} "
                    f"XLA devices are available (num_replicas={size})"
                )
            if size < 1:
                raise ValueError(
                    "pmap got a mapped axis of size 0: it runs one example per device"
                )
            devices = available[:size]
        return Mesh(np.array(devices), (self._mesh_axis,))

    def _put(self, leaf, axis, mesh):
        from jax.sharding import NamedSharding

        if not hasattr(leaf, "shape"):
            return leaf  # a Python scalar: jax.jit makes it a (replicated) constant
        return _place(leaf, NamedSharding(mesh, _spec(axis, self._mesh_axis)))

    def _jit(self, function, mesh, static):
        """``function`` under ``jax.jit``, each output constrained to be sharded along its ``out_axes``."""
        import jax
        from jax.sharding import NamedSharding

        name, out_axes = self._mesh_axis, self.out_axes

        def constrain(leaf, axis):
            leaf = jax.numpy.asarray(leaf)
            if axis is not None:
                axis %= max(leaf.ndim, 1)
            sharding = NamedSharding(mesh, _spec(axis, name))
            return jax.lax.with_sharding_constraint(leaf, sharding)

        def sharded(*args):
            return _map_prefix(constrain, function(*args), out_axes)

        sharded.__name__ = getattr(function, "__name__", "pmapped")
        return jax.jit(sharded, static_argnums=static)


def pmap(
    fun, axis_name=None, in_axes=0, out_axes=0, devices=None, *, backend="xla"
) -> Pmapped:
    """``fun`` mapped over devices (JAX's ``pmap``): the batched module of ``s2s.vmap``, sharded by XLA."""
    return Pmapped(fun, axis_name, in_axes, out_axes, devices, backend)


class DataParallel(ShowsSource):
    """``s2s.data_parallel(fn, ...)``: ``fn`` under ``jax.jit`` with a sharded batch and replicated parameters."""

    def __init__(self, fn, batch_argnums=0, devices=None, mesh=None):
        if isinstance(batch_argnums, int) and not isinstance(batch_argnums, bool):
            batch_argnums = (batch_argnums,)
        if not (
            isinstance(batch_argnums, (tuple, list))
            and batch_argnums
            and all(
                isinstance(i, int) and not isinstance(i, bool) for i in batch_argnums
            )
        ):
            raise TypeError(
                f"s2s.data_parallel batch_argnums must be an int or a non-empty tuple of ints, got {batch_argnums!r}"
            )
        if mesh is not None and devices is not None:
            raise ValueError(
                "s2s.data_parallel takes devices or a mesh, not both (a mesh already names its devices)"
            )
        if devices is not None:
            devices = tuple(devices)
            if not devices:
                raise ValueError("s2s.data_parallel got an empty list of devices")
        self.fn, self.batch_argnums = fn, tuple(batch_argnums)
        self._devices, self._given_mesh = devices, mesh
        self._jitted = {}
        functools.update_wrapper(self, fn, updated=())
        del self.__wrapped__

    @functools.cached_property
    def mesh(self):
        """The mesh: the one given, or a 1-D mesh ``("batch",)`` over ``devices`` (default: ``jax.devices()``)."""
        if self._given_mesh is not None:
            return self._given_mesh
        import jax
        from jax.sharding import Mesh

        return Mesh(np.array(self._devices or jax.devices()), ("batch",))

    @property
    def source(self) -> str:
        """The generated module that runs (``fn.source``)."""
        return self.fn.source

    def __repr__(self):
        return f"<s2s.data_parallel of {getattr(self.fn, '__name__', self.fn)!r}>"

    def __call__(self, *args, **kwargs):
        jitted, args, kwargs = self._prepare(args, kwargs)
        return _located(jitted, *args, **kwargs)

    def lower(self, *args, **kwargs):
        """JAX's ``Lowered`` for this call (``.compile().as_text()`` shows the partitioned program)."""
        jitted, args, kwargs = self._prepare(args, kwargs)
        return jitted.lower(*args, **kwargs)

    def _prepare(self, args, kwargs):
        from jax.sharding import NamedSharding, PartitionSpec

        mesh = self.mesh
        batched = set()
        for i in self.batch_argnums:
            if not -len(args) <= i < len(args):
                raise ValueError(
                    f"s2s.data_parallel batch_argnums {i} is out of range for a call with {len(args)} "
                    "positional arguments"
                )
            batched.add(i % len(args))
        # the batch axis is split over every axis of the mesh; everything else is on every device
        split = NamedSharding(mesh, PartitionSpec(tuple(mesh.axis_names)))
        whole = NamedSharding(mesh, PartitionSpec())
        placed = []
        for i, value in enumerate(args):
            if i in batched:
                placed.append(tree_map(lambda x, i=i: self._split(x, i, split), value))
            elif _is_static(value):
                placed.append(value)
            else:
                placed.append(tree_map(lambda x: _put_whole(x, whole), value))
        static = tuple(i for i, v in enumerate(placed) if _is_static(v))
        names = tuple(sorted(k for k, v in kwargs.items() if _is_static(v)))
        kwargs = {
            k: v if k in names else tree_map(lambda x: _put_whole(x, whole), v)
            for k, v in kwargs.items()
        }
        if _regenerated(self.fn, args, kwargs):
            self._jitted.clear()  # compiled from a module s2s has since generated again
        jitted = self._jitted.get((static, names))
        if jitted is None:
            import jax

            fn = self.fn

            # a new function: JAX's trace cache is keyed by it
            def run(*args, **kwargs):
                return fn(*args, **kwargs)

            run.__name__ = getattr(fn, "__name__", "data_parallel")
            jitted = self._jitted[(static, names)] = jax.jit(
                run, static_argnums=static, static_argnames=names
            )
        return jitted, placed, kwargs

    def _split(self, leaf, argnum, sharding):
        """A batch leaf sharded along axis 0; an error for a batch the devices cannot share evenly."""
        import jax

        if np.ndim(leaf) < 1:
            raise ValueError(
                f"s2s.data_parallel splits argument {argnum} along axis 0, but it has a leaf of shape "
                f"{tuple(np.shape(leaf))}: every leaf of a batch argument needs a batch axis"
            )
        devices = self.mesh.devices.size
        size = np.shape(leaf)[0]
        if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable:
            total = size  # a global array: its shape is the whole batch's
        else:
            total = size * jax.process_count()  # each process passes its own share
        if total % devices:
            raise ValueError(
                f"s2s.data_parallel cannot split argument {argnum} evenly over {devices} devices: its batch "
                f"axis (axis 0 of a leaf of type {_describe(leaf)}) has {total} examples in all, not a "
                f"multiple of {devices}. Pad or trim the batch, or pass fewer devices"
            )
        return _place(leaf, sharding)


def _regenerated(fn, args, kwargs) -> bool:
    """Whether s2s generated ``fn``'s module again before this call (a value it baked in changed)."""
    if isinstance(fn, Vmapped):
        fn = fn.at(len(args), tuple(kwargs))
    refresh = getattr(fn, "_refresh", None)
    return bool(refresh()) if callable(refresh) else False


def _put_whole(leaf, sharding):
    if not hasattr(leaf, "shape"):
        return leaf  # a Python scalar: a constant of the compiled function
    return _place(leaf, sharding)


def data_parallel(fn, batch_argnums=0, *, devices=None, mesh=None) -> DataParallel:
    """``fn`` run data-parallel: the arguments at ``batch_argnums`` sharded along axis 0, the rest replicated."""
    return DataParallel(fn, batch_argnums, devices, mesh)
