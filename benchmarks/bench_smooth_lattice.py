"""The smooth-sensitivity median before and after its public lattice.

1. The review's lattice attack: 3000 fits on D (101 N(5, 1) rows) and on D'
   (one row added at the median), bounds (0, 10), ε = 1, δ = 1e-6. A lattice is
   estimated from half of D's outputs; the other half and D''s outputs are
   tested for membership, and the audit (lattice events included) bounds ε.
2. Utility and speed, Laplace and Cauchy: mean and median |released - true|
   of the lower median on N(0, 1), n = 1000, ε = 1, bounds (-10, 10), over
   400 datasets, and the median fit time.

Run from the repository root (``PYTHONPATH=/path/to/other/checkout`` compares
another version)::

    python benchmarks/bench_smooth_lattice.py
"""

import time

import numpy as np

import skdp
from skdp.audit import audit_mechanism
from skdp.audit._float_events import estimate_lattice, lattice_member
from skdp.stats._smooth import SmoothSensitivityMedian


def lattice_attack(n_fits=3000):
    rng = np.random.default_rng(0)
    d0 = np.sort(rng.normal(5.0, 1.0, 101))[:, None]
    d1 = np.vstack([d0, [[np.median(d0)]]])
    est = SmoothSensitivityMedian(1.0, 1e-6, bounds=(0.0, 10.0))

    def mechanism(data, seed):
        return est.set_params(random_state=seed).fit(data).median_[0]

    outputs = [
        np.array([mechanism(data, seed + 10**6 * i) for seed in range(n_fits)])
        for i, data in enumerate((d0, d1))
    ]
    half = n_fits // 2
    lattice = estimate_lattice(outputs[0][:half])
    print(f"lattice estimated from {half} outputs of D: {lattice}")
    if lattice is not None:
        on_d = int(lattice_member(outputs[0][half:], *lattice).sum())
        on_d1 = int(lattice_member(outputs[1], *lattice).sum())
        print(f"on it: D {on_d}/{n_fits - half}, D' {on_d1}/{n_fits}")
    result = audit_mechanism(
        mechanism,
        d0,
        d1,
        delta=1e-6,
        n_pilot=n_fits,
        n_samples=n_fits,
        random_state=0,
    )
    print(f"audit: epsilon >= {result.epsilon_lower_bound:.2f} ({result.event})")


def utility(reps=400, noise="laplace"):
    errors, times = [], []
    for rep in range(reps):
        X = np.random.default_rng(rep).normal(size=(1000, 1))
        truth = np.sort(X[:, 0])[499]
        est = SmoothSensitivityMedian(
            1.0, 1e-6, bounds=(-10, 10), noise=noise, random_state=10_000 + rep
        )
        start = time.perf_counter()
        est.fit(X)
        times.append(time.perf_counter() - start)
        errors.append(abs(est.median_[0] - truth))
    errors = np.array(errors)
    print(
        f"{noise}: mean |error| {errors.mean():.4f} (se "
        f"{errors.std(ddof=1) / np.sqrt(reps):.4f}), median |error| "
        f"{np.median(errors):.4f}, median fit time "
        f"{1e3 * np.median(times):.2f} ms"
    )


if __name__ == "__main__":
    print(f"skdp from {skdp.__file__}")
    lattice_attack()
    utility()
    utility(noise="cauchy")
