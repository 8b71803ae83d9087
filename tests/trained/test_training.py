"""Training: the claims with tolerances, determinism, the analysis functions and every bad input.

The trained models are shared (module-scoped fixtures): two default runs and a few short ones.
"""

import dataclasses

import numpy as np
import pytest

import pe_lib
from pe_lib.book import _progress
from pe_lib.trained import training

pytest.importorskip("jax")

SHORT = dict(steps=13, d_model=16, n_layers=1, n_heads=2, batch_size=4, seq_len=8)


@pytest.fixture(scope="module")
def sinusoidal_lookback():
    return pe_lib.train_transformer("lookback", "sinusoidal", progress=False)  # the defaults


@pytest.fixture(scope="module")
def rope_lookback():
    return pe_lib.train_transformer("lookback", "rope", progress=False)


@pytest.fixture(scope="module")
def short_learned():
    return pe_lib.train_transformer("reverse", "learned", **SHORT)


def test_sinusoidal_learns_lookback(sinusoidal_lookback):
    """The claim of the chapters: at the training length the sinusoidal model is (nearly) perfect ..."""
    model = sinusoidal_lookback
    assert (model.task, model.encoding, model.seq_len) == ("lookback", "sinusoidal", 32)
    assert pe_lib.task_accuracy(model, model.seq_len) >= 0.99
    assert model.losses.shape == (1000,) and model.losses.dtype == np.float64
    assert model.losses[:10].mean() > 2.0 > 0.05 > model.losses[-10:].mean()  # ln 16 = 2.77 at the start


def test_rope_keeps_lookback_at_twice_the_length(rope_lookback, sinusoidal_lookback):
    """... and the relative scheme keeps it at twice the length, where the sinusoidal one does not."""
    assert pe_lib.task_accuracy(rope_lookback, 2 * rope_lookback.seq_len) >= 0.95
    assert pe_lib.task_accuracy(sinusoidal_lookback, 2 * sinusoidal_lookback.seq_len) < 0.9
    # the learned table that a RoPE model does not use is never trained (its gradient is 0)
    np.testing.assert_array_equal(rope_lookback.params["pos"], rope_lookback.initial_params["pos"])


def test_trained_head_attends_k_back(rope_lookback):
    tokens = pe_lib.task_batch("lookback", 4, 32, seed=9)[0]
    profile = pe_lib.attention_by_offset(pe_lib.trained_attention(rope_lookback, tokens))  # (N, B, H, L)
    assert profile.shape == (2, 4, 1, 32)
    assert np.argmax(profile.mean(axis=(1, 2)), axis=-1).tolist().count(3) >= 1  # some layer looks 3 back


def test_same_arguments_same_bits(short_learned):
    a = short_learned
    assert a.losses.shape == (13,)
    b = pe_lib.train_transformer("reverse", "learned", **SHORT)
    np.testing.assert_array_equal(a.losses, b.losses)
    for x, y in zip(a.params["blocks"][0].values(), b.params["blocks"][0].values(), strict=True):
        np.testing.assert_array_equal(x, y)
    c = pe_lib.train_transformer("reverse", "learned", **(SHORT | {"seed": 1}))
    assert not np.array_equal(a.losses, c.losses)


def test_vmapped_seeds_match_separate_runs(short_learned):
    models = pe_lib.train_transformers("reverse", "learned", seeds=(1, 0), **SHORT)
    assert [m.config.seed for m in models] == [1, 0]
    np.testing.assert_allclose(models[1].losses, short_learned.losses, rtol=1e-4)
    np.testing.assert_allclose(models[1].params["pos"], short_learned.params["pos"], rtol=1e-4, atol=1e-5)
    assert not np.allclose(models[0].losses, models[1].losses)


