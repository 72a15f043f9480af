"""Section `linked` (begen.yaml's `link: libs:`): a CUDA library from pip
(`nvidia/*/lib`) loaded before the library that links it.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import ctypes as _ctypes
import os as _os

# begen: emit below


def _begen_preload(name):
    # A library pip's `nvidia` packages hold is not on the loader's path:
    # loaded from there first, the loader finds it by its soname.
    try:
        import nvidia
    except ImportError:
        return
    for root in getattr(nvidia, "__path__", []):
        for lib in sorted(_os.listdir(root)):
            folder = _os.path.join(root, lib, "lib")
            if not _os.path.isdir(folder):
                continue
            for file in sorted(_os.listdir(folder), key=len):
                if file == f"lib{name}.so" or file.startswith(f"lib{name}.so."):
                    _ctypes.CDLL(_os.path.join(folder, file), mode=_ctypes.RTLD_GLOBAL)
                    return
