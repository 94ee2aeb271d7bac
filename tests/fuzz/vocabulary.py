"""The generator's vocabulary: sizes, NumPy expression templates, activation names, and ``V``.

``V`` records what the generator knows about a variable of the drawn program
(its shape, whether it may be input-independent, whether it owns its memory);
``_shape_text`` spells a shape the way ``np.zeros`` takes it.
"""

from __future__ import annotations

from dataclasses import dataclass

B = 2  # batch
D = 3  # input features

UNARY = [
    "np.tanh({})",
    "np.sin({})",
    "np.cos({})",
    "np.square({})",
    "({}) ** 2",
    "np.sqrt({0} * {0} + 1.0)",
    "np.log1p({0} * {0})",
    "np.log(1.0 + np.exp({}))",
    "np.logaddexp(0.0, {})",
    "1.0 / (1.0 + np.exp(-({})))",
    "np.arctan({})",
    "np.exp(np.tanh({}))",
    "-({})",
    "np.sinh(np.tanh({}))",
]
KINKED_UNARY = [  # applied only to values that depend on the inputs
    "np.abs({})",
    "np.maximum({}, 0.0)",
    "np.maximum({0}, 0.1 * ({0}))",
    "np.clip({}, a_min=-0.8, a_max=0.8)",
    "np.clip({}, -1.0, 0.5)",
    "np.where({0} > 0.2, {0}, 0.5 * {0})",
    "np.minimum({}, 0.7)",
]
BINARY = [
    "{} + {}",
    "{} - {}",
    "{} * {}",
    "{0} / (1.0 + {1} * {1})",
    "np.add({}, {})",
    "np.multiply({}, {})",
    "np.logaddexp({}, {})",
    "0.5 * {} + {}",
]
KINKED_BINARY = ["np.maximum({}, {})", "np.minimum({}, {})"]
ACT_NAMES = ["tanh", "softplus", "gelu", "swish", "relu", "leaky", "sine"]


@dataclass
class V:
    shape: tuple
    const: bool = (
        False  # may not depend on the inputs (kinks could tie): no kinked op on it
    )
    fresh: bool = False  # owns its memory (no alias): in-place writes allowed


def _shape_text(shape):
    return str(shape[0]) if len(shape) == 1 else str(tuple(shape))
