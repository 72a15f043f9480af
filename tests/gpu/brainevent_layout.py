"""Lays out brainevent 0.3.0's kernel tree for a build on the GPU machine
(scripts/gpu-brainevent.sh): the annotated sources, a begen.yaml naming every
module as kernix does, and an include directory holding only the wheel's
`cuda_common.h`; the same layout tests/corpus/tree_build.py builds in CI,
without building it.

usage: python tests/gpu/brainevent_layout.py OUT_DIR [--cache DIR]
   -> OUT_DIR/brainevent/ (tree + begen.yaml), OUT_DIR/include/
"""

import argparse
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/corpus"))
import brainevent_corpus as bc  # noqa: E402
import kernix_compare  # noqa: E402
import kernix_modules  # noqa: E402
import modules_compare as mc  # noqa: E402
import tree_build  # noqa: E402


# brainevent 0.3.0's default HybridConfig (block 256, 2048 fixed scatter
# blocks, TPR threshold 128, 4096 nnz per task), as its module suffix and defines.
HYBRID_SUFFIX = "_b256_s2048_t128_n4096"
HYBRID_DEFINES = (
    "{BE_HYBRID_BLOCK_SIZE: 256, BE_HYBRID_FIXED_SCATTER_BLOCKS: 2048, "
    "BE_HYBRID_TPR_THRESHOLD: 128, BE_HYBRID_TASK_NNZ: 4096}"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--cache", default=str(ROOT / ".cache"))
    a = ap.parse_args()
    loaded = kernix_compare.corpus_and_kernix("brainevent_layout", pathlib.Path(a.cache))
    if isinstance(loaded, int):
        return loaded
    corpus, kx, files = loaded
    mods = kernix_modules.module_names(corpus)
    skipped = tree_build.left_out(corpus, files, tree_build.support_dir())
    built = [f for f in files if f not in skipped]
    named = {f: mods.names[f].name if f in mods.names else kernix_modules.per_file_module(f) for f in built}
    out = pathlib.Path(a.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cuda_common = bc.package_dir(corpus) / "include" / "cuda_common.h"
    tree, include, _ = tree_build.layout(corpus, cuda_common, out, skipped)
    # The hybrid sources are also compiled per scheduler configuration, as
    # `<module>_b<block>_s<scatter>_t<tpr>_n<nnz>` with `-DBE_HYBRID_*`
    # (brainevent's hybrid_config.py); the default configuration is built
    # ahead of time as a variant of each.
    variants = "".join(
        f'  "{f}":\n    - {{module: {m}{HYBRID_SUFFIX}, defines: {HYBRID_DEFINES}}}\n'
        for f, m in sorted(named.items())
        if m.endswith("_hybrid")
    )
    config = f"name: {tree_build.LIBRARY}\n" + mc.names_yaml(named)
    if variants:
        config += "variants:\n" + variants
    (tree / "begen.yaml").write_text(config)
    # A source that needs only a toolkit header the pinned pip toolkit lacks
    # (cuBLAS's) is kept aside with its module name: the GPU machine's full
    # toolkit may have it (scripts/gpu-brainevent.sh adds it back then).
    optional = out / "optional"
    for f, why in skipped.items():
        print(f"left out {f}: {why}")
        if "cuBLAS" in why:
            (optional / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(corpus / f, optional / f)
            name = mods.names[f].name if f in mods.names else kernix_modules.per_file_module(f)
            with open(out / "optional.txt", "a") as listing:
                listing.write(f"{f}\t{name}\n")
    print(f"{len(built)} of {len(files)} sources, {len(set(named.values()))} modules -> {tree}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
