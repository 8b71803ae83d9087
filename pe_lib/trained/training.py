r"""Train the small Transformer of :mod:`pe_lib.transformer` on a task of :mod:`pe_lib.tasks` (JAX + optax, CPU).

Usage::

    model = pe_lib.train_transformer("lookback", "sinusoidal", seq_len=32, steps=1000, seed=0)
    model.losses                           # (steps,) numpy: the training loss of every step
    pe_lib.task_accuracy(model, 64)        # fraction of targets right on fresh sequences of 64 tokens
    models = pe_lib.train_transformers("lookback", "rope", seeds=(0, 1, 2))   # one vmapped run

Every step draws a fresh batch (numpy, from ``seed``) and takes one Adam step on the mean
cross-entropy of the targets that count; the steps run inside ``jax.lax.scan`` in chunks, and
between chunks a Jupyter kernel shows the progress in place. The same arguments give bit-identical
losses and parameters on the same machine. JAX is imported on the first call, not by ``import pe_lib``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import os
import platform

import numpy as np

from .._validate import check_choice, check_d_model, check_finite_real, check_positive_int
from ..book._progress import Progress
from .tasks import DEFAULT_OFFSET, DEFAULT_VOCAB_SIZE, check_task, is_causal, task_batch

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
# schemes that differ from layer to layer (pe_lib.trained.transformer.LAYERED: NoPE layers, windows, p-RoPE)
LAYERED = ("rope+nope", "swa-rope+nope", "chunked-rope+nope", "p-rope")
ROTATING = ("rope", *LAYERED)  # the encodings that rotate queries and keys
# std of a learned position table at initialisation: the RMS of one sinusoidal component,
# sqrt(mean(sin^2)) = 1/sqrt(2), so that a learned table starts at the scale of the sinusoids
LEARNED_INIT_STD = math.sqrt(0.5)
DEFAULTS = dict(seq_len=32, steps=1000, d_model=32, n_layers=2, n_heads=1, batch_size=16,
                learning_rate=3e-3, vocab_size=DEFAULT_VOCAB_SIZE, offset=DEFAULT_OFFSET,
                learned_init_std=LEARNED_INIT_STD)
# steps per lax.scan call, whatever the length of the run: every run of the same sizes reuses one
# compiled chunk (a chunk length that followed ``steps`` compiled again for each new length), and
# between chunks a Jupyter kernel shows the progress. A shorter run is one chunk of its own length.
CHUNK_STEPS = 100
EVAL_SEED = 12345  # task_accuracy's default: sequences no training batch drew (the test sequences)
VALIDATION_SEED = 54321  # the sequences settings are chosen on: neither training nor test draws them
# XLA's CPU backend at LLVM optimisation level 1 instead of 2 compiles the training step about a
# quarter faster and runs it as fast (measured on the default run, bit-identical losses).
# On x86 the code XLA generates is capped at AVX2, the instruction set of the machine the chapters
# were executed on, so that a CPU with AVX-512 does not get wider vector code (training is chaotic
# where it does not converge: a last-bit difference moves those accuracies by tenths of a point).
# Measured: code capped at SSE4.2 gives the same bits as AVX2 here. This is a guard, not a proof:
# library kernels that XLA calls may still choose per CPU. Other architectures keep XLA's default.
# Measured since (jax 0.10.2): they do. XLA hands dots and reductions to YNNPACK ("__ynn_fusion"),
# whose kernels are picked at run time from the processor, past this cap. On an AMD EPYC (Zen 4)
# chapter 19's models (L = 32) train other last bits than on the Intel machine that stored them, and
# nine of its outputs moved by a tenth of a point; at L = 16 (chapters 14-16) the bits agree. With
# xla_cpu_experimental_ynn_fusion_type="" XLA compiles those ops itself, and the bits are the same
# under the caps SSE4_2, AVX2 and AVX512 (three configurations at L = 16 and 32), at a cost of about
# 10% (d_model 64, L 128: 30.2 -> 33.2 ms) to 23% (d_model 32, L 16: 0.84 -> 1.03 ms) per step. Not
# switched off yet: it changes every trained bit, so every stored run of make experiments would have to
# be trained again.
X86_MAX_ISA = "AVX2"


def _compiler_options(machine: str) -> dict:
    """The XLA options of every compiled function on a CPU whose ``platform.machine()`` is ``machine``."""
    options = {"xla_backend_optimization_level": 1}
    if machine.lower() in ("x86_64", "amd64"):
        options["xla_cpu_max_isa"] = X86_MAX_ISA
    return options


COMPILER_OPTIONS = _compiler_options(platform.machine())
# Compiled steps are kept on disk (JAX's persistent compilation cache) and reused by the next
# process with the same sizes: tests, notebooks and nbval then compile once per machine. The
# cached program is the one a fresh compilation builds, so results do not depend on it.
# PE_LIB_JAX_CACHE=<folder> moves the cache, PE_LIB_JAX_CACHE= (empty) turns it off; a cache
# folder configured for JAX itself is left alone.
CACHE_ENV = "PE_LIB_JAX_CACHE"


def _default_cache() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pe_lib", "jax")


def _cache_folder(setting: str | None, configured: str | None) -> str | None:
    """The folder for JAX's compilation cache, or ``None`` to leave JAX's setting alone: ``setting`` is
    the value of ``PE_LIB_JAX_CACHE`` (``None`` if unset), ``configured`` the folder JAX already has."""
    if configured:
        return None
    folder = _default_cache() if setting is None else setting
    return folder or None


@functools.lru_cache(maxsize=1)
def _jax():
    """Import JAX (on first use only: ``import pe_lib`` stays light) and switch on the compilation cache."""
    import jax

    folder = _cache_folder(os.environ.get(CACHE_ENV), jax.config.jax_compilation_cache_dir)
    if folder:
        jax.config.update("jax_compilation_cache_dir", folder)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    return jax


@dataclasses.dataclass(frozen=True)
class TransformerConfig:
    """Everything that defines a training run (hashable: it keys the cache of compiled functions)."""

    task: str
    encoding: str
    seq_len: int
    steps: int
    seed: int
    d_model: int
    n_layers: int
    n_heads: int
    batch_size: int
    learning_rate: float
    vocab_size: int
    offset: int
    learned_init_std: float = LEARNED_INIT_STD
    rope_scaling: tuple = ()  # the items of a rope_scaling dict applied to RoPE (PI, YaRN: chapter 21); () for none

    @property
    def causal(self) -> bool:
        return is_causal(self.task)


@dataclasses.dataclass(frozen=True, eq=False)
class TrainedTransformer:
    """A trained model: its config, its parameters (numpy pytree), those at initialisation and the losses.

    ``task``, ``encoding``, ``seq_len`` (the training length) and ``losses`` (``(steps,)`` numpy)
    are the public contract; ``params`` / ``initial_params`` are dicts of numpy arrays laid out as
    in :mod:`pe_lib.transformer` (every model has a table ``pos``; only ``"learned"`` uses and trains it).
    """

    config: TransformerConfig
    params: dict
    initial_params: dict
    losses: np.ndarray

    @property
    def task(self) -> str:
        return self.config.task

    @property
    def encoding(self) -> str:
        return self.config.encoding

    @property
    def seq_len(self) -> int:
        return self.config.seq_len

    def initial(self) -> TrainedTransformer:
        """The same model with its parameters at initialisation (before the first step)."""
        return dataclasses.replace(self, params=self.initial_params)


def _config(task, encoding, *, seq_len, steps, seed, d_model, n_layers, n_heads, batch_size, learning_rate,
            vocab_size, offset, learned_init_std=LEARNED_INIT_STD) -> TransformerConfig:
    task = check_task(task)
    encoding = check_choice(encoding, ENCODINGS + LAYERED, name="encoding")
    seq_len = check_positive_int(seq_len, name="seq_len", minimum=2)
    d_model = check_d_model(d_model)
    n_heads = check_positive_int(n_heads, name="n_heads")
    if d_model % n_heads:
        raise ValueError(f"n_heads must divide d_model, got d_model={d_model} and n_heads={n_heads}")
    if encoding in ROTATING and (d_model // n_heads) % 2:
        raise ValueError(f"{encoding} rotates pairs: d_model / n_heads must be even, got {d_model} / {n_heads}")
    if encoding in LAYERED and encoding != "p-rope" and n_layers < 4:
        raise ValueError(f"{encoding!r} leaves every fourth layer without positions, so it needs n_layers >= 4, "
                         f"got n_layers={n_layers}")
    if encoding in LAYERED and not is_causal(task):
        raise ValueError(f"{encoding!r} copies causal decoders: it needs a causal task, got {task!r}")
    learning_rate = check_finite_real(learning_rate, name="learning_rate")
    if learning_rate <= 0:
        raise ValueError(f"learning_rate must be > 0, got {learning_rate}")
    offset = check_positive_int(offset, name="offset")
    learned_init_std = check_finite_real(learned_init_std, name="learned_init_std")
    if learned_init_std < 0:
        raise ValueError(f"learned_init_std must be >= 0, got {learned_init_std}")
    if task == "text":  # tokens are ASCII codes (pe_lib.trained.corpus), whatever vocab_size says
        from .corpus import TEXT_VOCAB_SIZE as vocab_size
    if task == "lookback" and offset >= seq_len:
        raise ValueError(f"lookback with offset k={offset} needs seq_len > k, got seq_len={seq_len}")
    return TransformerConfig(
        task=task, encoding=encoding, seq_len=seq_len, steps=check_positive_int(steps, name="steps"),
        seed=check_positive_int(seed, name="seed", minimum=0), d_model=d_model,
        n_layers=check_positive_int(n_layers, name="n_layers"), n_heads=n_heads,
        batch_size=check_positive_int(batch_size, name="batch_size"), learning_rate=learning_rate,
        vocab_size=check_positive_int(vocab_size, name="vocab_size", minimum=2), offset=offset,
        learned_init_std=learned_init_std,
    )


def _init(config: TransformerConfig, seed: int) -> dict:
    from . import transformer as tf

    return tf.init_params(seed, vocab_size=config.vocab_size, d_model=config.d_model, n_layers=config.n_layers,
                          n_heads=config.n_heads, max_len=config.seq_len, learned_init_std=config.learned_init_std)


def _inputs(config: TransformerConfig, seq_len: int, max_offset: int | None = None) -> dict:
    """The position scheme of ``config`` as data for ``seq_len`` tokens, with the keys more than
    ``max_offset`` places from the query masked out if it is given.

    See :func:`pe_lib.trained.transformer.position_inputs` and :func:`pe_lib.trained.transformer.limit_offsets`.
    """
    from . import transformer as tf

    scaling = {}
    if config.rope_scaling:  # PI, YaRN...: the frequencies and attention factor transformers computes
        from ..modern.rope_scaling import rope_scaling_frequencies

        inv_freq, factor = rope_scaling_frequencies(config.d_model // config.n_heads, dict(config.rope_scaling),
                                                    base=tf.ROPE_BASE, max_position_embeddings=config.seq_len)
        scaling = {"inv_freq": inv_freq, "attention_factor": factor}
    inputs = tf.position_inputs(config.encoding, seq_len, d_model=config.d_model, n_heads=config.n_heads,
                                causal=config.causal, max_len=config.seq_len,
                                **({"n_layers": config.n_layers} if config.encoding in LAYERED else {}), **scaling)
    if max_offset is not None:
        inputs["bias"] = tf.limit_offsets(inputs["bias"], max_offset)
    return inputs


def _shared(config: TransformerConfig) -> TransformerConfig:
    """What a compiled step depends on: the sizes and whether the encoding is T5's (the others skip its trained
    bias, :func:`pe_lib.trained.transformer.forward`), not the task, encoding, seed, learning rate, initial
    scale of the learned table or number of steps (those enter as data)."""
    return dataclasses.replace(config, task="reverse", encoding="t5" if config.encoding == "t5" else "none", seed=0,
                               steps=1, offset=1, learning_rate=1.0, learned_init_std=1.0, rope_scaling=())


@functools.lru_cache(maxsize=32)
def _compiled(config: TransformerConfig):
    """``(start, run_chunk)`` for the sizes of ``config`` (see :func:`_shared`): the parameters
    travel as one flat vector (one Adam update instead of one per array: far less to compile),
    vmapped over seeds."""
    import optax

    from . import transformer as tf

    jax = _jax()

    optimizer = optax.scale_by_adam()  # Adam's m_hat / (sqrt(v_hat) + eps); the learning rate is data
    template = _init(config, 0)

    def unravel(theta):  # the parameter dict from the flat vector (traced inside jit): _unflatten in JAX
        leaves, tree = jax.tree_util.tree_flatten(template)
        ends = np.cumsum([leaf.size for leaf in leaves])
        parts = jax.numpy.split(theta, ends[:-1])
        arrays = [part.reshape(leaf.shape) for part, leaf in zip(parts, leaves, strict=True)]
        return jax.tree_util.tree_unflatten(tree, arrays)

    def loss_of_vector(theta, tokens, targets, counts, inputs):
        return tf.loss_fn(unravel(theta), tokens, targets, counts, inputs, relative=config.encoding == "t5")

    def run_chunk(carry, learning_rate, tokens, targets, counts, active, inputs):
        def step(carry, batch):
            theta, opt_state = carry
            tokens, targets, active = batch
            loss, grad = jax.value_and_grad(loss_of_vector)(theta, tokens, targets, counts, inputs)
            direction, new_state = optimizer.update(grad, opt_state, theta)
            new_theta = theta + (-learning_rate) * direction  # Adam: theta <- theta - lr m_hat / (sqrt(v_hat) + eps)
            keep = functools.partial(jax.tree_util.tree_map, lambda new, old: jax.numpy.where(active, new, old))
            return (keep(new_theta, theta), keep(new_state, opt_state)), loss  # padding steps change nothing

        return jax.lax.scan(step, carry, (tokens, targets, active))

    start = jax.jit(jax.vmap(lambda theta: (theta, optimizer.init(theta))))
    return start, jax.jit(jax.vmap(run_chunk, in_axes=(0, 0, 0, 0, None, None, None)),
                                   compiler_options=COMPILER_OPTIONS)


def _flatten(params: dict) -> np.ndarray:
    """All parameters as one float32 vector (numpy: no JAX operation to compile), leaves in the order of
    ``jax.tree_util.tree_leaves``."""
    return np.concatenate([np.ravel(leaf) for leaf in _jax().tree_util.tree_leaves(params)]).astype(np.float32)


def _unflatten(theta: np.ndarray, like: dict) -> dict:
    """The inverse of :func:`_flatten`: ``theta`` cut into arrays shaped as those of ``like``."""
    leaves, tree = _jax().tree_util.tree_flatten(like)
    ends = np.cumsum([leaf.size for leaf in leaves])
    parts = np.split(np.asarray(theta), ends[:-1])
    return _jax().tree_util.tree_unflatten(tree, [p.reshape(leaf.shape) for p, leaf in zip(parts, leaves, strict=True)])


def _nudged(params: dict, ulps: int) -> dict:
    """Every weight moved up by ``ulps`` float32 units in the last place (``numpy.nextafter`` towards +inf)."""
    theta = _flatten(params)  # (n_params,) float32
    for _ in range(ulps):
        theta = np.nextafter(theta, np.float32(np.inf))
    return _unflatten(theta, params)


def _train(config: TransformerConfig, seeds: tuple[int, ...], progress, nudge: int = 0,
           learning_rates: tuple[float, ...] | None = None, checkpoints: tuple[int, ...] | None = None,
           initial: dict | None = None):
    """Train one model per (learning rate, seed) in a single vmapped run; keep the parameters after each
    number of steps in ``checkpoints`` (multiples of the chunk length, the last one ``config.steps``).
    ``initial``: ``{seed: params}`` to start from instead of a fresh initialisation (to train a trained model
    further; the seed still draws the training data).
    Returns ``{(learning_rate, steps): [model per seed]}``; with the defaults, the list of ``config``'s models."""
    single = learning_rates is None
    learning_rates = (config.learning_rate,) if single else learning_rates
    checkpoints = (config.steps,) if checkpoints is None else checkpoints
    rows = [(lr, s) for lr in learning_rates for s in seeds]  # row r of the vmapped run
    start, run_chunk = _compiled(_shared(config))
    inputs = _inputs(config, config.seq_len)
    initial = {s: _init(config, s) for s in seeds} if initial is None else {s: initial[s] for s in seeds}
    if nudge:
        initial = {s: _nudged(p, nudge) for s, p in initial.items()}
    carry = start(np.stack([_flatten(initial[s]) for _, s in rows]))
    rates = np.array([lr for lr, _ in rows], np.float32)
    chunk = min(CHUNK_STEPS, config.steps)  # steps per lax.scan call
    n_chunks = math.ceil(config.steps / chunk)
    rngs = [np.random.default_rng([s, 0]) for s in seeds]  # the training data of each seed
    losses, kept = [], {}
    label = (f"training a Transformer: task {config.task}, encoding {config.encoding}, "
             f"{config.steps} steps" + (f", seeds {', '.join(map(str, seeds))}" if len(seeds) > 1 else "")
             + ("" if single else f", learning rates {', '.join(f'{lr:g}' for lr in learning_rates)}"))
    with Progress(label, config.steps, enabled=progress) as bar:
        for c in range(n_chunks):
            batches = [task_batch(config.task, chunk * config.batch_size, config.seq_len,
                                  vocab_size=config.vocab_size, offset=config.offset, seed=rng) for rng in rngs]
            shape = (len(seeds), chunk, config.batch_size, config.seq_len)
            tokens = np.stack([b[0] for b in batches]).reshape(shape)
            targets = np.stack([b[1] for b in batches]).reshape(shape)
            repeat = (len(learning_rates), 1, 1, 1)  # every learning rate sees its seed's batches
            tokens, targets = np.tile(tokens, repeat), np.tile(targets, repeat)
            counts = batches[0][2]
            active = c * chunk + np.arange(chunk) < config.steps  # the last chunk may be padded
            carry, loss = run_chunk(carry, rates, tokens, targets, counts, active, inputs)
            losses.append(np.asarray(loss)[:, active])
            done = min((c + 1) * chunk, config.steps)
            if done in checkpoints:
                kept[done] = np.asarray(carry[0])
            bar.update(done)
    losses = np.concatenate(losses, axis=1).astype(np.float64)
    out = {}
    for n, theta in kept.items():
        for r, (lr, s) in enumerate(rows):
            model = TrainedTransformer(
                config=dataclasses.replace(config, seed=s, learning_rate=lr, steps=n),
                params=_unflatten(theta[r], initial[s]), initial_params=initial[s], losses=losses[r, :n])
            out.setdefault((lr, n), []).append(model)
    return out[config.learning_rate, config.steps] if single else out


