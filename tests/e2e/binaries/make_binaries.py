"""Makes the binaries tests/e2e/binaries/begen.yaml binds, into OUT_DIR:
cuTile's kernels exported ahead of time (pip `cuda-tile` and its tileiras;
no GPU needed) and tests/binary/ckernels.cu compiled by nvcc to PTX and a
cubin and a fatbin.

usage: python make_binaries.py OUT_DIR [--arch sm_90] [--skip-cutile]

Needs: NVCC (or nvcc on PATH); cuda.tile importable unless --skip-cutile
(then OUT_DIR must already hold the cuTile cubins, e.g. carried to a GPU
machine that has no cuda-tile).
"""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    out = Path(args[0])
    arch = args[args.index("--arch") + 1] if "--arch" in args else "sm_90"
    out.mkdir(parents=True, exist_ok=True)
    if "--skip-cutile" not in args:
        # cuTile runs the tileiras on PATH: put pip's first.
        env = dict(os.environ)
        env["PATH"] = f"{sysconfig.get_paths()['purelib']}/nvidia/cu13/bin:{env.get('PATH', '')}"
        subprocess.run([sys.executable, str(REPO / "tests/binary/cutile_signatures.py"), "export", str(out)],
                       check=True, env=env)
    for name in ("scale", "scale_i64", "add2d", "scalars", "sum_list", "add_list2d"):
        if not (out / f"{name}.cubin").is_file():
            sys.exit(f"{out / (name + '.cubin')} is missing: export it with cuda-tile (drop --skip-cutile)")
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "nvcc"
    src = REPO / "tests/binary/ckernels.cu"
    for kind in ("ptx", "cubin", "fatbin"):
        subprocess.run([nvcc, f"-arch={arch}", f"-{kind}", str(src), "-o", str(out / f"ckernels.{kind}")], check=True)
    print(f"binaries written to {out}")


if __name__ == "__main__":
    main()
