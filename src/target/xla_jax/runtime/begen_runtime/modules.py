"""Section `modules` (a library of several modules): each module's namespace
made a real module object, `<library>.<module>`.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

import sys as _sys
import types as _types

# The generated module defines these.
LIBRARY = ""


def register():
    pass


def export_safety_checks():
    return []


# begen: emit below


def _begen_module(build):
    # Runs a module's builder (below) once and binds the builder's name to a
    # real module object, `<library>.<module>`, entered in sys.modules so that
    # `import <library>.<module>` works too.
    name = f"{__name__}.{build.__name__}"
    module = _types.ModuleType(name, build.__doc__)
    namespace = build()
    for value in namespace.values():
        if isinstance(value, _types.FunctionType):
            value.__module__ = name
            value.__qualname__ = value.__name__
    module.__dict__.update(namespace, register=register, LIBRARY=LIBRARY, export_safety_checks=export_safety_checks)
    _sys.modules[name] = module
    return module