def _check_settings(settings: dict, function: str) -> dict:
    """The training settings of a call: :data:`DEFAULTS` updated by ``settings``; an unknown name raises."""
    unknown = sorted(set(settings) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"{function}() got unknown keyword argument(s) {', '.join(unknown)}; the settings are "
                        f"{', '.join(DEFAULTS)} (and seed(s), progress)")
    return DEFAULTS | settings


def _check_progress(progress) -> bool | None:
    if progress is not None and not isinstance(progress, bool):
        raise ValueError(f"progress must be True, False or None (automatic), got {progress!r}")
    return progress


def _train_seeds(task, encoding, seeds: tuple[int, ...], settings: dict, progress, function: str, nudge=0):
    """What :func:`train_transformer` and :func:`train_transformers` share: check everything, train."""
    settings = _check_settings(settings, function)
    config = _config(task, encoding, seed=seeds[0], **settings)
    nudge = check_positive_int(nudge, name="nudge", minimum=0)
    return _train(config, seeds, _check_progress(progress), nudge)


def train_grid(task, encoding, *, seeds=(0, 1, 2), learning_rates=(3e-3, 1e-2), steps=(500, 1000),
               progress: bool | None = None, **settings) -> dict:
    """Train every (learning rate, number of steps) of a small grid, one model per seed, in one vmapped run.

    Adam has no schedule here, so the model after ``n`` steps of a longer run *is* the model of an
    ``n``-step run: each number of steps in ``steps`` (multiples of :data:`CHUNK_STEPS`, 100) is a snapshot
    of the longest run.
    Returns ``{(learning_rate, n_steps): tuple of TrainedTransformer, one per seed}``; each model equals
    ``train_transformers(task, encoding, seeds=seeds, learning_rate=..., steps=..., **settings)`` up to
    float32 rounding. Other settings as :func:`train_transformer`.
    """
    seeds = _check_seeds(seeds)
    learning_rates = _check_values(learning_rates, "learning_rates", check_finite_real)
    if any(lr <= 0 for lr in learning_rates):
        raise ValueError(f"learning_rates must all be > 0, got {learning_rates}")
    steps = _check_values(steps, "steps", lambda v, name: check_positive_int(v, name=name))
    if any(n % CHUNK_STEPS for n in steps):
        raise ValueError(f"steps must be multiples of {CHUNK_STEPS} (snapshots between compiled chunks), got {steps}")
    if "steps" in settings or "learning_rate" in settings:
        raise TypeError("train_grid() takes learning_rates= and steps= as grids, not learning_rate= or steps=")
    settings = _check_settings(settings, "train_grid")
    longest = dict(steps=max(steps), learning_rate=learning_rates[0])
    config = _config(task, encoding, seed=seeds[0], **(settings | longest))
    out = _train(config, seeds, _check_progress(progress), learning_rates=learning_rates, checkpoints=steps)
    return {key: tuple(models) for key, models in sorted(out.items())}


