"""timestep_embedding against a per-element re-implementation of diffusers' documented behaviour."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pe_lib


def reference(timesteps, dim, max_period=10_000, flip=False, shift=1.0, scale=1.0, dtype=float):
    """Row t: [sin(scale t w_k)]_k then [cos(scale t w_k)]_k (cos first if flip), w_k = max_period^(-k/(h - shift)),
    h = dim // 2; a zero column appended for odd dim."""
    h = dim // 2
    rows = []
    for t in timesteps:
        angles = [dtype(scale) * dtype(t) * dtype(max_period) ** (-dtype(k) / dtype(h - shift)) for k in range(h)]
        sines = [math.sin(a) if dtype is float else np.sin(a) for a in angles]
        cosines = [math.cos(a) if dtype is float else np.cos(a) for a in angles]
        row = cosines + sines if flip else sines + cosines
        rows.append([float(v) for v in row] + [0.0] * (dim % 2))
    return np.array(rows).reshape(len(timesteps), dim)


STEPS = [0.0, 1.0, 2.5, 17.0, 250.0, 999.0, 0.0001]


@pytest.mark.parametrize("dim", [1, 3, 4, 8, 33, 128, 320])
@pytest.mark.parametrize(("flip", "shift"), [(False, 1.0), (True, 0.0), (True, 1.0), (False, 0.0), (False, 0.5)])
@pytest.mark.parametrize(("scale", "max_period"), [(1.0, 10_000), (1000.0, 10_000), (0.5, 100.0)])
def test_matches_the_reference(dim, flip, shift, scale, max_period):
    if 0 < dim // 2 <= shift:  # the exponent would divide by zero or less (diffusers: NaN or worse)
        with pytest.raises(ValueError, match="downscale_freq_shift must be below dim // 2"):
            pe_lib.timestep_embedding(STEPS, dim, downscale_freq_shift=shift)
        return
    ours = pe_lib.timestep_embedding(STEPS, dim, max_period=max_period, flip_sin_to_cos=flip,
                                     downscale_freq_shift=shift, scale=scale)
    assert ours.shape == (len(STEPS), dim)
    largest_angle = max(1.0, scale * max(STEPS))  # float64 rounding of the angle: about 1e-16 of it
    np.testing.assert_allclose(ours, reference(STEPS, dim, max_period, flip, shift, scale), rtol=0,
                               atol=1e-15 * largest_angle)
    # diffusers computes in float32: the angle scale * t * w_k is rounded to about 6e-8 of itself
    f32 = reference(STEPS, dim, max_period, flip, shift, scale, dtype=np.float32)
    np.testing.assert_allclose(ours, f32, rtol=0, atol=4e-7 * largest_angle)


@given(t=st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=5), h=st.integers(1, 40), flip=st.booleans(),
       shift=st.sampled_from([0.0, 1.0]), scale=st.floats(0.01, 100.0), odd=st.booleans())
def test_matches_the_reference_everywhere(t, h, flip, shift, scale, odd):
    dim = 2 * h + odd
    if h <= shift:
        return
    np.testing.assert_allclose(
        pe_lib.timestep_embedding(t, dim, flip_sin_to_cos=flip, downscale_freq_shift=shift, scale=scale),
        reference(t, dim, flip=flip, shift=shift, scale=scale), rtol=0, atol=1e-9 * max(1.0, scale * max(map(abs, t))))


def test_ddpm_and_adm_by_hand():
    # dim 4, t = 1: h = 2. diffusers' defaults (DDPM): w = 10000^(-k/1) = 1, 1e-4 -> [sin 1, sin 1e-4, cos 1, cos 1e-4]
    np.testing.assert_allclose(pe_lib.timestep_embedding([1.0], 4)[0],
                               [math.sin(1), math.sin(1e-4), math.cos(1), math.cos(1e-4)], rtol=1e-15)
    # ADM (flip, shift 0): w = 10000^(-k/2) = 1, 0.01 -> [cos 1, cos 0.01, sin 1, sin 0.01]
    np.testing.assert_allclose(pe_lib.timestep_embedding([1.0], 4, flip_sin_to_cos=True, downscale_freq_shift=0)[0],
                               [math.cos(1), math.cos(0.01), math.sin(1), math.sin(0.01)], rtol=1e-15)
    # an odd dim gets a zero last column; dim 1 is all zeros
    assert pe_lib.timestep_embedding([3.0, 4.0], 5)[:, -1].tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(pe_lib.timestep_embedding([3.0, 4.0], 1), np.zeros((2, 1)))


def test_conventions_are_the_books_tables():
    t = np.array([0.0, 1.0, 7.5, 999.0])
    # shift 1: tensor2tensor's frequencies max_period^(-k/(h-1)) in the split layout [sin | cos]
    np.testing.assert_allclose(pe_lib.timestep_embedding(t, 64),
                               pe_lib.sinusoidal(t, 64, layout="split", convention="tensor2tensor"), atol=1e-12)
    # shift 0: the paper's frequencies max_period^(-2k/d); flipping swaps the halves, a fixed permutation
    split = pe_lib.sinusoidal(t, 64, layout="split", base=1000.0)
    np.testing.assert_allclose(pe_lib.timestep_embedding(t, 64, downscale_freq_shift=0, max_period=1000), split,
                               atol=1e-12)
    flipped = pe_lib.timestep_embedding(t, 64, downscale_freq_shift=0, max_period=1000, flip_sin_to_cos=True)
    np.testing.assert_allclose(flipped, np.roll(split, 32, axis=1), atol=1e-12)
    # scale multiplies the timestep: scale 1000 on t in [0, 1] is timestep 1000 t
    np.testing.assert_allclose(pe_lib.timestep_embedding([0.25], 16, scale=1000.0),
                               pe_lib.timestep_embedding([250.0], 16), atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"timesteps": 500}, ValueError, r"timesteps must have shape \(n,\)"),
        ({"timesteps": [[1.0, 2.0]]}, ValueError, r"timesteps must have shape \(n,\).* got shape \(1, 2\)"),
        ({"timesteps": [1.0, float("nan")]}, ValueError, r"timesteps must be finite"),
        ({"timesteps": ["a"]}, TypeError, r"timesteps must hold real numbers"),
        ({"dim": 0}, ValueError, r"dim must be an integer >= 1"),
        ({"dim": 8.0}, ValueError, r"dim must be an integer >= 1"),
        ({"dim": 2}, ValueError, r"downscale_freq_shift must be below dim // 2 = 1 .* got 1.0"),
        ({"dim": 8, "downscale_freq_shift": 4}, ValueError, r"must be below dim // 2 = 4"),
        ({"max_period": 0}, ValueError, r"max_period must be positive"),
        ({"max_period": float("inf")}, ValueError, r"max_period must be a finite real number"),
        ({"scale": "1"}, ValueError, r"scale must be a finite real number"),
        ({"downscale_freq_shift": None}, ValueError, r"downscale_freq_shift must be a finite real number"),
        ({"flip_sin_to_cos": 1}, ValueError, r"flip_sin_to_cos must be True or False, got 1"),
        ({"timesteps": np.zeros(1 << 20), "dim": 1 << 10}, ValueError, r"exceeds the limit"),
    ],
)
def test_bad_input(kwargs, error, match):
    kwargs = {"timesteps": [1.0], "dim": 8, **kwargs}
    with pytest.raises(error, match=match):
        pe_lib.timestep_embedding(kwargs.pop("timesteps"), kwargs.pop("dim"), **kwargs)
