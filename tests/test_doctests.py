"""Every docstring example in the four packages runs and prints what it says.

The examples are the first documentation users read; running them here
(with :func:`doctest.testmod` on the imported modules, so the installed and
the source layouts behave the same) keeps them true.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

PACKAGES = ("portsim",)


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=package + "."):
            names.append(info.name)
    return sorted(names)


MODULES = _modules()


def test_every_package_has_examples() -> None:
    """The walk finds the modules (a broken walk would make the test below vacuous)."""
    assert len(MODULES) > 40
    finder = doctest.DocTestFinder()
    with_examples = [name for name in MODULES
                     if any(t.examples for t in finder.find(importlib.import_module(name)))]
    assert len(with_examples) > 30


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module: ModuleType = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS, verbose=False)
    output: list[str] = []
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=output.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(output)
