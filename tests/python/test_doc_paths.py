"""Every repository path the Markdown files mention exists: a `src/...`,
`tests/...`, `scripts/...`, `bench/...`, `docs/...`, `fixtures/...`,
`examples/...`, `build-support/...` or `templates/...` path in a tracked
`.md` file names a file or folder of the checkout (from the repository root
or from the file's own folder), so a move or a removal that leaves a text
behind fails here. CHANGELOG.md is history and may name what is gone.

Not checked: paths with a placeholder or a glob (`src/<package>`,
`tests/gpu/check_*.py`, `...`), paths git ignores (built or carried
outputs such as `tests/e2e/binaries/bin`), and the few below that name a
user's project or a stand-in, not this repository."""

import re
import subprocess

import pytest
from conftest import REPO, missing

PATH = re.compile(
    r"(?<![\w.@/-])(?:\.\./)*((?:src|tests|scripts|bench|docs|fixtures|examples|build-support|templates)/[\w./+-]*[\w/])"
)
# Followed by one of these, the path goes on as a placeholder or a glob.
CONTINUED = set("*<{$[")
NOT_THIS_REPOSITORY = {
    "src/X.rs",  # docs/architecture.md: "each module's files, src/X.rs and src/X/"
    "src/X/",
    "src/X",
    "tests/test_package.py",  # the test `begen new` writes into a new package
    "tests/test_gradients.py",  # a kernel package's own test, in an example
}


def mentions(text):
    """(line number, path, path as written) of each repository path in `text`."""
    for number, line in enumerate(text.splitlines(), 1):
        for m in PATH.finditer(line):
            path = m.group(1)
            if line[m.end() : m.end() + 1] in CONTINUED or "..." in path:
                continue
            yield number, path, m.group(0)


def missing_paths(md, text, ignored):
    for number, path, written in mentions(text):
        if path in NOT_THIS_REPOSITORY or path.rstrip("/") in ignored:
            continue
        if not any(p.exists() for p in (REPO / path, md.parent / path, md.parent / written)):
            yield f"{md.relative_to(REPO)}:{number}: {path}"


def git(*args, ok=(0,)):
    """git's output; a status outside `ok` (or no git) skips the test."""
    try:
        proc = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False)
    except OSError as e:
        missing(f"no git here to list the checkout's files: {e}")
    if proc.returncode not in ok:
        missing(f"git {args[0]} failed here ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def test_every_path_the_docs_mention_exists():
    files = [REPO / f for f in git("ls-files", "*.md").split() if f != "CHANGELOG.md"]
    assert len(files) > 20, files
    found = [(md, md.read_text(encoding="utf-8")) for md in files]
    paths = sorted({path.rstrip("/") for _, text in found for _, path, _ in mentions(text)})
    # Of those that do not exist, the ones git ignores (built or carried).
    absent = [p for p in paths if not (REPO / p).exists()]
    # (Asked as folders too: an ignore pattern may name a folder only.)
    asked = [q for p in absent for q in (p, p + "/")]
    ignored = {q.rstrip("/") for q in git("check-ignore", "--no-index", *asked, ok=(0, 1)).split()} if absent else set()
    bad = [line for md, text in found for line in missing_paths(md, text, ignored)]
    assert not bad, "paths that do not exist:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("see `src/no_such_module.rs` and [x](../docs/no_such_page.md).", ["src/no_such_module.rs", "docs/no_such_page.md"]),
        ("`src/lib.rs`, `tests/gpu/check_*.py`, `fixtures/<case>/`, src/X.rs, `src/a/.../b.rs`.", []),
    ],
)
def test_a_path_that_does_not_exist_is_reported(tmp_path, text, want):
    md = REPO / "docs" / "x.md"
    got = [line.rsplit(": ", 1)[1] for line in missing_paths(md, text, set())]
    assert got == want