def test_nudge_moves_every_initial_weight_by_one_unit_in_the_last_place(short_learned):
    (nudged,) = pe_lib.train_transformers("reverse", "learned", seeds=(0,), nudge=1, **SHORT)
    a, b = (pe_lib.trained.training._flatten(m.initial_params) for m in (short_learned, nudged))  # float32 vectors
    assert np.all(b > a)
    # one step up in the float32 bit pattern: +1 for a positive number, -1 for a negative one
    step = b.view(np.int32).astype(np.int64) - a.view(np.int32).astype(np.int64)
    np.testing.assert_array_equal(step[a != 0], np.where(a[a != 0] > 0, 1, -1))
    assert not np.array_equal(nudged.losses, short_learned.losses)  # another run ...
    np.testing.assert_allclose(nudged.losses, short_learned.losses, rtol=1e-3)  # ... close at first
    (again,) = pe_lib.train_transformers("reverse", "learned", seeds=(0,), nudge=0, **SHORT)
    np.testing.assert_allclose(again.losses, short_learned.losses, rtol=1e-4)


@pytest.mark.parametrize("nudge", [-1, 1.5, True])
def test_bad_nudge(nudge):
    with pytest.raises((ValueError, TypeError), match="nudge"):
        pe_lib.train_transformers("reverse", "learned", seeds=(0,), nudge=nudge, **SHORT)


def test_initial_and_trained_parameters(short_learned):
    model = short_learned
    init = model.initial()
    assert init.params is model.initial_params and init.losses is model.losses
    assert not np.array_equal(model.params["pos"], init.params["pos"])
    assert model.params["pos"].shape == (8, 16)
    assert dataclasses.replace(model.config, seed=0) == model.config


def test_analysis_shapes(short_learned):
    model = short_learned
    tokens = pe_lib.task_batch("reverse", 3, 8, seed=1)[0]
    assert pe_lib.trained_attention(model, tokens).shape == (1, 3, 2, 8, 8)
    assert pe_lib.residual_stream(model, tokens).shape == (2, 3, 8, 16)
    assert pe_lib.residual_stream(model, tokens[0, :5]).shape == (2, 5, 16)
    assert pe_lib.trained_attention(model, tokens[0, :5]).shape == (1, 2, 5, 5)
    assert pe_lib.predict(model, tokens[:1, :5]).shape == (1, 5)
    assert pe_lib.predict(model, tokens[0, :5]).shape == (5,)
    np.testing.assert_array_equal(pe_lib.position_table(model, 5), model.params["pos"][:5])
    assert 0.0 <= pe_lib.task_accuracy(model, 5, n_sequences=1) <= 1.0


def test_predict_and_accuracy_agree(sinusoidal_lookback):
    tokens, targets, counts = pe_lib.task_batch("lookback", 256, 40, seed=[training.EVAL_SEED, 1])
    right = pe_lib.predict(sinusoidal_lookback, tokens)[:, counts] == targets[:, counts]
    assert pe_lib.task_accuracy(sinusoidal_lookback, 40) == pytest.approx(right.mean())


def test_sinusoidal_position_table(sinusoidal_lookback):
    np.testing.assert_allclose(pe_lib.position_table(sinusoidal_lookback, 50), pe_lib.sinusoidal(50, 32), atol=1e-7)


def test_attention_by_offset_by_hand():
    w = np.array([[1.0, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]])
    # offset 0: diagonal 1, 0.5, 0.5; offset 1: 0.5, 0.3; offset 2: 0.2
    np.testing.assert_allclose(pe_lib.attention_by_offset(w), [2 / 3, 0.4, 0.2])
    assert pe_lib.attention_by_offset(np.stack([w, w])).shape == (2, 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(task="copy"), "task must be one of 'lookback', 'reverse'"),
        (dict(encoding="xpos"), "encoding must be one of 'none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5'"),
        (dict(seq_len=1), "seq_len must be an integer >= 2"),
        (dict(seq_len=3), "needs seq_len > k"),
        (dict(steps=0), "steps must be an integer >= 1"),
        (dict(d_model=0), "d_model must be a positive even integer"),
        (dict(d_model=15), "d_model must be a positive even integer"),
        (dict(n_layers=0), "n_layers must be an integer >= 1"),
        (dict(n_heads=0), "n_heads must be an integer >= 1"),
        (dict(n_heads=3), "n_heads must divide d_model"),
        (dict(encoding="rope", d_model=12, n_heads=4), "d_model / n_heads must be even"),
        (dict(batch_size=0), "batch_size must be an integer >= 1"),
        (dict(learning_rate=0.0), "learning_rate must be > 0"),
        (dict(learning_rate=float("nan")), "learning_rate must be a finite real number"),
        (dict(vocab_size=1), "vocab_size must be an integer >= 2"),
        (dict(offset=0), "offset must be an integer >= 1"),
        (dict(seed=-1), "seed must be an integer >= 0"),
        (dict(progress="yes"), "progress must be True, False or None"),
    ],
)
def test_bad_training_arguments(kwargs, message):
    args = {"task": "lookback", "encoding": "sinusoidal"} | kwargs
    with pytest.raises(ValueError, match=message):
        pe_lib.train_transformer(args.pop("task"), args.pop("encoding"), **args)


