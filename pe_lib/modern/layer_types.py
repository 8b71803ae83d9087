r"""Which layers of a 2025 model rotate, and what each layer may see: NoPE layers, sliding and chunked windows.

Several recent decoders give their layers different position handling, written in ``config.json``:

* **Llama 4** (``model_type`` ``"llama4"``/``"llama4_text"``): ``no_rope_layers`` holds one flag per layer,
  **1 where the layer applies RoPE** (despite the name), 0 where it has no positional encoding (NoPE). Without
  the list (or with an empty one) every ``no_rope_layer_interval``-th layer is NoPE. RoPE layers attend within
  chunks of ``attention_chunk_size`` tokens (``"chunked_attention"``), NoPE layers to everything before them;
  NoPE layers scale their queries by :func:`pe_lib.nope_temperature` when ``attn_temperature_tuning`` is set.
* **SmolLM3** (``"smollm3"``): the same ``no_rope_layers``/``no_rope_layer_interval`` fields; every layer
  attends to everything, unless ``use_sliding_window`` and ``sliding_window`` are set, which make the *NoPE*
  layers sliding (the config class's rule).
* **Cohere 2** (Command R7B, Command A: ``"cohere2"``): ``layer_types``, or else ``sliding_window_pattern``
  (every ``pattern``-th layer full, the rest ``"sliding_attention"``). A layer applies RoPE **only if it is
  sliding**: full layers are NoPE.
* **Gemma 3** (``"gemma3"``/``"gemma3_text"``): ``layer_types`` or ``sliding_window_pattern`` as Cohere 2
  (default 6); every layer rotates, with a base per layer type: ``rope_theta`` (default 1,000,000) and any
  ``rope_scaling`` in full layers, ``rope_local_base_freq`` (default 10,000) in sliding ones, or a
  ``rope_parameters`` dict per layer type.

What a key at position :math:`j` is to a query at :math:`i \ge j` in each kind of layer (transformers'
``masking_utils``): ``"full"``, every :math:`j \le i`; ``"sliding"`` with window :math:`W`,
:math:`i - W < j \le i` (offsets :math:`0 \dots W-1`); ``"chunked"`` with chunk :math:`C`,
:math:`\lfloor j/C \rfloor = \lfloor i/C \rfloor` (offsets :math:`0 \dots (i \bmod C)`).

Source: transformers 5.23.0, ``models/{llama4,smollm3,cohere2,gemma3}/configuration_*.py`` (the defaults and
derived lists) and ``modeling_*.py`` (``use_rope``, ``sliding_window`` and ``layer_types`` of each attention
module). The defaults of those config classes fill fields a ``config.json`` leaves out; they are checked
against the classes in ``make reference`` (``tests/reference/test_layer_types.py``).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from .._validate import check_positive_int, check_table_size

ATTENTION_KINDS = ("full", "sliding", "chunked")
_KIND_OF = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked"}
_TEXT_TYPE = {"llama4": "llama4_text", "gemma3": "gemma3_text"}
# transformers 5.23.0's config-class defaults for the fields read here
_DEFAULTS = {
    "llama4_text": {"num_hidden_layers": 48, "no_rope_layer_interval": 4, "attention_chunk_size": 8192,
                    "attn_temperature_tuning": True, "floor_scale": 8192, "attn_scale": 0.1, "rope_theta": 500000.0},
    "smollm3": {"num_hidden_layers": 36, "no_rope_layer_interval": 4, "use_sliding_window": False,
                "sliding_window": None, "rope_theta": 2000000.0},
    "cohere2": {"num_hidden_layers": 40, "sliding_window": 4096, "sliding_window_pattern": 4, "rope_theta": 10000.0},
    "gemma3_text": {"num_hidden_layers": 26, "sliding_window": 4096, "sliding_window_pattern": 6,
                    "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0},
}
MAX_LAYERS = 10_000  # real decoders have tens to a few hundred layers
MODEL_TYPES = tuple(sorted(set(_DEFAULTS) | set(_TEXT_TYPE)))


def _get(config: Mapping, model_type: str, key: str):
    """The field as the file gives it (``null`` included), else the config class's default."""
    return config[key] if key in config else _DEFAULTS[model_type].get(key)


