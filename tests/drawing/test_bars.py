"""The opening picture (pe_lib.drawing.bars): what is drawn must be the encoding pe_lib.sinusoidal computes."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

import pe_lib

# Restated on purpose (not imported): a value of 1 is a bar 0.42 units tall; an arrow of a unit vector is 0.42 long.
UNIT = 0.42


def _bars(fig):
    (ax,) = fig.axes
    return {p.get_gid(): p for p in ax.patches if p.get_gid()}


def _quiver(fig):
    (ax,) = fig.axes
    (q,) = [c for c in ax.collections if isinstance(c, matplotlib.quiver.Quiver)]
    return q


@pytest.mark.parametrize(("positions", "d_model", "base"), [(4, 8, 10_000.0), ([0, 1, 2, 10, 100], 8, 10_000.0),
                                                            ([3, 7.5], 12, 100.0), (1, 2, 10_000.0)])
def test_each_bar_is_one_entry_of_the_encoding(positions, d_model, base):
    fig = pe_lib.encoding_bars(positions, d_model, base=base)
    assert isinstance(fig, Figure)
    pos = np.arange(positions) if isinstance(positions, int) else np.asarray(positions, dtype=float)
    table = pe_lib.sinusoidal(pos, d_model, base=base)
    bars = _bars(fig)
    assert len(bars) == table.size
    cmap = matplotlib.colormaps["RdBu_r"]
    for r, p in enumerate(pos):
        for j in range(d_model):
            bar = bars[f"PE({p:g},{j})"]
            assert bar.get_height() == pytest.approx(UNIT * table[r, j], abs=1e-12)
            # coloured on the heat maps' scale: -1 blue, 0 white, +1 red
            assert np.allclose(bar.get_facecolor(), cmap((table[r, j] + 1) / 2))


def test_each_arrow_points_at_the_angle_of_its_pair():
    positions, d_model = np.array([0, 1, 2, 10, 100]), 8
    q = _quiver(pe_lib.encoding_bars(positions, d_model))
    table = pe_lib.sinusoidal(positions, d_model)
    n_pairs = d_model // 2
    u = np.asarray(q.U).reshape(len(positions), n_pairs)
    v = np.asarray(q.V).reshape(len(positions), n_pairs)
    assert np.allclose(u, UNIT * table[:, 0::2])  # sin column 2k, horizontal as on chapter 5's clock
    assert np.allclose(v, UNIT * table[:, 1::2])  # cos column 2k+1, vertical
    # and, from the formula written out here: angle pos * 10000^(-2k/d), clockwise from 12 o'clock
    angle = positions[:, None] * 10_000.0 ** (-2 * np.arange(n_pairs) / d_model)
    assert np.allclose(np.exp(1j * np.arctan2(u, v)), np.exp(1j * angle))
    assert np.allclose(np.hypot(u, v), UNIT)


def test_the_bars_of_a_row_start_at_its_dials_centre_and_rows_are_in_order():
    positions, d_model = [0, 1, 5], 6
    fig = pe_lib.encoding_bars(positions, d_model)
    q, bars = _quiver(fig), _bars(fig)
    y = np.asarray(q.Y).reshape(3, 3)
    assert np.all(y == y[:, :1]) and np.all(np.diff(y[:, 0]) < 0)  # one height per row, top to bottom
    x = np.asarray(q.X).reshape(3, 3)
    assert np.all(np.diff(x, axis=1) > 0)  # pairs left to right
    for r, p in enumerate(positions):
        for j in range(d_model):
            assert bars[f"PE({p},{j})"].get_y() == pytest.approx(y[r, 0])
            assert bars[f"PE({p},{j})"].get_x() < x[r, j // 2]  # a pair's bars sit left of its dial
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert [t for t in texts if t.startswith("pos ")] == ["pos 0", "pos 1", "pos 5"]
    omega = pe_lib.frequencies(d_model)
    assert [t for t in texts if t.startswith(r"$\omega")] == [
        rf"$\omega_{k}$ = {w:.3g}" for k, w in enumerate(omega)
    ]


def test_the_figure_fits_the_text_column():
    fig = pe_lib.encoding_bars([0, 1, 2, 10, 100])
    w, h = fig.get_size_inches() * fig.dpi
    assert w == 640 and 300 < h < 500
    for width, dpi in [(6.4, 100), (5.0, 72), (7.3, 100)]:  # whole pixels: pe_lib.show's 2x PNG is exactly twice
        fig = pe_lib.encoding_bars(3, 6, width=width, dpi=dpi)
        h = fig.get_size_inches()[1] * dpi
        assert h == pytest.approx(round(h), abs=1e-9)


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((9,), {}, "at most 8 positions"),
    ((3, 14), {}, "d_model must be at most 12"),
    ((3, 7), {}, "d_model"),
    ((3, 8), {"base": -1.0}, "base"),
    (([[0, 1]],), {}, "positions"),
])
def test_bad_input_says_what_is_allowed(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe_lib.encoding_bars(*args, **kwargs)


def _touching_labels(fig) -> list[tuple[str, str]]:
    """Pairs of the picture's labels whose drawn boxes overlap (rendered by Agg at the figure's dpi)."""
    from itertools import combinations

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in fig.axes[0].texts]
    return [(a, b) for (a, box_a), (b, box_b) in combinations(boxes, 2) if box_a.overlaps(box_b)]


def test_the_compact_picture_fits_a_phone_column_without_touching_labels():
    """Issue 19: at 420 px (4.2 in) the page's picture has 'sin'/'cos' and two omega labels running into
    each other; compact=True is drawn for that width and has none, and keeps every bar and arrow."""
    positions = [0, 1, 2, 10, 100]
    assert _touching_labels(pe_lib.encoding_bars(positions, 8)) == []  # the page's 6.4 in picture
    squeezed = _touching_labels(pe_lib.encoding_bars(positions, 8, width=4.2))
    assert ("sin", "cos") in squeezed and len(squeezed) == 5  # the check sees the squeezed picture's collisions
    compact = pe_lib.encoding_bars(positions, 8, width=4.2, compact=True)
    assert _touching_labels(compact) == []
    assert round(compact.get_size_inches()[0] * compact.dpi) == 420
    texts = [t.get_text() for t in compact.axes[0].texts]
    assert texts[:4] == ["pair 0", "$\\omega_0$ = 1", "s", "c"] and texts[-5:] == ["0", "1", "2", "10", "100"]
    assert min(t.get_fontsize() for t in compact.axes[0].texts) == 10
    full = pe_lib.encoding_bars(positions, 8)
    assert [p.get_gid() for p in compact.axes[0].patches if p.get_gid()] == \
        [p.get_gid() for p in full.axes[0].patches if p.get_gid()]
    np.testing.assert_array_equal(_quiver(compact).U, _quiver(full).U)
    with pytest.raises(TypeError, match="compact must be True or False"):
        pe_lib.encoding_bars(positions, 8, compact="yes")