def test_chunks_and_padding_change_nothing(short_learned, monkeypatch):
    """The steps run in chunks of CHUNK_STEPS (one lax.scan call each; a shorter run is one chunk) and
    the last chunk is padded with steps that change nothing: 13 steps in chunks of 5 (5 + 5 + 3, two
    padding steps) give the bits of 13 steps in one chunk."""
    monkeypatch.setattr(training, "CHUNK_STEPS", 5)
    chunked = pe_lib.train_transformer("reverse", "learned", **SHORT)
    np.testing.assert_array_equal(chunked.losses, short_learned.losses)
    np.testing.assert_array_equal(training._flatten(chunked.params), training._flatten(short_learned.params))


def test_compiler_options_cap_x86_only():
    assert training._compiler_options("x86_64") == {"xla_backend_optimization_level": 1, "xla_cpu_max_isa": "AVX2"}
    assert training._compiler_options("AMD64")["xla_cpu_max_isa"] == "AVX2"
    assert training._compiler_options("arm64") == {"xla_backend_optimization_level": 1}


def test_signatures_name_every_setting():
    import inspect

    for train, first in ((pe_lib.train_transformer, ["seed"]), (pe_lib.train_transformers, ["seeds", "nudge"])):
        params = inspect.signature(train).parameters
        head = ["task", "encoding", first[0], "progress", *first[1:]]
        assert list(params)[: len(head)] == head
        assert {name: p.default for name, p in list(params.items())[len(head):]} == dict(
            seq_len=32, steps=1000, d_model=32, n_layers=2, n_heads=1, batch_size=16, learning_rate=3e-3,
            vocab_size=16, offset=3, learned_init_std=0.5**0.5)
    assert "``n_heads=1``" in pe_lib.train_transformer.__doc__ and "SETTINGS" not in pe_lib.train_transformer.__doc__


def test_unknown_setting_is_refused():
    for train in (pe_lib.train_transformer, pe_lib.train_transformers):
        with pytest.raises(TypeError, match=r"unknown keyword argument\(s\) d_modle, layers; the settings are "
                                            r"seq_len, steps, d_model"):
            train("lookback", "rope", d_modle=16, layers=1)


@pytest.mark.parametrize("seeds", [(), "01", 3, (0, -1)])
def test_bad_seeds(seeds):
    with pytest.raises(ValueError, match="seed"):
        pe_lib.train_transformers("lookback", "rope", seeds=seeds)


def test_bad_analysis_arguments(short_learned):
    model = short_learned
    with pytest.raises(ValueError, match=r"knows positions 0\.\.7, so seq_len must be <= 8, got 16"):
        pe_lib.task_accuracy(model, 16)
    with pytest.raises(ValueError, match="seq_len must be <= 8"):
        pe_lib.position_table(model, 9)
    with pytest.raises(ValueError, match="model must be a TrainedTransformer"):
        pe_lib.task_accuracy("model", 8)
    with pytest.raises(ValueError, match="n_sequences must be an integer >= 1"):
        pe_lib.task_accuracy(model, 8, n_sequences=0)
    with pytest.raises(ValueError, match=r"tokens must lie in 0\.\.15"):
        pe_lib.trained_attention(model, np.array([0, 16, 2]))
    with pytest.raises(ValueError, match="integer array of shape"):
        pe_lib.residual_stream(model, np.zeros((2, 2, 2), dtype=int))
    with pytest.raises(ValueError, match="integer array of shape"):
        pe_lib.predict(model, np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match="must be square"):
        pe_lib.attention_by_offset(np.ones((2, 3)))


