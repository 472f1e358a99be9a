"""Public names of a package imported on first use (module ``__getattr__``).

The pattern of SciPy's and scikit-image's ``lazy_loader.attach`` (PEP 562):
the package lists its names and the modules that define them, and a name's
module is imported when the name is first looked up. ``import skdp`` then
costs milliseconds instead of importing scikit-learn and SciPy, which the
command line's reader does not need.
"""

import importlib
import sys

__all__ = ["attach"]


def attach(package, modules, subpackages=()):
    """``(__getattr__, __dir__, __all__)`` for the package named ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    modules : dict of str to list of str
        Module (absolute name) to the public names it defines.
    subpackages : iterable of str, default=()
        Submodules reachable as attributes (``skdp.preprocessing``) before
        they are imported.

    Returns
    -------
    getattr_, dir_ : callable
        The module-level ``__getattr__`` and ``__dir__``.
    all_ : list of str
        The public names, sorted.

    Examples
    --------
    >>> import sys, types
    >>> from skdp._lazy import attach
    >>> sys.modules["lazy_demo"] = demo = types.ModuleType("lazy_demo")
    >>> demo.__getattr__, demo.__dir__, demo.__all__ = attach(
    ...     "lazy_demo", {"fractions": ["Fraction"]})
    >>> "Fraction" in vars(demo), demo.Fraction(3, 6), "Fraction" in vars(demo)
    (False, Fraction(1, 2), True)
    >>> del sys.modules["lazy_demo"]
    """
    module_of = {name: module for module, names in modules.items() for name in names}
    subpackages = frozenset(subpackages)

    def __getattr__(name):
        if name in module_of:
            value = getattr(importlib.import_module(module_of[name]), name)
            vars(sys.modules[package])[name] = value  # later lookups skip this
            return value
        if name in subpackages:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted({*vars(sys.modules[package]), *module_of, *subpackages})

    return __getattr__, __dir__, sorted(module_of)
