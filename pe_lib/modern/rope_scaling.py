r"""The rotary frequencies a model config asks for, as Hugging Face transformers computes them.

A RoPE model's ``config.json`` names its frequency scheme in a ``rope_scaling`` dict (transformers 5
calls it ``rope_parameters`` and moves ``rope_theta`` and ``partial_rotary_factor`` into it). Two
functions read it: :func:`rope_scaling_frequencies` takes the fields one by one (the head width, the
dict, and the top-level keys ``rope_theta``, ``max_position_embeddings``,
``original_max_position_embeddings``, ``partial_rotary_factor`` as arguments), and
:func:`config_rope_frequencies` takes a whole ``config.json`` as a dict. Both return what
transformers 5.23.0 (the version ``make reference`` pins) returns for it: the frequencies
``inv_freq`` :math:`\omega'_i` and the factor ``attention_factor`` by which the rotary module multiplies
``cos`` and ``sin``. With :math:`d` the rotary dimension, :math:`i = 0 .. d/2 - 1`,
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
  :math:`0.1\ln s + 1` (1 if :math:`s \le 1`), or DeepSeek's ratio
  :math:`(0.1\,m\ln s + 1)/(0.1\,m_\text{all}\ln s + 1)`.
* ``"longrope"``: one rescale factor :math:`\lambda_i` per pair (LongRoPE, Ding et al. 2024; Phi-3):
  :math:`\omega'_i = \omega_i/\lambda_i`, ``short_factor`` up to :math:`L` tokens and ``long_factor``
  beyond; attention factor :math:`\sqrt{1 + \ln s/\ln L}` (1 if :math:`s \le 1`).
* ``"llama3"``: Llama 3.1's wavelength bands: pairs whose wavelength :math:`\lambda_i = 2\pi/\omega_i`
  exceeds :math:`L/\text{low\_freq\_factor}` are divided by :math:`s`, those below
  :math:`L/\text{high\_freq\_factor}` kept, and those between blended with
  :math:`\kappa_i = (L/\lambda_i - \text{low})/(\text{high} - \text{low})`:
  :math:`\omega'_i = (1-\kappa_i)\,\omega_i/s + \kappa_i\,\omega_i`. With ``high_freq_factor <=
  low_freq_factor`` (Llama 4 Scout has both at 1) the blend is empty and the rule is a hard cut at
  :math:`\lambda_i = L/\text{low\_freq\_factor}`.
* ``"proportional"`` (Gemma 4's full-attention layers): the first
  :math:`r = \lfloor p\,d_\text{head}/2 \rfloor` pairs turn at :math:`\mathrm{base}^{-2i/d_\text{head}}/s`
  (the exponent over the *whole* head, :math:`p` = ``partial_rotary_factor``), the other
  :math:`d_\text{head}/2 - r` pairs at frequency 0, i.e. not at all; ``inv_freq`` always has
  :math:`d_\text{head}/2` entries and :math:`s` = ``factor`` defaults to 1.

Two more names appear in configs. ``"mrope"`` (Qwen2-VL's ``rope_scaling``) is rewritten to
``"default"`` by Qwen2-VL's config class; its ``mrope_section`` (and Qwen3-VL's ``mrope_interleaved``) are
not read by these functions but by the model, which decides with them which position (time, height,
width) each pair turns by (:func:`pe_lib.mrope`); transformers 5.23.0 reads ``mrope_section`` and
ignores ``mrope_interleaved`` (Qwen3-VL's model always interleaves). ``"axial"`` is the type that
``standardize_rope_params`` gives the vision towers of Qwen2-VL, Gemma 4 and others: a 2-D RoPE whose
frequencies the vision model computes itself over the two image axes (a function of
the vision model, not of ``ROPE_INIT_FUNCTIONS``); this module refuses it with that explanation.

Which version does what. transformers 5.23.0 (``modeling_rope_utils.py``, its config classes'
``standardize_rope_params`` and ``validate_rope``) is the reference; 4.57.6 differs for ``"longrope"``:
it ignores an ``original_max_position_embeddings`` inside the dict and, whenever the config has one at
the top level (``Phi3Config`` always has, default 4096), replaces ``factor`` by
``max_position_embeddings / original_max_position_embeddings``; 5.23.0 copies the top-level value into
the dict (it wins over the dict's) and uses the dict's ``factor`` when there is one. 4.57.6 also accepted
``original_max_position_embeddings`` in a ``"dynamic"`` dict; 5.23.0 warns that it does not recognise it.

Where transformers only logs a warning and computes anyway, this module does the same computation and
issues a :class:`RopeScalingWarning` (``strict=True`` raises ``ValueError`` instead): a ``factor`` below 1,
``beta_fast < beta_slow``, ``high_freq_factor <= low_freq_factor``, an ``original_max_position_embeddings``
not below ``max_position_embeddings`` for ``"llama3"``, a ``"yarn"`` ``factor`` that differs from
``max_position_embeddings / original_max_position_embeddings``, a ``"proportional"`` dict without
``partial_rotary_factor``, keys the type does not use (ignored), and a dict without ``rope_type``
(read as ``"default"``). Where transformers fails (a missing required key, a list of factors of the wrong
length, a type it does not know) this module raises, and it is stricter than transformers for a
non-boolean ``truncate`` and a non-integer ``original_max_position_embeddings``.

transformers computes ``inv_freq`` in float32; this module computes in float64, so the two agree to
float32 rounding. ``make reference`` checks that against the real functions (``tests/reference``): over a
grid of configurations of every type and over real model configs, each frequency agrees within 8
float32 epsilons (9.5e-7) of its own value, and within as much of the unscaled :math:`\omega_i` for a
pair on the ramp of ``"yarn"`` or ``"llama3"``, where transformers' float32 blend of :math:`\omega_i` and
:math:`\omega_i/s` carries :math:`\omega_i`'s rounding; ``attention_factor`` agrees to 1e-12.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

from .._validate import as_real_array, check_base, check_finite_real, check_positive_int
from ..encodings.frequencies import frequencies

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")

# rope_type -> (required keys, optional keys), as transformers 5.23.0's _validate_<type>_rope_parameters
# accept them after standardize_rope_params has filled original_max_position_embeddings (for "yarn",
# "longrope" and "llama3" it comes from the top level of the config or from max_position_embeddings, so
# it is optional here). "factor" is optional for "proportional" (default 1).
ROPE_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "default": ((), ()),
    "linear": (("factor",), ()),
    "dynamic": (("factor",), ()),
    "yarn": (("factor",), ("original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow",
                           "mscale", "mscale_all_dim", "truncate")),
    "longrope": (("short_factor", "long_factor"), ("factor", "original_max_position_embeddings",
                                                   "attention_factor")),
    "llama3": (("factor", "low_freq_factor", "high_freq_factor"), ("original_max_position_embeddings",)),
    "proportional": ((), ("factor",)),
}
# Keys every type accepts: the type itself (legacy name "type") and transformers 5's moved fields.
COMMON_KEYS = ("rope_type", "type", "rope_theta", "partial_rotary_factor")
# Keys a model class reads outside these functions (its config's ignore_keys_at_rope_validation).
MODEL_KEYS = ("mrope_section", "mrope_interleaved")
# Names a config may carry that are another type (or none) under another name.
ALIASES = {"mrope": "default"}  # Qwen2VLTextConfig.convert_rope_params_to_dict rewrites it
_HINTS = {
    "su": "'su' is Phi-3's old name for 'longrope'",
    "axial": "'axial' is the 2-D RoPE of vision towers (Qwen2-VL, Gemma 4, ...): the vision model computes "
             "its frequencies over the image's two axes itself; it is not a rope_scaling type of a language model",
}
YARN_BETA_FAST, YARN_BETA_SLOW = 32.0, 1.0  # the defaults of the paper and of transformers


class RopeScalingWarning(UserWarning):
    """A config transformers accepts with only a logged warning (``strict=True`` raises instead)."""


def _complain(message: str, strict: bool) -> None:
    """Raise with ``strict``, else warn: transformers 5.23.0 logs ``message`` and goes on."""
    if strict:
        raise ValueError(message + " (transformers only warns; strict=True refuses it)")
    warnings.warn(message + " (transformers only warns, and so does pe_lib without strict=True)",
                  RopeScalingWarning, stacklevel=4)


def _rope_type(params: dict, strict: bool) -> str:
    rope_type = params.get("rope_type", params.get("type"))  # "type" is the legacy key, as in transformers
    if rope_type is None:
        if strict:
            raise ValueError(
                f"rope_scaling needs a 'rope_type' (or the legacy 'type') key, one of "
                f"{', '.join(map(repr, ROPE_TYPES))}; got the keys {sorted(params)}"
            )
        rope_type = "default"  # standardize_rope_params: setdefault("rope_type", ... "default")
    rope_type = ALIASES.get(rope_type, rope_type)
    if rope_type not in ROPE_TYPES:
        hint = f" ({_HINTS[rope_type]})" if rope_type in _HINTS else ""
        raise ValueError(f"rope_type must be one of {', '.join(map(repr, ROPE_TYPES))}, got {rope_type!r}{hint}")
    required, optional = ROPE_KEYS[rope_type]
    missing = [k for k in required if k not in params]
    if missing:
        raise ValueError(
            f"rope_type {rope_type!r} needs the keys {list(required)}; missing {missing}"
        )
    unknown = sorted(set(params) - set(required) - set(optional) - set(COMMON_KEYS) - set(MODEL_KEYS))
    if unknown:
        allowed = list(required) + list(optional)
        _complain(f"rope_type {rope_type!r} does not use the keys {unknown}; it takes {allowed or 'no other keys'} "
                  f"(besides {list(COMMON_KEYS)})", strict)
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


def _check_factor(value, strict: bool, *, name: str = "factor") -> float:
    s = check_finite_real(value, name=name)
    if s < 1.0:
        _complain(f"{name} is the factor by which the context grows and should be >= 1, got {s!r}", strict)
    return s


def _original_length(params: dict, top_level: int | None, max_position_embeddings: int | None,
                     rope_type: str) -> int:
    """The training length as transformers 5.23.0's ``standardize_rope_params`` sets it.

    The config's top-level ``original_max_position_embeddings`` (Phi-3.5, Phi-4-mini keep it there) wins
    over the dict's; then the dict's; then ``max_position_embeddings``.
    """
    original = top_level if top_level is not None else params.get("original_max_position_embeddings")
    if original is None:
        original = max_position_embeddings
    if original is None:
        raise ValueError(
            f"rope_type {rope_type!r} needs the training length: put 'original_max_position_embeddings' into "
            "rope_scaling or pass original_max_position_embeddings= or max_position_embeddings="
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


def _dynamic(omega_dim: int, base: float, params: dict, max_position_embeddings, seq_len,
             strict: bool) -> np.ndarray:
    s = _check_factor(params["factor"], strict)
    if max_position_embeddings is None:
        raise ValueError("rope_type 'dynamic' scales by the current length over max_position_embeddings: "
                         "pass max_position_embeddings=")
    if omega_dim < 4:
        raise ValueError(f"rope_type 'dynamic' divides by d - 2, so the rotary dimension must be >= 4, got {omega_dim}")
    length = max_position_embeddings if seq_len is None else max(seq_len, max_position_embeddings)  # l
    new_base = base * ((s * length / max_position_embeddings) - (s - 1)) ** (omega_dim / (omega_dim - 2))
    return frequencies(omega_dim, base=new_base)  # base'^(-2i/d)


def _mscale(s: float, m: float = 1.0) -> float:
    """YaRN's ``0.1 m ln s + 1``, 1 for ``s <= 1`` (transformers' ``get_mscale``)."""
    return 1.0 if s <= 1.0 else 0.1 * m * math.log(s) + 1.0


def _yarn(omega: np.ndarray, base: float, params: dict, length: int, max_position_embeddings,
          strict: bool) -> tuple[np.ndarray, float]:
    d = 2 * omega.size
    s = _check_factor(params["factor"], strict)
    if max_position_embeddings is not None and max_position_embeddings / length not in (s, 1.0):
        _complain(f"'yarn' factor {s!r} differs from max_position_embeddings / original_max_position_embeddings "
                  f"= {max_position_embeddings / length!r}; the factor is used", strict)
    if params.get("attention_factor") is not None:
        attention = check_finite_real(params["attention_factor"], name="attention_factor")
    else:
        mscale, mscale_all_dim = params.get("mscale"), params.get("mscale_all_dim")
        if mscale and mscale_all_dim:  # DeepSeek-V2/V3: a ratio of two such factors
            m = check_finite_real(mscale, name="mscale")
            m_all = check_finite_real(mscale_all_dim, name="mscale_all_dim")
            attention = _mscale(s, m) / _mscale(s, m_all)
        else:
            attention = _mscale(s)  # sqrt(1/t) = 0.1 ln s + 1
    fast = params.get("beta_fast") or YARN_BETA_FAST  # None or 0 -> default, as in transformers
    slow = params.get("beta_slow") or YARN_BETA_SLOW
    fast = check_finite_real(fast, name="beta_fast")  # before comparing them: a string gets a clear error
    slow = check_finite_real(slow, name="beta_slow")
    check_betas(max(fast, slow), min(fast, slow), allow_equal=True)  # finite and positive
    if fast < slow:
        _complain(f"beta_fast ({fast!r}) should not be below beta_slow ({slow!r}); the ramp runs backwards", strict)
    truncate = params.get("truncate", True)
    if not isinstance(truncate, bool):
        raise ValueError(f"truncate must be True or False, got {truncate!r}")
    low, high = yarn_bounds(d, length, base, float(fast), float(slow), truncate)
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


def _longrope(omega: np.ndarray, params: dict, length: int, max_position_embeddings, seq_len,
              strict: bool) -> tuple[np.ndarray, float]:
    short = _rescale_factors(params["short_factor"], name="short_factor", half=omega.size)
    long = _rescale_factors(params["long_factor"], name="long_factor", half=omega.size)
    if params.get("factor") is not None:
        s = _check_factor(params["factor"], strict)
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


def _llama3(omega: np.ndarray, params: dict, length: int, max_position_embeddings, strict: bool) -> np.ndarray:
    s = _check_factor(params["factor"], strict)
    low = check_finite_real(params["low_freq_factor"], name="low_freq_factor")
    high = check_finite_real(params["high_freq_factor"], name="high_freq_factor")
    if low <= 0.0:
        raise ValueError(f"low_freq_factor divides the original length and must be > 0, got {low!r}")
    if high <= low:
        _complain(f"high_freq_factor ({high!r}) should be above low_freq_factor ({low!r}); there is no blend, "
                  f"the rule cuts at wavelength original_max_position_embeddings / low_freq_factor = {length / low!r}",
                  strict)
    if max_position_embeddings is not None and length >= max_position_embeddings:
        _complain(f"original_max_position_embeddings ({length}) should be below max_position_embeddings "
                  f"({max_position_embeddings})", strict)
    wavelength = 2.0 * np.pi / omega  # lambda_i
    out = np.where(wavelength > length / low, omega / s, omega)  # long wavelengths: interpolate
    if high > low:
        kappa = (length / wavelength - low) / (high - low)  # 0 at lambda = L/low, 1 at lambda = L/high
        blended = (1.0 - kappa) * omega / s + kappa * omega
        between = (wavelength >= length / high) & (wavelength <= length / low)
        out = np.where(between, blended, out)
    return out


def _proportional(head_dim: int, base: float, params: dict, fraction: float, fraction_given: bool,
                  strict: bool) -> np.ndarray:
    if not fraction_given:
        _complain("rope_type 'proportional' without partial_rotary_factor rotates every pair, which makes it "
                  "'linear'", strict)
    s = check_finite_real(params.get("factor", 1.0), name="factor")
    if s <= 0.0:
        raise ValueError(f"factor divides the frequencies and must be > 0, got {s!r}")
    if head_dim % 2:
        raise ValueError(f"rope_type 'proportional' returns head_dim / 2 frequencies: head_dim must be even, "
                         f"got {head_dim}")
    rotated = int(fraction * head_dim // 2)  # as transformers: int(partial_rotary_factor * head_dim // 2)
    omega = np.zeros(head_dim // 2)
    omega[:rotated] = frequencies(head_dim, base=base)[:rotated]  # base^(-2i/head_dim): the whole head's
    return omega / s  # the other pairs stay at 0: not rotated


def rope_scaling_frequencies(
    head_dim: int,
    rope_scaling: Mapping | None = None,
    *,
    base: float = 10_000.0,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
    original_max_position_embeddings: int | None = None,
    strict: bool = False,
) -> tuple[np.ndarray, float]:
    r"""``(inv_freq, attention_factor)`` for a ``rope_scaling`` dict in Hugging Face's format.

    ``head_dim``: the width of one attention head; the rotary dimension is
    ``d = int(head_dim * partial_rotary_factor)`` and must be even (``"proportional"``: ``d = head_dim``).
    ``rope_scaling``: ``None`` (plain RoPE) or a dict with ``"rope_type"`` (or the legacy ``"type"``) in
    :data:`ROPE_TYPES` (or ``"mrope"``, read as ``"default"``) and that type's keys (:data:`ROPE_KEYS`);
    ``"rope_theta"`` and ``"partial_rotary_factor"`` may sit in it too, as in transformers 5's
    ``rope_parameters``. The other arguments are the config's top-level fields of the same name:
    ``base`` is ``rope_theta``; ``max_position_embeddings`` is needed by ``"dynamic"``, is the fallback
    training length of ``"yarn"``, ``"longrope"`` and ``"llama3"``, and is divided by that length for a
    ``"longrope"`` dict without ``factor``; ``original_max_position_embeddings`` (Phi-3.5 and Phi-4-mini
    keep it at the top level) wins over the dict's, as transformers 5.23.0 copies it into the dict.
    ``seq_len``: the current sequence length, used by ``"dynamic"`` (``max(seq_len,
    max_position_embeddings)``; below that the frequencies are the default ones) and ``"longrope"``
    (``long_factor`` only when ``seq_len > original_max_position_embeddings``). ``strict``: raise
    ``ValueError`` where transformers only warns (see the module docstring); by default warn with
    :class:`RopeScalingWarning` and compute what transformers computes.

    The formula of each type is in the module docstring. Source: ``_compute_*_parameters`` and
    ``RotaryEmbeddingConfigMixin`` in transformers 5.23.0's ``modeling_rope_utils.py``. Computed in float64
    (transformers: float32).

    Returns ``inv_freq`` of shape ``(d // 2,)`` and ``attention_factor``, the float by which the rotary
    module multiplies ``cos`` and ``sin`` (1.0 except for ``"yarn"`` and ``"longrope"``).
    """
    head_dim = check_positive_int(head_dim, name="head_dim")
    if rope_scaling is None:
        params: dict = {"rope_type": "default"}
    elif isinstance(rope_scaling, Mapping):
        params = dict(rope_scaling)
    else:
        raise TypeError(f"rope_scaling must be None or a dict like {{'rope_type': 'linear', 'factor': 4.0}}, "
                        f"got {type(rope_scaling).__name__}")
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be True or False, got {strict!r}")
    rope_type = _rope_type(params, strict)
    base = check_base(_dict_or_argument(params, "rope_theta", base, 10_000.0, argument="base"))
    fraction_given = "partial_rotary_factor" in params or partial_rotary_factor != 1.0
    fraction = _dict_or_argument(params, "partial_rotary_factor", partial_rotary_factor, 1.0,
                                 argument="partial_rotary_factor")
    fraction = check_finite_real(fraction, name="partial_rotary_factor")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"partial_rotary_factor is the rotated fraction of each head, in (0, 1], got {fraction!r}")
    if max_position_embeddings is not None:
        max_position_embeddings = check_positive_int(max_position_embeddings, name="max_position_embeddings")
    if original_max_position_embeddings is not None:
        original_max_position_embeddings = check_positive_int(original_max_position_embeddings,
                                                              name="original_max_position_embeddings")
    if seq_len is not None:
        seq_len = check_positive_int(seq_len, name="seq_len")
    if rope_type == "proportional":
        return _proportional(head_dim, base, params, fraction, fraction_given, strict), 1.0
    d = int(head_dim * fraction)  # as transformers: int(head_dim * partial_rotary_factor)
    if d < 2 or d % 2:
        raise ValueError(f"the rotary dimension int(head_dim * partial_rotary_factor) = int({head_dim} * {fraction!r}) "
                         f"= {d} must be a positive even integer")
    omega = frequencies(d, base=base)  # omega_i = base^(-2i/d), shape (d/2,)
    if rope_type == "default":
        return omega, 1.0
    if rope_type == "linear":
        return omega / _check_factor(params["factor"], strict), 1.0  # omega_i / s
    if rope_type == "dynamic":
        return _dynamic(d, base, params, max_position_embeddings, seq_len, strict), 1.0
    length = _original_length(params, original_max_position_embeddings, max_position_embeddings, rope_type)
    if rope_type == "yarn":
        return _yarn(omega, base, params, length, max_position_embeddings, strict)
    if rope_type == "longrope":
        return _longrope(omega, params, length, max_position_embeddings, seq_len, strict)
    return _llama3(omega, params, length, max_position_embeddings, strict), 1.0


def _text_config(config: Mapping) -> Mapping:
    """The part of a ``config.json`` that holds the language model (``text_config`` in multimodal ones)."""
    own = any(k in config for k in ("rope_scaling", "rope_parameters", "rope_theta"))
    inner = config.get("text_config")
    if not own and isinstance(inner, Mapping):
        return inner
    return config


# Gemma 3's text config classes: their rope_theta defaults for (full, sliding) layers (default_theta)
GEMMA3_THETAS = {"gemma3_text": (1_000_000.0, 10_000.0), "gemma3n_text": (1_000_000.0, 10_000.0)}


def _gemma3_rope_parameters(config: Mapping) -> dict:
    """``Gemma3TextConfig.convert_rope_params_to_dict`` (and Gemma 3n's, the same code) in transformers 5.23.0:
    one dict per layer type. A flat ``rope_scaling`` (the files released before transformers 5) updates the
    full-attention dict only; the full layers' base is ``rope_theta``, the sliding layers'
    ``rope_local_base_freq``, each unless its dict already has one, else the class default."""
    full_default, sliding_default = GEMMA3_THETAS.get(config.get("model_type"), GEMMA3_THETAS["gemma3_text"])
    nested = config.get("rope_parameters")
    if nested is not None and (not isinstance(nested, Mapping)
                               or not all(isinstance(v, Mapping) or v is None for v in nested.values())):
        raise ValueError("a Gemma 3 config's rope_parameters must hold one dict per layer type, like "
                         "{'full_attention': {...}, 'sliding_attention': {...}}, got " + repr(nested))
    scaling = config.get("rope_scaling")
    if scaling is not None and not isinstance(scaling, Mapping):
        raise TypeError(f"the config's rope_scaling must be a dict or null, got {type(scaling).__name__}")
    rope = {k: dict(v) for k, v in (nested or {}).items() if v is not None}
    full = rope.setdefault("full_attention", {"rope_type": "default"})
    full.update(scaling or {})  # the old single rope_scaling applies to the full layers only
    full.setdefault("rope_theta", config.get("rope_theta", full_default))
    sliding = rope.setdefault("sliding_attention", {"rope_type": "default"})
    sliding.setdefault("rope_theta", config.get("rope_local_base_freq", sliding_default))
    return rope


def config_rope_frequencies(config: Mapping, *, seq_len: int | None = None, layer_type: str | None = None,
                            strict: bool = False) -> tuple[np.ndarray, float]:
    r"""``(inv_freq, attention_factor)`` for a whole ``config.json`` (loaded with ``json.load``).

    Reads what transformers 5.23.0 reads: ``rope_scaling`` or else ``rope_parameters`` (a dict, or one dict
    per layer type as in Gemma 4: pass ``layer_type``, e.g. ``"full_attention"``), ``rope_theta``,
    ``partial_rotary_factor``, ``max_position_embeddings``, ``original_max_position_embeddings`` at the top
    level, and the head width ``head_dim``, else ``hidden_size // num_attention_heads`` (for Gemma 4's
    ``"full_attention"`` layers ``global_head_dim``; for DeepSeek-V2/V3 ``qk_rope_head_dim``, the rotated part
    of each head, as their config classes set ``head_dim``). A multimodal config with the language model under
    ``text_config`` (Llama 4, Qwen2-VL, Qwen3-VL, Gemma 4) is read there. Values inside the dict win over
    the top level, except ``original_max_position_embeddings``, as in transformers. Only what the file
    says is read: a model's config class can add defaults the file leaves out (``Phi3Config`` an
    ``original_max_position_embeddings`` of 4096, ``Qwen3VLTextConfig`` a ``rope_theta`` of 500000), which
    this function, knowing no model classes, takes as absent (pe_lib's base default is 10000). One family is
    read as its config class reads it: a Gemma 3 text config (``model_type`` ``"gemma3_text"`` or
    ``"gemma3n_text"``, or any config with ``rope_local_base_freq``) has one dict per layer type even in the
    files released before transformers 5, which give a flat ``rope_scaling`` (applied to the full-attention
    layers only, with base ``rope_theta``, default 1000000) and ``rope_local_base_freq`` (the sliding layers'
    base, default 10000, unscaled): pass ``layer_type``. ``seq_len``
    and ``strict`` as in :func:`rope_scaling_frequencies`. Returns the same ``(inv_freq, attention_factor)``.
    """
    if not isinstance(config, Mapping):
        raise TypeError(f"config must be a dict (a config.json read with json.load), got {type(config).__name__}")
    config = _text_config(config)
    if config.get("model_type") in GEMMA3_THETAS or "rope_local_base_freq" in config:
        rope = _gemma3_rope_parameters(config)
    else:
        rope = config.get("rope_scaling") or config.get("rope_parameters")
    layer_types = set(config.get("layer_types") or ()) | {"full_attention", "sliding_attention"}
    nested = isinstance(rope, Mapping) and rope and all(k in layer_types for k in rope)
    if nested:
        if layer_type not in rope:
            raise ValueError(f"this config has one rope dict per layer type, {sorted(rope)}: pass layer_type= "
                             f"one of them, got {layer_type!r}")
        rope = rope[layer_type]
    elif layer_type is not None:
        raise ValueError(f"layer_type={layer_type!r} given, but this config has one rope dict for all layers")
    if rope is not None and not isinstance(rope, Mapping):
        raise TypeError(f"the config's rope_scaling must be a dict or null, got {type(rope).__name__}")
    head_key = "global_head_dim" if layer_type == "full_attention" and "global_head_dim" in config else "head_dim"
    head_dim = config.get("qk_rope_head_dim") or config.get(head_key)  # DeepSeek: the rotated part of a head
    if not head_dim:
        if "hidden_size" not in config or "num_attention_heads" not in config:
            raise ValueError("the config needs head_dim, or hidden_size and num_attention_heads")
        head_dim = check_positive_int(config["hidden_size"], name="hidden_size") // check_positive_int(
            config["num_attention_heads"], name="num_attention_heads")
    rope = dict(rope or {})
    top_theta = config.get("rope_theta")
    if top_theta is not None:
        rope.setdefault("rope_theta", top_theta)  # the dict's own wins, as in convert_rope_params_to_dict
    top_fraction = config.get("partial_rotary_factor")
    if top_fraction is not None:
        rope.setdefault("partial_rotary_factor", top_fraction)
    if not rope.keys() - {"rope_theta", "partial_rotary_factor"}:
        rope["rope_type"] = "default"
    return rope_scaling_frequencies(head_dim, rope, max_position_embeddings=config.get("max_position_embeddings"),
                                    seq_len=seq_len,
                                    original_max_position_embeddings=config.get("original_max_position_embeddings"),
                                    strict=strict)
