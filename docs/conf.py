"""Sphinx configuration of portsim's documentation site.

Build (warnings are errors, as in CI)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The API reference and the gallery are generated at build time by the local
extension ``docs/_ext/portsim_docs.py``: the API pages from the packages
listed in ``portsim_packages`` below (the one place that names them), the
gallery from ``scenarios/examples/*.yaml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

project = "portsim"
author = "portsim developers"
copyright = "portsim developers, MIT licence"

# The public packages documented in the API reference (autosummary, recursive:
# every public module below them). The one line to change if they move.
portsim_packages = ["portsim"]

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "portsim_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext"]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

autosummary_generate = True
autosummary_ignore_module_all = True
# Each object is documented once, on the page of the module that defines it: a
# package's __all__ re-exports its submodules' names, which would otherwise be
# described twice (and make every cross-reference to them ambiguous).
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
# A docstring's "Attributes" section as fields: its attributes are also documented as
# members (properties, dataclass fields), and two descriptions of one name clash.
napoleon_use_ivar = True

html_theme = "alabaster"
html_title = "portsim"