def test_position_table_needs_an_added_table():
    config = training._config("lookback", "rope", seq_len=8, steps=1, seed=0, d_model=8, n_layers=1, n_heads=1,
                              batch_size=2, learning_rate=1e-3, vocab_size=4, offset=3)
    model = training.TrainedTransformer(config, {}, {}, np.zeros(0))
    with pytest.raises(ValueError, match="encoding 'rope' adds no position vectors"):
        pe_lib.position_table(model)
    with pytest.raises(ValueError, match=r"lookback with offset k=3 needs seq_len > k, got seq_len=3"):
        training.check_length(model, 3)


# ---- progress in Jupyter -----------------------------------------------------------------------------------------
class FakeHandle:
    def __init__(self, log):
        self.log = log

    def update(self, bundle, raw):
        self.log.append(("update", bundle))


def test_progress_ends_on_its_first_line(monkeypatch):
    log = []

    def fake_display(bundle, raw, display_id):
        log.append(("display", bundle))
        return FakeHandle(log)

    monkeypatch.setattr("IPython.display.display", fake_display)
    with _progress.Progress("training x", 10, enabled=True) as bar:
        bar.update(5)
    with _progress.Progress("a <b> & c", 1, enabled=True):
        pass
    assert log.pop()[1]["text/html"] == "<span class='pe-progress'>a &lt;b&gt; &amp; c</span>"
    log.pop()
    first, middle, last = log
    line = {"text/plain": "training x", "text/html": "<span class='pe-progress'>training x</span>"}
    assert first == ("display", line) == ("display", last[1])
    assert "5/10" in middle[1]["text/plain"] and "<progress value='5' max='10'>" in middle[1]["text/html"]
    assert "#" * 15 + "." * 15 in middle[1]["text/plain"]


def test_progress_off_outside_a_kernel(monkeypatch):
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: pytest.fail("displayed"))
    assert not _progress.in_kernel()
    with _progress.Progress("x", 3) as bar:
        bar.update(3)


def test_in_kernel_detects_a_zmq_shell(monkeypatch):
    class ZMQInteractiveShell:
        pass

    monkeypatch.setattr("IPython.get_ipython", lambda: ZMQInteractiveShell())
    assert _progress.in_kernel()


# ---- the compilation cache -------------------------------------------------------------------------------------
def test_default_cache_folder(monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert training._default_cache() == "/somewhere/pe_lib/jax"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "/home/learner")
    assert training._default_cache() == "/home/learner/.cache/pe_lib/jax"


def test_cache_folder_choice(monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "/c")
    assert training._cache_folder(None, None) == "/c/pe_lib/jax"  # PE_LIB_JAX_CACHE unset: the default
    assert training._cache_folder("/mine", None) == "/mine"
    assert training._cache_folder("", None) is None  # turned off
    assert training._cache_folder("/mine", "/set/for/jax") is None  # JAX's own setting is kept


def test_no_cache_folder_leaves_jax_alone(monkeypatch):
    import jax

    monkeypatch.setattr(training, "_cache_folder", lambda setting, configured: None)
    monkeypatch.setattr(jax.config, "update", lambda *args: pytest.fail("changed the JAX config"))
    assert training._jax.__wrapped__() is jax


def test_a_negative_seed_is_named_in_the_error(short_learned):
    """(Seed 0 is accepted: test_accuracy_and_loss_read_the_models_own_vocabulary_and_offset evaluates with it.)"""
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1$"):
        pe_lib.train_transformers("lookback", "rope", seeds=(0, -1))
    with pytest.raises(ValueError, match=r"^seed must be an integer >= 0, got -1$"):
        pe_lib.task_accuracy(short_learned, 8, seed=-1)


