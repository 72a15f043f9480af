# Appended by scripts/gpu-brainevent.sh to the copy of brainevent's
# _op/kernix_pipeline.py installed on the GPU machine (never to a checkout):
# with BEGEN_AOT_DIR set, `load_cuda_file` registers a module from the
# begen-built library brainevent_aot when the library has it, and falls back
# to kernix's compile-at-run-time path otherwise (each fallback is logged to
# $BEGEN_AOT_LOG). This is the loader docs/shipping.md describes.

import importlib as _begen_importlib
import os as _begen_os
import sys as _begen_sys

_begen_jit_load_cuda_file = load_cuda_file  # noqa: F821 (defined above in kernix_pipeline)
_begen_aot = None


class _BegenModule:
    """What kernix's CompiledModule offers the callers: the name, the path, the functions."""

    def __init__(self, name, function_names, path):
        self.name = name
        self.target_prefix = name
        self.function_names = function_names
        self.path = path


def _begen_log(line):
    log = _begen_os.environ.get("BEGEN_AOT_LOG")
    if log:
        with open(log, "a") as f:
            f.write(line + "\n")


def load_cuda_file(filepath, functions=None, *, name=None, **kwargs):  # noqa: F811
    global _begen_aot
    aot_dir = _begen_os.environ.get("BEGEN_AOT_DIR")
    module = name or Path(filepath).stem  # noqa: F821 (kernix_pipeline imports Path)
    if aot_dir:
        if _begen_aot is None:
            _begen_sys.path.insert(0, aot_dir)
            _begen_aot = _begen_importlib.import_module("brainevent_aot")
        fns = [t.split(".", 1)[1] for t in _begen_aot.TARGETS if t.split(".", 1)[0] == module]
        # A configuration's module (`<base>_b256_...`, built with its -D flags)
        # is served when the library has it as a variant.
        if fns:
            _begen_aot.register()
            _begen_log(f"served {module}")
            return _BegenModule(module, fns, _begen_aot.LIBRARY)
        _begen_log(f"kernix {module}")
    return _begen_jit_load_cuda_file(filepath, functions, name=name, **kwargs)
