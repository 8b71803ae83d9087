r"""The rotary frequencies a model config's ``rope_scaling`` entry asks for, as Hugging Face computes them.

A RoPE model's ``config.json`` names its frequency scheme in a ``rope_scaling`` dict (transformers 5
calls it ``rope_parameters`` and moves ``rope_theta`` into it). :func:`rope_scaling_frequencies`
reproduces what transformers' ``_compute_*_parameters`` functions (``modeling_rope_utils.py``, read at
versions 4.57.6 and 5.23.0) return for it: the frequencies ``inv_freq`` :math:`\omega'_i` and the factor
``attention_factor`` by which the model multiplies ``cos`` and ``sin`` (so queries *and* keys, and the
attention logits by its square). With :math:`d` the rotary dimension, :math:`i = 0 .. d/2 - 1`,
:math:`\omega_i = \mathrm{base}^{-2i/d}`, :math:`s` = ``factor`` and :math:`L` the original (training)
length:

* ``"default"``: :math:`\omega'_i = \omega_i` (Su et al. 2021).
* ``"linear"``: :math:`\omega'_i = \omega_i / s`: position interpolation (Chen et al. 2023; kaiokendev).
* ``"dynamic"``: :math:`\omega'_i = \mathrm{base}'^{-2i/d}` with
  :math:`\mathrm{base}' = \mathrm{base}\,\big(s\,\ell/L - (s - 1)\big)^{d/(d-2)}`,
  :math:`\ell = \max(\text{seq\_len}, L)`: NTK-aware scaling re-tuned to the current length (emozilla,
  2023). Here :math:`L` is ``max_position_embeddings``, not ``original_max_position_embeddings``.
* ``"yarn"``: YaRN's NTK-by-parts (Peng et al. 2023) with the reference code's ramp, linear in the pair
  index: :math:`\omega'_i = (1-\gamma_i)\,\omega_i/s + \gamma_i\,\omega_i`; attention factor
  :math:`0.1\ln s + 1`, or DeepSeek's ratio :math:`(0.1\,m\ln s + 1)/(0.1\,m_\text{all}\ln s + 1)`.
* ``"longrope"``: one rescale factor :math:`\lambda_i` per pair (LongRoPE, Ding et al. 2024; Phi-3):
  :math:`\omega'_i = \omega_i/\lambda_i`, ``short_factor`` up to :math:`L` tokens and ``long_factor``
  beyond; attention factor :math:`\sqrt{1 + \ln s/\ln L}`.
* ``"llama3"``: Llama 3.1's wavelength bands: pairs whose wavelength :math:`2\pi/\omega_i` exceeds
  :math:`L/\text{low\_freq\_factor}` are divided by :math:`s`, those below :math:`L/\text{high\_freq\_factor}`
  kept, and those between blended with
  :math:`\kappa_i = (L/\lambda_i - \text{low})/(\text{high} - \text{low})`:
  :math:`\omega'_i = (1-\kappa_i)\,\omega_i/s + \kappa_i\,\omega_i`.

transformers computes ``inv_freq`` in float32; this module computes in float64, so the two agree to
float32 rounding. ``make reference`` checks that against the real functions (transformers 5.23.0, the
version pinned in ``requirements-reference.txt``; ``tests/reference``): over a grid of configurations of
every type, each frequency agrees within 8 float32 epsilons (9.5e-7) of its own value, and within as
much of the unscaled :math:`\omega_i` for a pair on the ramp of ``"yarn"`` or ``"llama3"``, where
transformers' float32 blend of :math:`\omega_i` and :math:`\omega_i/s` carries :math:`\omega_i`'s rounding;
``attention_factor`` agrees exactly on that grid. Where pe_lib is stricter than transformers
(which only logs a warning), it raises: a ``factor`` below 1, ``beta_fast < beta_slow``, a
``high_freq_factor`` not above ``low_freq_factor``, unknown keys.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .._validate import as_real_array, check_base, check_finite_real, check_positive_int
from ..encodings.frequencies import frequencies

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")

# rope_type -> (required keys, optional keys): the keys transformers' validation functions accept.
ROPE_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "default": ((), ()),
    "linear": (("factor",), ()),
    "dynamic": (("factor",), ("original_max_position_embeddings",)),  # accepted, but not used (as in HF)
    "yarn": (("factor",), ("original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow",
                           "mscale", "mscale_all_dim", "truncate")),
    "longrope": (("short_factor", "long_factor"), ("factor", "original_max_position_embeddings",
                                                   "attention_factor")),
    "llama3": (("factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"), ()),
}
# Keys every type accepts: the type itself (legacy name "type") and transformers 5's moved fields.
COMMON_KEYS = ("rope_type", "type", "rope_theta", "partial_rotary_factor")
_HINTS = {
    "su": "'su' is Phi-3's old name for 'longrope'",
    "mrope": "Qwen2-VL's 'mrope' uses the 'default' frequencies (its sections only choose which position "
             "each pair turns by)",
}
YARN_BETA_FAST, YARN_BETA_SLOW = 32.0, 1.0  # the defaults of the paper and of transformers


def _rope_type(params: dict) -> str:
    rope_type = params.get("rope_type", params.get("type"))  # "type" is the legacy key, as in transformers
    if rope_type is None:
        raise ValueError(
            f"rope_scaling needs a 'rope_type' (or the legacy 'type') key, one of {', '.join(map(repr, ROPE_TYPES))}; "
            f"got the keys {sorted(params)}"
        )
    if rope_type not in ROPE_TYPES:
        hint = f" ({_HINTS[rope_type]})" if rope_type in _HINTS else ""
        raise ValueError(f"rope_type must be one of {', '.join(map(repr, ROPE_TYPES))}, got {rope_type!r}{hint}")
    required, optional = ROPE_KEYS[rope_type]
    missing = [k for k in required if k not in params]
    if missing:
        raise ValueError(
            f"rope_type {rope_type!r} needs the keys {list(required)}; missing {missing}"
        )
    unknown = sorted(set(params) - set(required) - set(optional) - set(COMMON_KEYS))
    if unknown:
        allowed = list(required) + list(optional)
        raise ValueError(
            f"rope_type {rope_type!r} does not use the keys {unknown}; it takes {allowed or 'no other keys'} "
            f"(besides {list(COMMON_KEYS)})"
        )
    return rope_type


def _dict_or_argument(params: dict, key: str, value, default, *, argument: str):
    """The dict's ``key`` (transformers 5 keeps it there) unless the argument says otherwise."""
    if key not in params:
        return value
    if value != default and value != params[key]:
        raise ValueError(
            f"rope_scaling[{key!r}] = {params[key]!r} disagrees with {argument}={value!r}; give one of them"
        )
    return params[key]