def _check_values(values, name, check) -> tuple:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of numbers, got {values!r}")
    values = tuple(check(v, name=name) for v in values)
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat a value, got {values}")
    return values


def _check_seeds(seeds) -> tuple[int, ...]:
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__") or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty sequence of integers >= 0, got {seeds!r}")
    return tuple(check_positive_int(s, name="seed", minimum=0) for s in seeds)


_SETTINGS_DOC = ", ".join(f"``{name}={value!r}``" for name, value in DEFAULTS.items())


def train_transformer(task, encoding, *, seed: int = 0, progress: bool | None = None, **settings) -> TrainedTransformer:
    r"""Train a Transformer with position scheme ``encoding`` on ``task`` and return it.

    ``task``: ``"lookback"`` (causal; target :math:`y_i = x_{i-k}`, ``k = offset``) or ``"reverse"``
    (bidirectional; :math:`y_i = x_{L-1-i}`), see :mod:`pe_lib.tasks`. ``encoding``: ``"none"``,
    ``"sinusoidal"``, ``"learned"`` (a table of ``seq_len`` rows, drawn :math:`\mathcal N(0, s^2)` with
    ``s = learned_init_std``, by default the RMS :math:`1/\sqrt 2` of a sinusoidal component),
    ``"rope"``, ``"alibi"`` or ``"t5"`` (T5's trainable bias per head and relative-position bucket,
    :func:`pe_lib.t5_relative_bucket` with 32 buckets up to distance 128, shared by the layers, starting at 0).

    ``settings``, keyword arguments with these defaults (:data:`DEFAULTS`): SETTINGS.
    ``steps`` Adam steps (``learning_rate``) on batches of ``batch_size`` fresh sequences of
    ``seq_len`` tokens, a model of ``n_layers`` blocks of ``n_heads`` heads and width ``d_model``;
    the parameters are initialised from ``numpy.random.default_rng([seed, 1])`` and the data drawn
    from ``numpy.random.default_rng([seed, 0])``. ``progress``: show progress in a Jupyter kernel
    (``None``: when running in one). Returns a :class:`TrainedTransformer`; an unknown setting
    raises ``TypeError``, a bad value ``ValueError``.

    The defaults were chosen by measurement (seed 0, 2 cores): sinusoidal reaches 100% on lookback
    at the training length and RoPE keeps 100% at twice it. One head of width 32 is what RoPE needs
    to reach past the training length (with heads of width 8 it keeps about 70% at twice the length);
    ALiBi needs several heads instead: its slopes are :math:`2^{-8h/H}`, so a single head has slope
    1/256 and barely sees position. ``n_heads=8, d_model=64`` gives ALiBi about 86% on lookback after
    1000 steps and 95% after 2000, at 1x, 2x and 4x the training length alike.
    """
    seed = check_positive_int(seed, name="seed", minimum=0)
    return _train_seeds(task, encoding, (seed,), settings, progress, "train_transformer")[0]


