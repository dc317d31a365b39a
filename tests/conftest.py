"""Shared test setup.

The portsim pytest plugin (:mod:`portsim.scenarios.pytest_plugin`) is loaded by its
``pytest11`` entry point when portsim is installed (``pip install '.[test]'``
in CI, ``pip install -e .`` in development).  From a bare checkout run with
``PYTHONPATH=.`` there is no entry point: register the plugin here, under the
same name, so that our tests use it either way (and ``-p no:portsim`` still
disables it).

Once the tests are collected, and again before each test module's first test,
the objects alive then are moved out of the cyclic garbage collector's reach
(:func:`gc.freeze`): every module imported, every test item (about 260,000
after collection, 800,000 by the end), what earlier modules cached.  They
mostly live as long as the session, and each full collection walked them all
again.  Measured with ``gc.callbacks`` over the default suite: the collector's
passes took 33 s, 16 s with the objects of collection frozen, 9 s with those of
every module's start too.  Reference counting still frees frozen objects; only
cycles among them are never collected (a collection runs before each freeze, so
no garbage is frozen).
"""

from __future__ import annotations

import gc
import importlib

import pytest


def pytest_configure(config: pytest.Config) -> None:
    manager = config.pluginmanager
    if not manager.has_plugin("portsim") and not manager.is_blocked("portsim"):
        manager.register(importlib.import_module("portsim.scenarios.pytest_plugin"), "portsim")


def _freeze() -> None:
    gc.collect()  # the garbage made so far, not to be frozen with the rest
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    _freeze()


_module_started: list[object] = [None]  # the file of the test running


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a module's first test (the module fixtures of the one before torn down)."""
    if item.path != _module_started[0]:
        _module_started[0] = item.path
        _freeze()