def _count(value, name: str) -> int:
    return check_positive_int(value, name=name)


def _rope_flags(config: Mapping, model_type: str, n: int) -> list[bool]:
    """Llama 4's and SmolLM3's ``no_rope_layers`` (1 = RoPE), or the list their config classes derive."""
    flags = config.get("no_rope_layers")
    if flags is None or (model_type == "llama4_text" and len(flags) == 0):  # Llama4TextConfig: `if list else`
        interval = _count(_get(config, model_type, "no_rope_layer_interval"), "no_rope_layer_interval")
        return [(i + 1) % interval != 0 for i in range(n)]
    if isinstance(flags, (str, bytes)) or not isinstance(flags, Sequence):
        raise TypeError(f"no_rope_layers must be a list of 0/1 flags (1 = the layer applies RoPE), got {flags!r}")
    if len(flags) != n:
        raise ValueError(f"no_rope_layers has {len(flags)} flags but num_hidden_layers is {n}: one flag per layer")
    bad = [f for f in flags if isinstance(f, bool) or not isinstance(f, numbers.Integral) or f not in (0, 1)]
    if bad:
        raise ValueError(f"no_rope_layers holds 0 (NoPE) or 1 (RoPE) per layer, got {bad[0]!r} in it")
    return [bool(f) for f in flags]


def _layer_types(config: Mapping, model_type: str, n: int, rope: list[bool] | None) -> list[str]:
    types = config.get("layer_types")
    if types is None:
        if model_type == "llama4_text":
            return ["chunked_attention" if r else "full_attention" for r in rope]
        if model_type == "smollm3":
            sliding = bool(config.get("use_sliding_window")) and config.get("sliding_window") is not None
            return ["sliding_attention" if sliding and not r else "full_attention" for r in rope]
        pattern = _count(_get(config, model_type, "sliding_window_pattern"), "sliding_window_pattern")
        return ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n)]
    if isinstance(types, (str, bytes)) or not isinstance(types, Sequence):
        raise TypeError(f"layer_types must be a list of strings, one per layer, got {types!r}")
    if len(types) != n:
        raise ValueError(f"layer_types has {len(types)} entries but num_hidden_layers is {n}: one per layer")
    allowed = {"llama4_text": ("full_attention", "chunked_attention")}.get(model_type,
                                                                        ("full_attention", "sliding_attention"))
    for t in types:
        if t not in allowed:
            raise ValueError(f"layer type {t!r} is not one a {model_type} layer can have: {', '.join(allowed)}")
    return list(types)


def _flat_rope(config: Mapping, model_type: str) -> dict:
    """One rope dict as transformers standardizes it: ``rope_scaling`` or ``rope_parameters``, plus the top level."""
    rope = config.get("rope_scaling") or config.get("rope_parameters") or {}
    if not isinstance(rope, Mapping):
        raise TypeError(f"rope_scaling/rope_parameters must be a dict or null, got {type(rope).__name__}")
    if rope and all(isinstance(v, Mapping) for v in rope.values()):
        raise ValueError(f"a {model_type} config has one rope dict for all layers, got one per layer type: "
                         f"{sorted(rope)}")
    return _standard(rope, theta=_get(config, model_type, "rope_theta"),
                     fraction=config.get("partial_rotary_factor"))


def _standard(rope: Mapping, *, theta, fraction) -> dict:
    out = {k: v for k, v in rope.items() if k != "type"}
    out.setdefault("rope_type", rope.get("type", "default"))
    out.setdefault("rope_theta", theta)
    if fraction is not None:
        out.setdefault("partial_rotary_factor", fraction)
    if isinstance(out["rope_theta"], bool) or not isinstance(out["rope_theta"], numbers.Real):
        raise ValueError(f"rope_theta must be a number such as 10000.0, got {out['rope_theta']!r}")
    out["rope_theta"] = float(out["rope_theta"])
    return out


