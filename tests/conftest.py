"""Shared test setup.

The portsim pytest plugin (:mod:`portsim.scenarios.pytest_plugin`) is loaded by its
``pytest11`` entry point when portsim is installed (``pip install '.[test]'``
in CI, ``pip install -e .`` in development).  From a bare checkout run with
``PYTHONPATH=.`` there is no entry point: register the plugin here, under the
same name, so that our tests use it either way (and ``-p no:portsim`` still
disables it).

Once the tests are collected, the objects alive then (every module imported,
every test item: about 260,000) are moved out of the cyclic garbage collector's
reach (:func:`gc.freeze`): they live as long as the session, and each full
collection walked them again.  Measured with ``gc.callbacks`` over the default
suite: the collector's passes took 33 s, 16 s with them frozen.  Reference
counting still frees them; only cycles among them are never collected.
"""

from __future__ import annotations

import gc
import importlib

import pytest


def pytest_configure(config: pytest.Config) -> None:
    manager = config.pluginmanager
    if not manager.has_plugin("portsim") and not manager.is_blocked("portsim"):
        manager.register(importlib.import_module("portsim.scenarios.pytest_plugin"), "portsim")


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()  # the garbage of collection itself, not to be frozen with the rest
    gc.freeze()
