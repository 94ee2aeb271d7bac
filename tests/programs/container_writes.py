"""Lists and dicts written item by item (``cache["z"] = ...``, ``grads[name] = ...``, ``ws[-1] = ...``), and
dict comprehensions (which fill a dict so).

The valid programs take one float64 vector ``w`` (the first argument); the
others are refused with a located error (``tests/test_container_writes.py``).
"""

import numpy as np


def cache_items(w):
    """A dict filled item by item, then read by key."""
    cache = {}
    cache["z"] = w * 2.0
    cache["a"] = np.tanh(cache["z"])
    return np.sum(cache["a"] * cache["z"])


def items_over_a_tuple(w):
    """Items keyed by the values of a loop over a tuple."""
    scaled = {}
    for k in (1, 2, 3):
        scaled[k] = np.sin(w * k)
    return np.sum(scaled[1] * scaled[3])


def items_over_keys(w):
    """A dict written in a loop over another dict's keys, then over its items."""
    params = {"a": w, "b": w[::-1] * 2.0}
    out = {}
    for name in params:
        out[name] = np.tanh(params[name])
    total = 0.0
    for name, value in out.items():
        total = total + np.sum(value**2) * len(name)
    return total


def replaced_last(w):
    """A list display with its last item replaced, then looped over."""
    ws = [w, np.sin(w)]
    ws[-1] = ws[-1] * 0.5
    total = 0.0
    for v in ws:
        total = total + np.sum(np.tanh(v))
    return total


def sgd_step(w):
    """Dict comprehensions over a dict's items and keys: an optimizer's update of every entry."""
    params = {"a": w, "b": np.sin(w)}
    grads = {k: 2.0 * v for k, v in params.items()}
    new = {k: params[k] - 0.1 * grads[k] for k in params}
    return np.sum(new["a"] * new["b"])


def keyed_by_int(w):
    """A dict comprehension keyed by the values of a tuple."""
    d = {k: w * k for k in (1, 2, 3)}
    return np.sum(d[1] + d[3])


def filtered(w):
    """Dict comprehensions with ``if`` clauses on keys and on values of a range."""
    params = {"a": w, "b": np.sin(w), "c": w**2}
    kept = {k: v * 2.0 for k, v in params.items() if k != "b"}
    odd = {k: w * k for k in range(4) if k % 2 == 1}
    return np.sum(kept["a"] * kept["c"]) + len(kept) * np.sum(odd[1] * odd[3])


def kept_in_a_loop(w):
    """The same filter written as a loop: a key written in one branch of an ``if``."""
    params = {"a": w, "b": np.sin(w), "c": w**2}
    kept = {}
    for k, v in params.items():
        if k != "b":
            kept[k] = v * 2.0
    return np.sum(kept["a"] * kept["c"])


SETTINGS = {"scale": 2.0, "sizes": [1, 2], "name": "tanh"}
# module constants holding arrays: received as values, watched by structure (their arrays by identity)
TABLEAU = {"a": np.array([0.5, 0.5, 1.0, 0.0]), "b": np.array([1.0, 2.0, -1.0, 0.5])}
BASIS = [np.eye(4), 2.0 * np.eye(4)]


MU = np.array(
    [0.5, -1.0, 2.0, 0.0]
)  # a scaler's statistics, refit in place between epochs


class Scaler:
    def __init__(self, scale):
        self.scale = scale


SCALER = Scaler(np.ones(4))


def make_centered(center):
    def centered(w):
        return np.sum(np.tanh(w - center) ** 2)

    return centered


CENTER = np.zeros(4)
CENTERED = make_centered(CENTER)


def reads_module_arrays_changed_in_place(w):
    return np.sum(((w - MU) * SCALER.scale) ** 2) + CENTERED(w)


def reads_arrays_in_module_containers(w):
    out = np.sum(TABLEAU["a"] * w) + np.sum(TABLEAU["b"] * w**2)
    for B in BASIS:
        out = out + np.sum(np.tanh(B @ w))
    return out


def reads_settings(w):
    """Module settings (a dict of numbers, lists and strings) read by key."""
    h = np.tanh(w * SETTINGS["scale"]) if SETTINGS["name"] == "tanh" else w
    return np.sum(h) * len(SETTINGS["sizes"]) + SETTINGS["sizes"][-1]


VALID = [
    *("cache_items", "items_over_a_tuple", "items_over_keys", "replaced_last"),
    *("sgd_step", "keyed_by_int", "filtered", "kept_in_a_loop", "reads_settings"),
]


def written_through_another_name(w):
    """``held = ws``: the same list, which Python changes too."""
    ws = [w, w * 2.0]
    held = ws
    ws[0] = w * 3.0
    return np.sum(held[0])


def item_updated_in_place(w):
    """``ws[0] += 1``: NumPy adds into the caller's array itself."""
    ws = [w]
    ws[0] += 1.0
    return np.sum(ws[0])


def argument_dict_written(params):
    """A new key in the caller's dict."""
    params["b"] = params["a"] * 2.0
    return np.sum(params["b"])


def writes_settings(w):
    """A write into the module's settings."""
    SETTINGS["last"] = 1.0
    return np.sum(w * SETTINGS["scale"])


def _gradients(p, X, y):
    r = X @ p["w"] - y
    return {"w": X.T @ r / len(y)}


def _held(p, X):
    return {"w": p["w"], "X": X}


def sgd_step_on_copies(params, X, y):
    """A dict of copies updated in place by a helper's gradient dict (its values new arrays)."""
    p = {k: v.copy() for k, v in params.items()}
    g = _gradients(p, X, y)
    for k in p:
        p[k] -= 0.1 * g[k]
    return np.sum(p["w"] ** 2)


def update_through_a_helpers_dict(params, X):
    """The helper's dict holds ``X`` itself: writing into its item would change the caller's ``X``."""
    held = _held(params, X)
    held["X"] *= 2.0
    return np.sum(held["w"] * held["X"][0])
