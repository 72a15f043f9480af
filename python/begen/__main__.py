"""``python -m begen ARGS``: runs the ``begen`` program with ARGS;
``python -m begen check-grads OUT ...`` checks a built module's declared
derivatives (:mod:`begen.testing`) in this Python; ``python -m begen
develop [PROJECT]`` rebuilds a kernel package's kernels into its installed
copy (:mod:`begen.develop`)."""

from __future__ import annotations

import os
import subprocess
import sys

from begen import find_begen_bin


def main() -> int:
    if sys.argv[1:2] == ["check-grads"]:
        from begen.testing import main as check_grads

        return check_grads(sys.argv[2:])
    if sys.argv[1:2] == ["develop"]:
        from begen.develop import main as develop

        return develop(sys.argv[2:])
    exe = find_begen_bin()
    # begen asks this Python (the one begen was installed into) about jax,
    # not whatever `python3` PATH finds first.
    os.environ.setdefault("BEGEN_PYTHON", sys.executable)
    if sys.platform == "win32":
        return subprocess.call([exe, *sys.argv[1:]])
    # Replace this process: signals and the exit status are the program's own.
    os.execv(exe, [exe, *sys.argv[1:]])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