def _show_settings(function):
    """Give ``function`` (``..., **settings``) the signature that lists the settings by name with their
    defaults, as ``help()`` and Jupyter's completion show it; the checks stay in :func:`_check_settings`."""
    signature = inspect.signature(function)
    kept = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    named = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=value) for name, value in DEFAULTS.items()]
    function.__signature__ = signature.replace(parameters=kept + named)
    return function


train_transformer.__doc__ = train_transformer.__doc__.replace("SETTINGS", _SETTINGS_DOC)
_show_settings(train_transformer)


def train_transformers(task, encoding, *, seeds=(0, 1, 2), progress: bool | None = None, nudge: int = 0,
                       **settings) -> tuple[TrainedTransformer, ...]:
    """Train one model per seed in ``seeds`` in a single ``jax.vmap``-ed run (cheaper than a loop).

    The settings as :func:`train_transformer`. The models match separate runs with the same seeds up to
    float32 rounding (a vmapped matrix product may sum in another order). ``nudge`` (an integer >= 0):
    move every initial weight up by that many float32 units in the last place before training — the
    size of the differences another CPU or library version can make, to see how much a result depends
    on them (chapter 14). Returns a tuple of :class:`TrainedTransformer`, one per seed, in order.
    """
    seeds = _check_seeds(seeds)
    return tuple(_train_seeds(task, encoding, seeds, settings, progress, "train_transformers", nudge))


