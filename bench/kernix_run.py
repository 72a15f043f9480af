"""One whole kernix run, for bench/scan_bench.py: start Python, import kernix's
parser from the unpacked brainevent wheel, parse every `.cu` file under DIR.

usage: python bench/kernix_run.py CORPUS DIR   (CORPUS: the cache's corpus/, for the wheel beside it;
       prints the number of functions)
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "corpus"))
import brainevent_corpus as bc

kc = bc.load_kernix(pathlib.Path(sys.argv[1]))
n = 0
for path in sorted(pathlib.Path(sys.argv[2]).rglob("*.cu")):
    n += len(bc.kernix_spec(kc, path.read_text(encoding="utf-8")))
print(n)
