"""Names of a package imported on first use (PEP 562), one mechanism for all of portsim.

``portsim``, ``portsim.simulator``, ``portsim.planners`` and
``portsim.scenarios`` export names from their submodules without importing
those submodules up front, so that ``portsim --help`` or importing one light
submodule (the pytest plugin, the errors) does not load networkx, SciPy or
HiGHS.  Each package declares where its names live and gets its module-level
``__getattr__`` and ``__dir__`` from :func:`lazy_exports`.

Examples
--------
>>> import types, sys
>>> demo = types.ModuleType("demo")
>>> sys.modules["demo"] = demo
>>> demo.__getattr__, demo.__dir__ = lazy_exports("demo", {"fractions": ["Fraction"]})
>>> demo.Fraction(1, 3)
Fraction(1, 3)
>>> "Fraction" in vars(demo)  # cached after the first use
True
>>> del sys.modules["demo"]
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, homes: Mapping[str, Iterable[str]],
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, exporting ``homes`` lazily.

    Parameters
    ----------
    package:
        The package's ``__name__``.
    homes:
        For each submodule (dotted name), the names it exports through the
        package.  A name is imported from its home on first use, then kept
        in the package's namespace.

    Raises
    ------
    ValueError
        When a name has two homes.
    """
    module_of: dict[str, str] = {}
    for module, names in homes.items():
        for name in names:
            if module_of.setdefault(name, module) != module:
                raise ValueError(f"{package}: {name!r} exported by two modules")

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        # The exports, the dunders and the subpackages; not the helpers the package
        # itself imports (``TYPE_CHECKING``, ``annotations``, ``lazy_exports``).
        namespace = vars(sys.modules[package])
        public = {*namespace.get("__all__", ()), *module_of}
        return sorted({name for name, value in namespace.items()
                       if name.startswith("__") or name in public
                       or isinstance(value, types.ModuleType)} | set(module_of))

    return __getattr__, __dir__