def _gemma3_rope(config: Mapping) -> dict[str, dict]:
    """Gemma3TextConfig.convert_rope_params_to_dict: one dict per layer type."""
    nested = config.get("rope_parameters")
    if nested is not None and (not isinstance(nested, Mapping) or not all(isinstance(v, Mapping) or v is None
                                                                          for v in nested.values())):
        raise ValueError("a gemma3 config's rope_parameters must hold one dict per layer type, like "
                         "{'full_attention': {...}, 'sliding_attention': {...}}, got " + repr(nested))
    nested = {k: dict(v) for k, v in (nested or {}).items() if v is not None}
    unknown = set(nested) - {"full_attention", "sliding_attention"}
    if unknown:
        raise ValueError(f"gemma3 rope_parameters names unknown layer types {sorted(unknown)}")
    scaling = config.get("rope_scaling")
    if scaling is not None and not isinstance(scaling, Mapping):
        raise TypeError(f"rope_scaling must be a dict or null, got {type(scaling).__name__}")
    full = nested.get("full_attention", {"rope_type": "default"})
    full.update(scaling or {})  # the old single rope_scaling applies to the full layers only
    sliding = nested.get("sliding_attention", {"rope_type": "default"})
    fraction = config.get("partial_rotary_factor")
    return {"full_attention": _standard(full, theta=_get(config, "gemma3_text", "rope_theta"), fraction=fraction),
            "sliding_attention": _standard(sliding, theta=_get(config, "gemma3_text", "rope_local_base_freq"),
                                           fraction=fraction)}


