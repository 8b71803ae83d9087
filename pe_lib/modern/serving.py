r"""A ``rope_scaling`` entry of a model config, said in the words of two serving engines.

Transformers reads ``rope_scaling`` (``rope_parameters`` in transformers 5) from ``config.json``;
:func:`pe_lib.rope_scaling_frequencies` computes what it asks for. Serving engines take the same
request in their own words, and not every type has them:

* **vLLM** reads the config itself; a different scaling is passed as
  ``--hf-overrides '{"rope_parameters": {...}}'`` (the older ``--rope-scaling`` flag is gone).
  ``--max-model-len`` is optional: vLLM derives the longest sequence from the config, the
  smallest of its length keys (``max_position_embeddings`` ...) times ``factor`` (YaRN:
  ``original_max_position_embeddings`` times ``factor``; ``"llama3"`` and ``"longrope"``: not
  multiplied), and refuses a longer ``--max-model-len`` unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN=1``
  (``_get_and_verify_max_len`` in ``vllm/config/model.py``, commit 0052a5b8;
  :func:`vllm_max_model_len`). Its ``"dynamic"`` is one table for all inputs, not per input (vLLM
  issues #3488 and #5093): up to commit 50feac95 with the base transformers' ``"dynamic"`` reaches at
  ``factor`` times the length; since PR #41277 (issue #41236, commit 3cfbaf33 read here) with the
  base unscaled, which is plain RoPE run past its training length (:func:`vllm_dynamic_frequencies`).
  Its YaRN is static (``YaRNScalingRotaryEmbedding`` builds one table when the model loads, commit
  ffdc9857), as transformers' is: of transformers' types only ``"dynamic"`` and ``"longrope"`` depend
  on the input's length.
* **llama.cpp** takes ``--rope-scaling {none,linear,yarn}``, ``--rope-scale`` :math:`s` (the same as
  ``--rope-freq-scale`` :math:`1/s`), ``--rope-freq-base``, ``--yarn-orig-ctx``, ``--yarn-beta-fast``,
  ``--yarn-beta-slow`` and ``-c`` (context size) (``tools/server/README.md`` at commit 25d5b0c5). Its kernel turns pair
  :math:`i` at position :math:`p` by :math:`\theta = \text{freq\_scale}\cdot p\,\mathrm{base}^{-2i/d}`
  (ggml's ``rope_yarn`` in ``ggml/src/ggml-cpu/ops.cpp`` at commit 1f08e2d6,
  which blends in the unscaled angle on YaRN's ramp): linear scaling is the
  same frequency :math:`\omega_i/s` as transformers'. It has no length-dependent ``"dynamic"``, and
  ``"llama3"`` and ``"longrope"`` have no flags: their per-pair factors are written into the GGUF
  file when the checkpoint is converted (``convert_hf_to_gguf.py`` at commit a458664f).

Reading a real ``config.json`` (top-level ``original_max_position_embeddings``, Llama 4's and
M-RoPE's keys) is :func:`pe_lib.rope_scaling_frequencies`' job; :func:`serving_settings` takes the
dict it accepts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from .._validate import check_base, check_d_model, check_finite_real, check_positive_int
from ..encodings.frequencies import frequencies
from .rope_scaling import rope_scaling_frequencies


def llama_cpp_frequencies(head_dim: int, *, freq_base: float = 10_000.0, freq_scale: float = 1.0) -> np.ndarray:
    r"""The frequencies llama.cpp turns pairs by without YaRN: :math:`\text{freq\_scale}\cdot\mathrm{base}^{-2i/d}`.

    ``head_dim``: the rotary dimension ``d`` (even). ``freq_base``: ``--rope-freq-base``. ``freq_scale``:
    ``--rope-freq-scale``, i.e. ``1 / --rope-scale``, in (0, 1]. Returns ``(d/2,)`` float64.
    Source: ggml's ``rope_yarn`` (``theta_interp = freq_scale * theta_extrap``; llama.cpp commit 1f08e2d6).
    """
    d = check_d_model(head_dim, name="head_dim")
    scale = check_finite_real(freq_scale, name="freq_scale")
    if not 0.0 < scale <= 1.0:
        raise ValueError(f"freq_scale is 1/(context growth) and must be in (0, 1], got {scale!r}")
    return scale * frequencies(d, base=check_base(freq_base, name="freq_base"))


VLLM_DYNAMIC_COMMITS = {"before PR 41277": "50feac95f9e53a97d6ed27fee6bfe3b163d18594",
                        "after PR 41277": "3cfbaf333d800badc12fad1f138ab01178d35ab8"}


def vllm_dynamic_frequencies(head_dim: int, factor: float, *, base: float = 10_000.0,
                             max_position_embeddings: int, before_fix: bool = False) -> tuple[np.ndarray, int]:
    r"""The one table vLLM builds for ``{"rope_type": "dynamic", "factor": s}``: its frequencies and its length.

    vLLM's ``DynamicNTKScalingRotaryEmbedding`` makes :math:`\ell = s L` positions (:math:`L` =
    ``max_position_embeddings``) with the base
    :math:`b' = b\,(k\,\ell/L - (s - 1))^{d/(d-2)}`, :math:`k = s` before PR #41277 (commit 50feac95:
    :math:`b' = b\,(s^2 - s + 1)^{d/(d-2)}`, transformers' ``"dynamic"`` base at :math:`s L`) and
    :math:`k = 1` after it (commit 3cfbaf33: :math:`b' = b`, no scaling at all). ``head_dim``: the rotary
    dimension :math:`d` (even, >= 4). ``factor``: :math:`s \ge 1`. Returns
    ``(omega, table_length)``: :math:`\omega_i = b'^{-2i/d}`, shape ``(d/2,)``, and :math:`\ell` (int).
    Source: ``vllm/model_executor/layers/rotary_embedding/dynamic_ntk_scaling_rope.py`` at those commits
    (:data:`VLLM_DYNAMIC_COMMITS`).
    """
    d = check_d_model(head_dim, name="head_dim")
    if d < 4:
        raise ValueError(f"head_dim must be at least 4 (the exponent is d/(d-2)), got {d}")
    s = check_finite_real(factor, name="factor")
    if s < 1.0:
        raise ValueError(f"factor must be >= 1 (how many times longer the context gets), got {s!r}")
    length = check_positive_int(max_position_embeddings, name="max_position_embeddings")
    if not isinstance(before_fix, bool):
        raise ValueError(f"before_fix must be True (vLLM up to 50feac95) or False (since PR 41277), "
                         f"got {before_fix!r}")
    table = length * s  # max_len = max_position_embeddings * scaling_factor
    k = s if before_fix else 1.0
    scaled = check_base(base) * (k * table / length - (s - 1.0)) ** (d / (d - 2))
    return frequencies(d, base=scaled), int(table)


def vllm_max_model_len(rope_scaling, *, max_position_embeddings: int) -> int:
    r"""The longest sequence vLLM accepts without ``--max-model-len``, derived from a config.

    :math:`L` = ``max_position_embeddings`` (the smallest length key of the config); times ``factor`` for
    every type but ``"llama3"`` and ``"longrope"``; YaRN starts from ``original_max_position_embeddings``
    instead; ``"longrope"`` defaults to ``original_max_position_embeddings`` (short inputs keep the
    short factors). ``rope_scaling``: ``None`` or a dict in transformers' format. Returns an int.
    Source: ``_get_and_verify_max_len`` in ``vllm/config/model.py`` (commit 0052a5b8), for a config
    with one length key and no tokenizer limit.
    """
    length = check_positive_int(max_position_embeddings, name="max_position_embeddings")
    if rope_scaling is not None and not isinstance(rope_scaling, Mapping):
        raise TypeError(f"rope_scaling must be None or a dict like {{'rope_type': 'yarn', 'factor': 4.0}}, "
                        f"got {type(rope_scaling).__name__}")
    params = dict(rope_scaling or {"rope_type": "default"})
    rope_type = params.get("rope_type", params.get("type"))
    if rope_type == "longrope":
        return int(params.get("original_max_position_embeddings", length))
    if rope_type in ("default", "llama3"):
        return length
    start = params["original_max_position_embeddings"] if rope_type == "yarn" else length
    return int(start * float(params.get("factor", 1.0)))


def _number(x: float) -> str:
    """A flag value as written on a command line: 4 not 4.0, 0.25 as is."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def serving_settings(rope_scaling, *, head_dim: int, base: float = 10_000.0,
                     max_position_embeddings: int | None = None) -> dict:
    r"""How to ask vLLM and llama.cpp for the scaling a ``rope_scaling`` dict describes.

    ``rope_scaling``: ``None`` or a dict in transformers' format (checked by
    :func:`pe_lib.rope_scaling_frequencies`, which also needs ``head_dim``, ``base`` and
    ``max_position_embeddings`` as there). The context to serve is ``original_max_position_embeddings``
    (else ``max_position_embeddings``) times ``factor``.

    Returns a dict: ``"context"`` (int or ``None`` if unknown), ``"vllm"`` and ``"llama.cpp"`` (lists of
    command-line arguments; ``[]`` when the defaults already do it; ``--max-model-len`` only where vLLM
    would derive another length, :func:`vllm_max_model_len`) and ``"missing"`` (sentences naming
    what an engine cannot be told, empty when both can say everything).
    """
    head_dim = check_positive_int(head_dim, name="head_dim")
    base = check_base(base)
    if rope_scaling is not None and not isinstance(rope_scaling, Mapping):
        raise TypeError(f"rope_scaling must be None or a dict like {{'rope_type': 'yarn', 'factor': 4.0}}, "
                        f"got {type(rope_scaling).__name__}")
    rope_scaling_frequencies(head_dim, rope_scaling, base=base, max_position_embeddings=max_position_embeddings)
    params = dict(rope_scaling or {"rope_type": "default"})
    rope_type = params.get("rope_type", params.get("type"))
    base = float(params.get("rope_theta", base))
    factor = float(params.get("factor", 1.0))
    original = params.get("original_max_position_embeddings", max_position_embeddings)
    if rope_type == "dynamic":
        original = max_position_embeddings  # transformers' "dynamic" scales against this one
    if rope_type in ("default", "llama3", "longrope"):  # their factor is not the ratio of lengths
        context = max_position_embeddings
    else:
        context = None if original is None else int(round(original * factor))
    missing: list[str] = []
    ctx = [] if context is None else ["-c", str(context)]
    if rope_type == "default":
        return {"context": context, "vllm": [], "llama.cpp": ["--rope-scaling", "none", "--rope-freq-base",
                                                               _number(base)] + ctx, "missing": []}
    kept = {k: v for k, v in params.items() if k not in ("type", "rope_type", "rope_theta")}
    overrides = {"rope_parameters": {"rope_type": rope_type, "rope_theta": base, **kept}}
    if rope_type == "linear":
        llama = ["--rope-scaling", "linear", "--rope-scale", _number(factor), "--rope-freq-base", _number(base)]
    elif rope_type == "yarn":
        llama = ["--rope-scaling", "yarn", "--rope-scale", _number(factor), "--rope-freq-base", _number(base),
                 "--yarn-orig-ctx", str(int(original))]  # rope_scaling_frequencies made sure there is one
        for key, flag in (("beta_fast", "--yarn-beta-fast"), ("beta_slow", "--yarn-beta-slow")):
            if params.get(key):
                llama += [flag, _number(check_finite_real(params[key], name=key))]
        unsaid = [k for k in ("attention_factor", "mscale", "mscale_all_dim", "truncate") if k in params]
        if unsaid:
            missing.append(f"llama.cpp: no flag for {', '.join(unsaid)} (its attention factor is 1 + 0.1 ln s, "
                           "times --yarn-attn-factor; the rest comes from the GGUF file)")
    elif rope_type == "dynamic":
        d = int(head_dim * float(params.get("partial_rotary_factor", 1.0)))
        static = base * (factor * factor - (factor - 1.0)) ** (d / (d - 2))  # dynamic's base at l = s L
        llama = ["--rope-scaling", "none", "--rope-freq-base", _number(round(static, 1))]
        # vLLM's own "dynamic" is plain RoPE since PR 41277: ask for the same fixed base as llama.cpp instead
        overrides = {"max_position_embeddings": context,  # 'dynamic' always has one (rope_scaling_frequencies)
                     "rope_parameters": {"rope_type": "default", "rope_theta": round(static, 1)}}
        missing.append("llama.cpp: no length-dependent scaling; the closest is a fixed --rope-freq-base, the "
                       "base 'dynamic' reaches at the longest length, used for every input")
        missing.append("vLLM: no length-dependent scaling either; its own 'dynamic' builds one table, since PR "
                       "41277 (commit 3cfbaf33) with the base unscaled, i.e. plain RoPE past the training length "
                       "(before it, commit 50feac95: the fixed base above); the override asks for that fixed base "
                       "on any version")
    else:  # llama3, longrope
        llama = []
        missing.append(f"llama.cpp: no flag for {rope_type!r}; its per-pair factors must be in the GGUF file "
                       "(written by convert_hf_to_gguf.py from config.json)")
    vllm = ["--hf-overrides", json.dumps(overrides, sort_keys=True)]
    if context is not None and max_position_embeddings is not None and rope_type != "dynamic" \
            and vllm_max_model_len(params, max_position_embeddings=max_position_embeddings) != context:
        vllm += ["--max-model-len", str(context)]  # only where vLLM would not derive this length itself
    return {"context": context, "vllm": vllm, "llama.cpp": llama + ctx, "missing": missing}
