"""Section `structs` (a binary kernel with a struct attribute): a dict of the
struct's members packed into the struct's bytes.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import numpy as _np

from .core import _begen_show

# begen: emit below


def _begen_struct(value, leaves, size, where):
    # A struct attribute of a binary kernel: a dict of its members (a nested
    # struct as a dict), each converted like an attribute of its type and
    # written at its offset; XLA gets the struct's bytes.
    if not isinstance(value, dict):
        raise TypeError(f"{where} takes a dict of the struct's members, got {_begen_show(value)}")
    known = {path[:k] for path, _, _ in leaves for k in range(1, len(path) + 1)}

    def walk(d, prefix):
        for key, v in d.items():
            path = prefix + (key,)
            if path not in known:
                raise TypeError(f"{where} has no member '{'.'.join(map(str, path))}'")
            if isinstance(v, dict):
                walk(v, path)

    walk(value, ())
    out = bytearray(size)
    for path, offset, convert in leaves:
        v = value
        for k, name in enumerate(path):
            if not isinstance(v, dict):
                raise TypeError(f"{where}: member '{'.'.join(path[:k])}' takes a dict, got {_begen_show(v)}")
            if name not in v:
                raise TypeError(f"{where}: member '{'.'.join(path[: k + 1])}' is missing")
            v = v[name]
        raw = _np.asarray(convert(v, f"{where}, member '{'.'.join(path)}'")).tobytes()
        out[offset : offset + len(raw)] = raw
    return _np.frombuffer(bytes(out), dtype=_np.uint8)
