#!/usr/bin/env bash
# Snapshot of everything `begen generate` writes, for refactors that must not
# change a byte of generated output.
#
#   scripts/snapshot-outputs.sh DEST [BEGEN]
#
# Runs BEGEN (default target/debug/begen) `generate` over the examples'
# kernel trees, every tree under tests/e2e/, every fixture input under
# fixtures/ and brainevent's kernel tree (the wheel downloaded with pip into
# a cache outside the repository, as tests/corpus/brainevent_corpus.py does),
# each into DEST/<case>/, with the command's exit status, stdout and stderr
# in DEST/<case>.log (DEST and the scratch folder spelled as such; a fixture that does not generate leaves its
# diagnostics there). DEST/SHA256SUMS hashes every file. Compare two
# snapshots with `diff -r BEFORE AFTER`.
#
# `generate` writes every output `build` writes except the shared library
# (the wrappers, the glue, the module, the stub, the manifest, the tuning
# table), so nothing is compiled.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: scripts/snapshot-outputs.sh DEST [BEGEN]}
begen=${2:-$root/target/debug/begen}
[ -x "$begen" ] || { echo "snapshot-outputs: $begen is not built (cargo build)" >&2; exit 2; }
# shellcheck source=scripts/env.sh
source "$root/scripts/env.sh"
python=${BEGEN_PYTHON:-python3}
cache=${BEGEN_SNAPSHOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/begen-snapshot}

rm -rf "$dest"
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# one case: NAME DIR [generate options...]
gen() {
  local name=$1 dir=$2
  shift 2
  local rc=0
  "$begen" generate "$dir" --out "$dest/$name" --work-dir "$work" "$@" \
    >"$dest/$name.out" 2>"$dest/$name.err" || rc=$?
  {
    echo "exit $rc"
    echo "--- stdout"
    cat "$dest/$name.out"
    echo "--- stderr"
    cat "$dest/$name.err"
  } | sed "s#$dest/#DEST/#g; s#$work#WORK#g" >"$dest/$name.log"
  rm -f "$dest/$name.out" "$dest/$name.err"
}

gen example-kernels-demo "$root/examples/kernels-demo/kernels"
gen example-python-package "$root/examples/python-package/kernels"
for d in "$root"/tests/e2e/*/; do
  gen "e2e-$(basename "$d")" "$d"
done
for d in "$root"/fixtures/*/input; do
  gen "fixture-$(basename "$(dirname "$d")")" "$d"
done

# brainevent: the wheel's .cu tree, unpacked by the corpus scripts' own fetch,
# copied with a begen.yaml naming each file's module as kernix does
# (tests/corpus/tree_build.py's layout, without the build flags).
tree="$work/brainevent"
if (cd "$root/tests/corpus" && "$python" - "$cache/brainevent" "$tree" <<'PY'
import pathlib, shutil, sys
import brainevent_corpus as bc, kernix_modules as km, modules_compare as mc
corpus = bc.fetch(pathlib.Path(sys.argv[1]))
mods = km.module_names(corpus)
if mods.problems:
    sys.exit("kernix's module names could not be read")
files = [p.relative_to(corpus).as_posix() for p in bc.sources(corpus)]
named = {f: mods.names[f].name if f in mods.names else km.per_file_module(f) for f in files}
tree = pathlib.Path(sys.argv[2])
shutil.copytree(corpus, tree)
(tree / "begen.yaml").write_text("name: brainevent\n" + mc.names_yaml(named))
PY
); then
  gen brainevent "$tree"
else
  echo "snapshot-outputs: brainevent could not be fetched; left out" >&2
  echo "brainevent: not fetched" >"$dest/brainevent.log"
fi

(cd "$dest" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum) >"$dest/SHA256SUMS"
echo "snapshot-outputs: $(wc -l <"$dest/SHA256SUMS") files in $dest"
