"""JSON text read as portsim reads YAML: a duplicate key is an error (:func:`parse_json`).

Python's ``json`` keeps the last of two equal keys silently, where portsim's
YAML reader refuses them; the JSON forms of a schedule (a ``.json`` file, the
lines of a ``.jsonl`` one) and a ``.json`` scenario go through this one reader.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["DuplicateKeyError", "parse_json"]


class DuplicateKeyError(ValueError):
    """A JSON object holds a key twice (the key is the message)."""


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKeyError(key)
        data[key] = value
    return data


_KEY_END = re.compile(r'"\s*:')
"""Ends every key of a JSON text (and may end a string value): at least one per key."""


def _keys(data: Any) -> int:
    if isinstance(data, dict):
        return len(data) + sum(_keys(v) for v in data.values())
    if isinstance(data, list):
        return sum(_keys(v) for v in data)
    return 0


def parse_json(text: str) -> Any:
    """``text`` parsed as JSON, refusing a duplicate key.

    ``json`` parses first, in C; only where the text has more key ends than the
    parsed objects have keys (a key dropped, or a string ending in ``":``) is it
    parsed again with a hook that names the duplicate.

    Raises
    ------
    DuplicateKeyError
        Naming the key found twice in one object.
    json.JSONDecodeError
        Invalid JSON (its ``msg``, ``lineno`` and ``colno`` say where).
    ValueError, RecursionError
        An integer beyond Python's digit limit; nesting too deep.

    Examples
    --------
    >>> parse_json('{"a": 1, "b": [2, 3]}')
    {'a': 1, 'b': [2, 3]}
    >>> parse_json('{"a": 1, "a": 2}')
    Traceback (most recent call last):
    ...
    portsim.scenarios.json_text.DuplicateKeyError: a
    """
    data = json.loads(text)
    colons = text.count(":")
    # a flat object (an event line of a .jsonl file) with a colon per key: no walk
    if colons > (len(data) if isinstance(data, dict) else 0):
        keys = _keys(data)
        if colons > keys and keys < len(_KEY_END.findall(text)):
            json.loads(text, object_pairs_hook=_no_duplicate_keys)
    return data
