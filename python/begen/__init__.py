"""begen: C++/CUDA kernels annotated with ``// @BE`` become XLA FFI custom
calls for JAX, built ahead of time.

This package is the Python face of the ``begen`` program that its wheel
installs into the environment's scripts folder (``bin/``): the program does
all the work. Here are only

- :func:`find_begen_bin`, the path of that program (``python -m begen`` runs it);
- :mod:`begen.hatch`, a hatchling build hook that builds a project's kernels
  into its wheel.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

__all__ = ["DISTRIBUTION", "find_begen_bin"]

#: The name of the distribution this package comes in (PyPI's ``begen`` is
#: an unrelated project whose files are also a top-level ``begen``): the
#: hatch hook checks it before running, so a foreign ``begen`` module is
#: never taken for this one.
DISTRIBUTION = "begen-jax"

_EXE = "begen.exe" if sys.platform == "win32" else "begen"


def find_begen_bin() -> str:
    """The ``begen`` program installed with this package.

    Found through the installed distribution's record of its files (the
    wheel puts the program in the scripts folder of the scheme it was
    installed with: a venv, ``--user`` or the system), then in this
    interpreter's scripts folders, then on ``PATH``. Raises
    ``FileNotFoundError`` when there is none.
    """
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        dist = distribution(DISTRIBUTION.replace("-", "_"))
        for f in dist.files or ():
            if f.name == _EXE and f.parent.name in ("bin", "Scripts"):
                path = os.path.abspath(str(dist.locate_file(f)))
                if os.path.isfile(path):
                    return path
    except PackageNotFoundError:
        pass
    schemes = [sysconfig.get_path("scripts")]
    user = f"{os.name}_user"
    if user in sysconfig.get_scheme_names():
        schemes.append(sysconfig.get_path("scripts", scheme=user))
    for folder in schemes:
        path = os.path.join(folder, _EXE)
        if os.path.isfile(path):
            return path
    found = shutil.which(_EXE)
    if found:
        return found
    raise FileNotFoundError(
        "the begen program is not installed beside the begen Python package "
        f"(looked in {', '.join(schemes)} and on PATH); reinstall the {DISTRIBUTION} wheel "
        f"(`pip install --force-reinstall {DISTRIBUTION}`)"
    )
