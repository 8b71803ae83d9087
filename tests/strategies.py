"""Hypothesis strategies for valid arguments of pe_lib."""

from hypothesis import strategies as st

d_models = st.integers(min_value=1, max_value=64).map(lambda h: 2 * h)
bases = st.floats(min_value=1.5, max_value=1e6, allow_nan=False, allow_infinity=False)
positions = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False)
offsets = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)
