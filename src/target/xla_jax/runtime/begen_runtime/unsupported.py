"""Section `unsupported` (a kernel with `unsupported:` values, or an
algorithm): refusing a call whose attribute values a kernel does not support.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import numpy as _np

from .core import _begen_text

# begen: emit below

# Unsupported attribute values. Run at trace time.


def _begen_same_value(value, unsupported):
    try:
        if isinstance(unsupported, float) and _np.isnan(unsupported):
            # NaN (begen.yaml `.nan`) equals nothing, itself included: compared by isnan.
            return bool(_np.isnan(_np.asarray(value)))
        return bool(_np.asarray(value) == unsupported)
    except Exception:
        return False


def _begen_refusal(fn, table):
    # Why `fn` refuses a call, or None: `table` is {attribute: (value, values it does not support)}.
    for attr, (value, values) in table.items():
        if any(_begen_same_value(value, u) for u in values):
            return f"{fn} does not support {attr}={_begen_text(value)} (begen.yaml: unsupported)"
    return None


def _begen_refuse(fn, table):
    why = _begen_refusal(fn, table)
    if why is not None:
        raise ValueError(why)
