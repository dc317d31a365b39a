"""Shared test setup.

The portsim pytest plugin (:mod:`portsim.scenarios.pytest_plugin`) is loaded by its
``pytest11`` entry point when portsim is installed (``pip install '.[test]'``
in CI, ``pip install -e .`` in development).  From a bare checkout run with
``PYTHONPATH=.`` there is no entry point: register the plugin here, under the
same name, so that our tests use it either way (and ``-p no:portsim`` still
disables it).
"""

from __future__ import annotations

import importlib

import pytest


def pytest_configure(config: pytest.Config) -> None:
    manager = config.pluginmanager
    if not manager.has_plugin("portsim") and not manager.is_blocked("portsim"):
        manager.register(importlib.import_module("portsim.scenarios.pytest_plugin"), "portsim")
