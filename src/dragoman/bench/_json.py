"""Result files as strict JSON. A figure the run could not compute (a percentile of no
successful request, the spread of fewer than two samples) is NaN in memory; JSON has no NaN
(Python would write a bare `NaN` that strict readers refuse), so the files hold null."""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    """`value` with every NaN or infinite float, at any depth, as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    return json.dumps(finite(value), allow_nan=False, **kwargs)