def _check_factor(value, *, name: str = "factor") -> float:
    s = check_finite_real(value, name=name)
    if s < 1.0:
        raise ValueError(
            f"{name} is the factor by which the context grows and must be >= 1 (transformers warns otherwise), "
            f"got {s!r}"
        )
    return s


def _original_length(params: dict, max_position_embeddings: int | None, rope_type: str) -> int:
    """``original_max_position_embeddings`` from the dict, else ``max_position_embeddings`` (as in transformers)."""
    original = params.get("original_max_position_embeddings")
    if original is None:
        original = max_position_embeddings
    if original is None:
        raise ValueError(
            f"rope_type {rope_type!r} needs the training length: put 'original_max_position_embeddings' into "
            "rope_scaling or pass max_position_embeddings="
        )
    return check_positive_int(original, name="original_max_position_embeddings")


def check_betas(beta_fast, beta_slow, *, allow_equal: bool = False) -> tuple[float, float]:
    """``(beta_fast, beta_slow)`` as floats if ``0 < beta_slow < beta_fast`` (or ``<=`` with ``allow_equal``).

    The code's ramp accepts equal betas (Kimi K2's config has both at 1; transformers does not warn), the
    paper's ramp divides by their difference. transformers only warns when ``beta_fast < beta_slow``.
    """
    fast = check_finite_real(beta_fast, name="beta_fast")
    slow = check_finite_real(beta_slow, name="beta_slow")
    if not (0.0 < slow <= fast if allow_equal else 0.0 < slow < fast):
        relation = "<=" if allow_equal else "<"
        raise ValueError(
            f"need 0 < beta_slow {relation} beta_fast (turns within the original length), got {slow!r} and "
            f"{fast!r}; YaRN uses beta_slow=1.0, beta_fast=32.0"
        )
    return fast, slow


def yarn_bounds(d: int, length: int, base: float, beta_fast: float, beta_slow: float,
                truncate: bool = True) -> tuple[float, float]:
    r"""The pair indices ``(low, high)`` between which YaRN's code ramps (validated arguments).

    :math:`i(r) = d\ln\!\big(L/(2\pi r)\big)/(2\ln\mathrm{base})` is the real pair index that makes
    :math:`r` turns within :math:`L` tokens; ``low = i(beta_fast)``, ``high = i(beta_slow)``, rounded
    down and up when ``truncate``, then clamped to ``[0, d - 1]`` as in the source.
    """

    def pair_index(turns: float) -> float:  # i(r) = d ln(L / (2 pi r)) / (2 ln base)
        return d * math.log(length / (2.0 * math.pi * turns)) / (2.0 * math.log(base))

    low, high = pair_index(beta_fast), pair_index(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, d - 1)


