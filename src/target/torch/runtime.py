import ctypes as _ctypes
import os as _os

import torch as _torch

#: The torch namespace of this library's ops: torch.ops.<NAMESPACE>.
NAMESPACE = "{NS}"

# The stable ABI's C shims are libtorch's, which torch opens privately
# (RTLD_LOCAL); opened again with RTLD_GLOBAL its symbols are visible to
# the library, which therefore links no libtorch and loads into any torch
# of the stable ABI it was compiled for.
# libtorch_cuda has the current-stream shim that CUDA ops use.
for _lib in ("libtorch_cpu.so", "libtorch_cuda.so"):
    _path = _os.path.join(_os.path.dirname(_torch.__file__), "lib", _lib)
    if _os.path.exists(_path):
        _ctypes.CDLL(_path, mode=_ctypes.RTLD_GLOBAL)
_torch.ops.load_library(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "{LIB}"))
_ops = getattr(_torch.ops, NAMESPACE)


