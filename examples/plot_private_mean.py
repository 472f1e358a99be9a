"""
Private mean versus epsilon, with private bounds
================================================

The error of :class:`skdp.PrivateMean` as the privacy budget grows, with
bounds chosen privately by the sparse vector technique, next to the oracle that
knows the true range of the data (which a private analysis never does).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from skdp import PrivateMean

# Fixed seeds make this page reproducible, and therefore not private: real
# analyses leave random_state=None so the noise comes from the OS's CSPRNG.
rng = np.random.default_rng(0)
X = rng.lognormal(3, 1, size=(5_000, 1))
truth = X.mean()
epsilons = np.geomspace(0.05, 2, 8)


def median_error(make, repeats=30):
    errors = [abs(make(seed).fit(X).mean_[0] - truth) for seed in range(repeats)]
    return np.median(errors)


private = [
    median_error(lambda s, e=eps: PrivateMean(e, bounds=(0.0, None), random_state=s))
    for eps in epsilons
]
oracle = [
    median_error(
        lambda s, e=eps: PrivateMean(e, bounds=(X.min(), X.max()), random_state=s)
    )
    for eps in epsilons
]

# %%
fig, ax = plt.subplots()
ax.loglog(epsilons, private, "o-", label="private bounds (SVT), lower=0 public")
ax.loglog(epsilons, oracle, "s--", label="oracle bounds [min, max]")
ax.set_xlabel("epsilon (total)")
ax.set_ylabel("median absolute error of the mean")
ax.set_title("PrivateMean on lognormal data (5000 rows, 30 runs per point)")
ax.legend()
plt.show()