def layer_positions(config: Mapping) -> list[dict]:
    r"""The position handling of every layer of a Llama 4, SmolLM3, Cohere 2 or Gemma 3 ``config.json``.

    ``config``: the file as ``json.load`` returns it (a multimodal config is read under ``text_config``).
    Returns a list with one dict per layer, in order:

    * ``"attention"``: ``"full"``, ``"sliding"`` or ``"chunked"`` (which keys a query sees, see the module);
    * ``"window"``: the sliding window :math:`W` or chunk size :math:`C` (int), ``None`` for full layers;
    * ``"rope"``: True if the layer rotates queries and keys, False for a NoPE layer;
    * ``"rope_parameters"``: the rope dict the layer's rotation uses (``rope_type``, ``rope_theta`` and the
      type's keys, as :func:`pe_lib.rope_scaling_frequencies` takes it), ``None`` for a NoPE layer;
    * ``"temperature"``: True if the layer scales its queries by :func:`pe_lib.nope_temperature` (Llama 4's
      NoPE layers with ``attn_temperature_tuning``), with ``"floor_scale"`` and ``"attn_scale"`` then given.

    Fields the file leaves out take the defaults of transformers 5.23.0's config class (module docstring).
    A list of the wrong length, a flag other than 0/1, an unknown layer type, a sliding or chunked layer
    without its size, or a ``model_type`` this function does not know raises ``ValueError``.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict (a config.json read with json.load), got {type(config).__name__}")
    model_type = config.get("model_type")
    if model_type in _TEXT_TYPE:
        text = config.get("text_config")
        if not isinstance(text, Mapping):
            raise ValueError(f"a {model_type!r} config keeps its language model under 'text_config', which is missing")
        config, model_type = text, text.get("model_type", _TEXT_TYPE[model_type])
    if model_type not in _DEFAULTS:
        raise ValueError(f"layer_positions knows the model types {', '.join(MODEL_TYPES)}; got model_type "
                         f"{model_type!r} (other models put RoPE in every layer: see pe_lib.config_rope_frequencies)")
    if model_type == "gemma3_text" and config.get("use_bidirectional_attention"):
        raise ValueError("use_bidirectional_attention changes Gemma 3's window (an encoder); not covered here")
    n = _count(_get(config, model_type, "num_hidden_layers"), "num_hidden_layers")
    if n > MAX_LAYERS:
        raise ValueError(f"num_hidden_layers = {n:,} is not a model's depth (at most {MAX_LAYERS:,} here)")
    rope = _rope_flags(config, model_type, n) if model_type in ("llama4_text", "smollm3") else None
    types = _layer_types(config, model_type, n, rope)
    if model_type == "gemma3_text":
        per_type = _gemma3_rope(config)
        rope = [True] * n
    else:
        flat = _flat_rope(config, model_type)
        per_type = {"full_attention": flat, "sliding_attention": flat, "chunked_attention": flat}
        if model_type == "cohere2":  # Cohere2Attention rotates only in sliding layers (whose window must be set)
            rope = [t == "sliding_attention" for t in types]
    temperature = model_type == "llama4_text" and bool(_get(config, model_type, "attn_temperature_tuning"))
    layers = []
    for i, (kind, rotates) in enumerate(zip(types, rope, strict=True)):
        key = {"sliding_attention": "sliding_window", "chunked_attention": "attention_chunk_size"}.get(kind)
        window = None if key is None else _get(config, model_type, key)
        if key is not None:
            if window is None:
                raise ValueError(f"layer {i} is {kind} but the config sets no {key}")
            window = _count(window, key)
        layer = {"attention": _KIND_OF[kind], "window": window, "rope": bool(rotates),
                 "rope_parameters": dict(per_type[kind]) if rotates else None,
                 "temperature": temperature and not rotates}
        if layer["temperature"]:
            layer["floor_scale"] = _get(config, model_type, "floor_scale")
            layer["attn_scale"] = _get(config, model_type, "attn_scale")
        layers.append(layer)
    return layers


def _check_layer(layer) -> tuple[str, int | None]:
    if not isinstance(layer, Mapping) or "attention" not in layer:
        raise TypeError(f"layer must be one entry of pe_lib.layer_positions(...), got {layer!r}")
    kind = layer["attention"]
    if kind not in ATTENTION_KINDS:
        raise ValueError(f"layer['attention'] must be one of {ATTENTION_KINDS}, got {kind!r}")
    if kind == "full":
        return kind, None
    return kind, check_positive_int(layer.get("window"), name="layer['window']")


def layer_attention_mask(layer: Mapping, seq_len: int) -> np.ndarray:
    r"""Which keys each query of one layer sees: ``(seq_len, seq_len)`` bool, True where query ``i`` sees key ``j``.

    ``layer``: an entry of :func:`layer_positions` (only ``"attention"`` and ``"window"`` are read).
    ``"full"``: :math:`j \le i`; ``"sliding"``: :math:`i - W < j \le i`; ``"chunked"``: :math:`j \le i` and
    :math:`\lfloor j/C \rfloor = \lfloor i/C \rfloor`. Source: transformers' ``masking_utils``
    (``sliding_window_overlay``, ``chunked_overlay``), with no padding.
    """
    kind, window = _check_layer(layer)
    n = check_positive_int(seq_len, name="seq_len")
    check_table_size(n, n, what="attention mask")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    mask = j <= i
    if kind == "sliding":
        mask &= j > i - window
    elif kind == "chunked":
        mask &= (j // window) == (i // window)
    return mask


def largest_offset(layer: Mapping, seq_len: int) -> int:
    r"""The largest distance :math:`i - j` between a query and a key it sees, in a sequence of ``seq_len``.

    ``"full"``: :math:`n - 1`; ``"sliding"``: :math:`\min(n, W) - 1`; ``"chunked"``: :math:`\min(n, C) - 1`.
    For a RoPE layer this is the largest angle distance it ever rotates by, whatever the length of the text.
    Returns an int.
    """
    kind, window = _check_layer(layer)
    n = check_positive_int(seq_len, name="seq_len")
    return n - 1 if window is None else min(n, window) - 1