_show_settings(train_transformers)


def check_model(model) -> TrainedTransformer:
    """Return ``model`` if it is a :class:`TrainedTransformer`, else raise."""
    if not isinstance(model, TrainedTransformer):
        raise ValueError(
            f"model must be a TrainedTransformer from pe_lib.train_transformer, got {type(model).__name__}"
        )
    return model


def check_length(model: TrainedTransformer, seq_len) -> int:
    """Return ``seq_len`` if the model can represent sequences that long, else raise ``ValueError``."""
    seq_len = check_positive_int(seq_len, name="seq_len")
    config = model.config
    if config.encoding == "learned" and seq_len > config.seq_len:
        raise ValueError(
            f"a learned position table has one row per training position: this model knows positions "
            f"0..{config.seq_len - 1}, so seq_len must be <= {config.seq_len}, got {seq_len}"
        )
    if config.task == "lookback" and seq_len <= config.offset:
        raise ValueError(f"lookback with offset k={config.offset} needs seq_len > k, got seq_len={seq_len}")
    return seq_len


@functools.lru_cache(maxsize=4)
def _forward(collect: bool, scores: bool = False):
    from . import transformer as tf

    return _jax().jit(functools.partial(tf.forward, collect=collect, scores=scores), compiler_options=COMPILER_OPTIONS)