def test_default_seed_is_0_and_train_transformers_does_not_nudge_by_default(short_learned):
    """short_learned is train_transformer with the default seed: seed 0's initial weights, as those of
    train_transformers with seeds=(0,) and the default nudge (none)."""
    assert short_learned.config.seed == 0
    (again,) = pe_lib.train_transformers("reverse", "learned", seeds=(0,), **SHORT)
    initial = training._flatten(again.initial_params)
    np.testing.assert_array_equal(initial, training._flatten(short_learned.initial_params))
    np.testing.assert_array_equal(initial, training._flatten(training._init(short_learned.config, 0)))
    with pytest.raises(ValueError, match="progress must be True, False or None"):
        pe_lib.train_transformers("reverse", "learned", seeds=(0,), progress="yes", **SHORT)


def test_configs_that_differ_only_in_data_share_one_compiled_step():
    """Task, encoding, seed, steps, offset, learning rate and the learned table's scale enter the compiled
    step as data: _shared maps configs that differ only in those to one key; the sizes keep theirs, and T5
    (whose step also trains its bias) has a step of its own."""
    a = training._config("lookback", "rope", seq_len=8, steps=7, seed=3, d_model=8, n_layers=1, n_heads=2,
                         batch_size=2, learning_rate=1e-2, vocab_size=5, offset=2, learned_init_std=0.3)
    b = training._config("reverse", "alibi", seq_len=8, steps=1, seed=0, d_model=8, n_layers=1, n_heads=2,
                         batch_size=2, learning_rate=3e-3, vocab_size=5, offset=1)
    t5 = dataclasses.replace(b, encoding="t5", seed=4)
    assert training._shared(a) == training._shared(b)
    assert training._shared(t5) == training._shared(dataclasses.replace(a, encoding="t5"))
    assert training._shared(t5) != training._shared(b)
    assert training._shared(a) != training._shared(dataclasses.replace(b, d_model=16))


@pytest.mark.parametrize("encoding", ["none", "sinusoidal", "learned", "rope", "alibi"])
def test_the_step_without_t5s_bias_trains_the_same_bits(encoding):
    """The other encodings' step leaves out T5's bias (scaled by exactly 0 for them): trained by T5's step
    instead, which computes it and its gradient, every weight and loss is the same to the last bit."""
    config = training._config("lookback", encoding, seq_len=12, steps=30, seed=0, d_model=16, n_layers=2,
                               n_heads=2, batch_size=4, learning_rate=1e-2, vocab_size=8, offset=2)
    with_t5 = dataclasses.replace(training._shared(config), encoding="t5")
    own = training._train(config, (0, 1), False)
    original = training._compiled
    try:
        training._compiled = lambda shared: original(with_t5)
        full = training._train(config, (0, 1), False)
    finally:
        training._compiled = original
    for mine, theirs in zip(own, full, strict=True):
        np.testing.assert_array_equal(training._flatten(mine.params), training._flatten(theirs.params))
        np.testing.assert_array_equal(mine.losses, theirs.losses)
    assert not np.array_equal(training._flatten(own[0].params), training._flatten(own[0].initial_params))


def test_accuracy_and_loss_read_the_models_own_vocabulary_and_offset():
    """An (untrained) lookback model with vocab_size 5 and k = 2, neither the default: both measures
    are computed again here from default_rng([seed, 1])'s sequences of that task and its logits."""
    config = training._config("lookback", "none", seq_len=6, steps=1, seed=0, d_model=8, n_layers=1, n_heads=2,
                              batch_size=2, learning_rate=1e-3, vocab_size=5, offset=2)
    params = training._init(config, 0)
    model = training.TrainedTransformer(config=config, params=params, initial_params=params, losses=np.zeros(0))
    tokens, targets, counts = pe_lib.task_batch("lookback", 8, 6, vocab_size=5, offset=2, seed=[0, 1])
    z = training.run_model(model, tokens)[:, counts].astype(np.float64)  # (8, 4 scored positions, 5)
    y = targets[:, counts]
    assert pe_lib.task_accuracy(model, 6, n_sequences=8, seed=0) == np.mean(z.argmax(-1) == y)
    log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
    expected = -np.mean(np.take_along_axis(log_p, y[..., None], -1))
    assert pe_lib.task_loss(model, 6, n_sequences=8, seed=0) == pytest.approx(expected, rel=1e-12)
    # with keys at most one place away, from the logits of that restricted model
    z = training.run_model(model, tokens, max_offset=1)[:, counts].astype(np.float64)
    log_p = z - np.log(np.exp(z).sum(-1, keepdims=True))
    expected = -np.mean(np.take_along_axis(log_p, y[..., None], -1))
    assert pe_lib.task_loss(model, 6, n_sequences=8, seed=0, max_offset=1) == pytest.approx(expected, rel=1e-12)



