"""One privacy budget for a whole pipeline: :func:`set_budget` and
:func:`make_private_pipeline` split a total ``(epsilon, delta)`` across the
private steps (``DEFAULT_DELTA`` = 1e-6 is the total δ when none is given)."""

from skdp.pipeline._budget import (
    DEFAULT_DELTA,  # noqa: F401  (a constant: documented, not an API page)
    make_private_pipeline,
    private_steps,
    set_budget,
)

__all__ = ["make_private_pipeline", "private_steps", "set_budget"]