def yarn_keep(half: int, low: float, high: float) -> np.ndarray:
    r""":math:`\gamma_i = 1 - \mathrm{clip}((i - \mathrm{low})/(\mathrm{high} - \mathrm{low}), 0, 1)` for
    ``i = 0 .. half - 1``; ``high`` is raised by 0.001 when it equals ``low`` (the source's guard).
    Shape ``(half,)``: 1 keeps pair ``i``, 0 interpolates it."""
    width = high - low
    if width == 0:
        width = 0.001  # the source's guard against a zero-width ramp
    pair = np.arange(half)  # i = 0 .. d/2 - 1
    return 1.0 - np.clip((pair - low) / width, 0.0, 1.0)


def _dynamic(omega_dim: int, base: float, params: dict, max_position_embeddings, seq_len) -> np.ndarray:
    s = _check_factor(params["factor"])
    if max_position_embeddings is None:
        raise ValueError("rope_type 'dynamic' scales by the current length over max_position_embeddings: "
                         "pass max_position_embeddings=")
    if omega_dim < 4:
        raise ValueError(f"rope_type 'dynamic' divides by d - 2, so the rotary dimension must be >= 4, got {omega_dim}")
    length = max_position_embeddings if seq_len is None else max(seq_len, max_position_embeddings)  # l
    new_base = base * ((s * length / max_position_embeddings) - (s - 1)) ** (omega_dim / (omega_dim - 2))
    return frequencies(omega_dim, base=new_base)  # base'^(-2i/d)


def _yarn(omega: np.ndarray, base: float, params: dict, max_position_embeddings) -> tuple[np.ndarray, float]:
    d = 2 * omega.size
    s = _check_factor(params["factor"])
    length = _original_length(params, max_position_embeddings, "yarn")
    if params.get("attention_factor") is not None:
        attention = check_finite_real(params["attention_factor"], name="attention_factor")
    else:
        mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all_dim:  # DeepSeek-V2/V3: a ratio of two such factors
            m = check_finite_real(mscale, name="mscale")
            m_all = check_finite_real(mscale_all_dim, name="mscale_all_dim")
            attention = (0.1 * m * math.log(s) + 1.0) / (0.1 * m_all * math.log(s) + 1.0)
        else:
            attention = 0.1 * math.log(s) + 1.0  # sqrt(1/t) = 0.1 ln s + 1
    fast, slow = check_betas(params.get("beta_fast") or YARN_BETA_FAST,  # None or 0 -> default, as in HF
                             params.get("beta_slow") or YARN_BETA_SLOW, allow_equal=True)
    truncate = params.get("truncate", True)
    if not isinstance(truncate, bool):
        raise ValueError(f"truncate must be True or False, got {truncate!r}")
    low, high = yarn_bounds(d, length, base, fast, slow, truncate)
    gamma = yarn_keep(omega.size, low, high)  # 1 keep, 0 interpolate
    return (1.0 - gamma) * omega / s + gamma * omega, attention  # interpolate slow pairs, keep fast ones


def _rescale_factors(value, *, name: str, half: int) -> np.ndarray:
    lam = as_real_array(value, name=name)
    if lam.shape != (half,):
        raise ValueError(f"{name} must be a list of {half} numbers (one per rotary pair), got shape {lam.shape}")
    if not np.all(np.isfinite(lam) & (lam > 0)):
        bad = float(lam[~(np.isfinite(lam) & (lam > 0))][0])
        raise ValueError(f"{name} must hold finite positive numbers, got {bad!r} among them")
    return lam


def _longrope(omega: np.ndarray, params: dict, max_position_embeddings, seq_len) -> tuple[np.ndarray, float]:
    short = _rescale_factors(params["short_factor"], name="short_factor", half=omega.size)
    long = _rescale_factors(params["long_factor"], name="long_factor", half=omega.size)
    length = _original_length(params, max_position_embeddings, "longrope")
    if params.get("factor") is not None:
        s = _check_factor(params["factor"])
    elif max_position_embeddings is None:
        raise ValueError("rope_type 'longrope' without 'factor' uses max_position_embeddings / "
                         "original_max_position_embeddings: put 'factor' into rope_scaling or pass "
                         "max_position_embeddings=")
    else:
        s = max_position_embeddings / length  # the extended over the original length (Phi-3)
    if params.get("attention_factor") is not None:
        attention = check_finite_real(params["attention_factor"], name="attention_factor")
    elif s <= 1.0:
        attention = 1.0
    else:
        attention = math.sqrt(1.0 + math.log(s) / math.log(length))  # sqrt(1 + ln s / ln L)
    rescale = long if seq_len is not None and seq_len > length else short  # long factors only beyond L
    return omega / rescale, attention  # omega_i / lambda_i


