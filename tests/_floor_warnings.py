"""The stated-``data_norm`` warnings of a linear regression fit (test helper)."""

import warnings

from skdp.exceptions import NoiseDominatedWarning


def floor_warnings(model, X, y):
    """Fit ``model`` and return the messages of its NoiseDominatedWarnings
    about features below the noise floor."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, NoiseDominatedWarning) and "floor" in str(w.message)
    ]