class RecordedProgress:
    """Stands in for pe_lib.book._progress.Progress: records what a training run asks it to show."""

    calls: list = []

    def __init__(self, label, total, *, enabled=None):
        self.calls.append((label, total, enabled))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, done):
        self.calls.append(done)


def test_training_progress_names_the_run_and_counts_its_steps(monkeypatch):
    monkeypatch.setattr(training, "Progress", RecordedProgress)
    monkeypatch.setattr(RecordedProgress, "calls", [])
    pe_lib.train_transformers("reverse", "learned", seeds=(1, 0), progress=True, **SHORT)
    pe_lib.train_transformer("reverse", "learned", progress=False, **SHORT)
    assert RecordedProgress.calls == [
        ("training a Transformer: task reverse, encoding learned, 13 steps, seeds 1, 0", 13, True), 13,
        ("training a Transformer: task reverse, encoding learned, 13 steps", 13, False), 13]


def test_bad_lengths_offsets_and_models_are_named(short_learned):
    with pytest.raises(ValueError, match=r"^max_offset must be an integer >= 0, got -1$"):
        pe_lib.task_accuracy(short_learned, 8, max_offset=-1)
    with pytest.raises(ValueError, match=r"^seq_len must be an integer >= 1, got 0$"):
        pe_lib.task_accuracy(short_learned, 0)
    with pytest.raises(ValueError, match=r"got str$"):
        pe_lib.task_accuracy("model", 8)
    # max_offset 0 is allowed: every query of this bidirectional model then sees only its own token
    tokens = pe_lib.task_batch("reverse", 2, 8, seed=1)[0]
    changed = tokens.copy()
    changed[:, 1:] = (changed[:, 1:] + 1) % 16
    a, b = (training.run_model(short_learned, t, max_offset=0) for t in (tokens, changed))
    np.testing.assert_array_equal(a[:, 0], b[:, 0])
    assert np.abs(training.run_model(short_learned, changed)[:, 0] - a[:, 0]).max() > 1e-3


def test_config_bounds_of_the_learned_scale_and_of_the_offset():
    """learned_init_std 0 is allowed (a zero table), a negative or infinite one named; the offset k
    limits the length only for lookback."""
    def config(task="reverse", seq_len=8, offset=3, **kw):
        return training._config(task, "learned", seq_len=seq_len, steps=1, seed=0, d_model=8, n_layers=1, n_heads=2,
                                batch_size=2, learning_rate=1e-3, vocab_size=5, offset=offset, **kw)

    assert config(learned_init_std=0.0).learned_init_std == 0.0
    with pytest.raises(ValueError, match=r"^learned_init_std must be >= 0, got -1\.0$"):
        config(learned_init_std=-1.0)
    with pytest.raises(ValueError, match=r"^learned_init_std must be a finite real number, got inf$"):
        config(learned_init_std=float("inf"))
    assert config(seq_len=2, offset=3).seq_len == 2  # reverse: k does not apply
    with pytest.raises(ValueError, match=r"^lookback with offset k=3 needs seq_len > k, got seq_len=3$"):
        config("lookback", seq_len=3)


def test_a_terminal_ipython_is_no_kernel(monkeypatch):
    # only a shell that talks to a front end (ZMQInteractiveShell) counts: IPython in a terminal shows no progress
    # output (planted: any IPython shell counted)
    class TerminalInteractiveShell:
        pass

    monkeypatch.setattr("IPython.get_ipython", lambda: TerminalInteractiveShell())
    assert not _progress.in_kernel()