def _llama3(omega: np.ndarray, params: dict) -> np.ndarray:
    s = _check_factor(params["factor"])
    length = check_positive_int(params["original_max_position_embeddings"], name="original_max_position_embeddings")
    low = check_finite_real(params["low_freq_factor"], name="low_freq_factor")
    high = check_finite_real(params["high_freq_factor"], name="high_freq_factor")
    if not 0.0 < low < high:
        raise ValueError(f"need 0 < low_freq_factor < high_freq_factor, got {low!r} and {high!r}; "
                         "Llama 3.1 uses 1.0 and 4.0")
    wavelength = 2.0 * np.pi / omega  # lambda_i
    kappa = (length / wavelength - low) / (high - low)  # 0 at lambda = L/low, 1 at lambda = L/high
    blended = (1.0 - kappa) * omega / s + kappa * omega
    out = np.where(wavelength > length / low, omega / s, blended)  # long wavelengths: interpolate
    return np.where(wavelength < length / high, omega, out)  # short wavelengths: keep


def rope_scaling_frequencies(
    head_dim: int,
    rope_scaling: Mapping | None = None,
    *,
    base: float = 10_000.0,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
) -> tuple[np.ndarray, float]:
    r"""``(inv_freq, attention_factor)`` for a ``rope_scaling`` dict in Hugging Face's format.

    ``head_dim``: the width of one attention head; the rotary dimension is
    ``d = int(head_dim * partial_rotary_factor)`` and must be even. ``rope_scaling``: ``None`` (plain
    RoPE) or a dict with ``"rope_type"`` (or the legacy ``"type"``) in :data:`ROPE_TYPES` and that type's
    keys (:data:`ROPE_KEYS`); ``"rope_theta"`` and ``"partial_rotary_factor"`` may sit in it too, as in
    transformers 5's ``rope_parameters``. ``base``: ``rope_theta``. ``max_position_embeddings``: the
    config's field of that name; ``"dynamic"`` needs it, ``"yarn"`` and ``"longrope"`` fall back on it
    when the dict has no ``original_max_position_embeddings``, ``"longrope"`` divides it by that
    length when the dict has no ``factor``. ``seq_len``: the current sequence length, used by
    ``"dynamic"`` (``max(seq_len, max_position_embeddings)``; below that the frequencies are the
    default ones) and ``"longrope"`` (``long_factor`` only when ``seq_len > original_max_position_embeddings``).

    The formula of each type is in the module docstring. Source: ``_compute_default_rope_parameters``,
    ``_compute_linear_scaling_rope_parameters``, ``_compute_dynamic_ntk_parameters``,
    ``_compute_yarn_parameters``, ``_compute_longrope_parameters`` and ``_compute_llama3_parameters``
    in transformers' ``modeling_rope_utils.py``. Computed in float64 (transformers: float32).

    Returns ``inv_freq`` of shape ``(d // 2,)`` and ``attention_factor``, the float by which the model
    multiplies ``cos`` and ``sin`` (1.0 except for ``"yarn"`` and ``"longrope"``).
    """
    head_dim = check_positive_int(head_dim, name="head_dim")
    if rope_scaling is None:
        params: dict = {"rope_type": "default"}
    elif isinstance(rope_scaling, Mapping):
        params = dict(rope_scaling)
    else:
        raise TypeError(f"rope_scaling must be None or a dict like {{'rope_type': 'linear', 'factor': 4.0}}, "
                        f"got {type(rope_scaling).__name__}")
    rope_type = _rope_type(params)
    base = check_base(_dict_or_argument(params, "rope_theta", base, 10_000.0, argument="base"))
    fraction = _dict_or_argument(params, "partial_rotary_factor", partial_rotary_factor, 1.0,
                                 argument="partial_rotary_factor")
    fraction = check_finite_real(fraction, name="partial_rotary_factor")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"partial_rotary_factor is the rotated fraction of each head, in (0, 1], got {fraction!r}")
    d = int(head_dim * fraction)  # as transformers: int(head_dim * partial_rotary_factor)
    if d < 2 or d % 2:
        raise ValueError(f"the rotary dimension int(head_dim * partial_rotary_factor) = int({head_dim} * {fraction!r}) "
                         f"= {d} must be a positive even integer")
    if max_position_embeddings is not None:
        max_position_embeddings = check_positive_int(max_position_embeddings, name="max_position_embeddings")
    if seq_len is not None:
        seq_len = check_positive_int(seq_len, name="seq_len")
    omega = frequencies(d, base=base)  # omega_i = base^(-2i/d), shape (d/2,)
    if rope_type == "default":
        return omega, 1.0
    if rope_type == "linear":
        return omega / _check_factor(params["factor"]), 1.0  # omega_i / s
    if rope_type == "dynamic":
        return _dynamic(d, base, params, max_position_embeddings, seq_len), 1.0
    if rope_type == "yarn":
        return _yarn(omega, base, params, max_position_embeddings)
    if rope_type == "longrope":
        return _longrope(omega, params, max_position_embeddings, seq_len)
    return _llama3(omega, params), 1.0
