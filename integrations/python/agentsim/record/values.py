"""Value names, exactly as `agentsim_ingest::value` makes them.

agentsim compares values only for equality, so a value's name is its canonical JSON text
(compact, keys sorted) when that is at most 40 bytes long, else `fnv1a64:<16 hex digits>` of
the text; None is NULL. Objects that are not JSON (LangChain messages, pydantic models,
dataclasses) are first turned into data: their `model_dump()`, their fields, else their repr.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

INLINE_MAX = 40


def jsonable(v: Any) -> Any:
    """`v` as plain JSON data."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((jsonable(x) for x in v), key=canonical)
    dump = getattr(v, "model_dump", None)
    if callable(dump):
        return {"__type__": f"{type(v).__module__}.{type(v).__name__}", "data": jsonable(dump())}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return jsonable(dataclasses.asdict(v))
    return repr(v)


def canonical(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def value_name(v: Any) -> str | None:
    """The agentsim value name of `v` (None for NULL)."""
    if v is None:
        return None
    text = canonical(jsonable(v))
    if len(text.encode("utf-8")) <= INLINE_MAX:
        return text
    return f"fnv1a64:{fnv1a64(text.encode('utf-8')):016x}"