def _check_max_offset(max_offset) -> int | None:
    return None if max_offset is None else check_positive_int(max_offset, name="max_offset", minimum=0)


def run_model(model: TrainedTransformer, tokens, *, collect: bool = False, scores: bool = False,
              max_offset: int | None = None):
    """Apply ``model`` to integer ``tokens`` ``(B, L)``; numpy logits ``(B, L, V)`` (and, with
    ``collect``, the residual stream and attention weights, see :func:`pe_lib.trained.transformer.forward`;
    with ``scores`` too, the scores before the softmax instead of the weights). ``max_offset``: every
    query sees only the keys at most that many places away (:func:`pe_lib.trained.transformer.limit_offsets`)."""
    tokens = np.asarray(tokens, dtype=np.int32)
    inputs = _inputs(model.config, tokens.shape[-1], _check_max_offset(max_offset))
    out = _forward(collect, scores)(model.params, tokens, inputs)
    return tuple(np.asarray(o) for o in out) if collect else np.asarray(out)


def _evaluate(model, seq_len, n_sequences, seed, max_offset):
    """Logits, targets and the scored positions of ``n_sequences`` fresh sequences (see :func:`task_accuracy`)."""
    model = check_model(model)
    seq_len = check_length(model, seq_len)
    n_sequences = check_positive_int(n_sequences, name="n_sequences")
    seed = check_positive_int(seed, name="seed", minimum=0)
    config = model.config
    tokens, targets, counts = task_batch(config.task, n_sequences, seq_len, vocab_size=config.vocab_size,
                                         offset=config.offset, seed=[seed, 1])
    return run_model(model, tokens, max_offset=max_offset), targets[:, counts], counts


def task_accuracy(model, seq_len, *, n_sequences: int = 256, seed=EVAL_SEED, max_offset: int | None = None) -> float:
    r"""Fraction of the targets that count predicted correctly (argmax of the logits) on
    ``n_sequences`` fresh sequences of ``seq_len`` tokens, which may differ from the training length.

    The sequences come from ``numpy.random.default_rng([seed, 1])``, a stream no training run draws;
    the default ``seed`` gives the test sequences, :data:`VALIDATION_SEED` the validation sequences.
    ``max_offset``: each query sees only keys at most that many places away (an intervention, see
    :func:`run_model`). Returns a float in [0, 1].
    """
    logits, targets, counts = _evaluate(model, seq_len, n_sequences, seed, max_offset)
    predicted = logits.argmax(axis=-1)[:, counts]  # (B, scored positions)
    return float(np.mean(predicted == targets))
