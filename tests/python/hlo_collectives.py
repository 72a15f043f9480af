"""The collectives of a compiled HLO module's text, counted the same way
whatever form XLA printed them in (used by the sharding tests on the CPU and
by tests/gpu/check_sharding.py; unit-tested in test_hlo_collectives.py).

XLA writes one collective in several forms, and which one depends on the
backend and the device count:

- synchronous: `%ag = f32[16]{0} all-gather(f32[4]{0} %p), ...`;
- asynchronous, a `-start`/`-done` pair: `%ags = (f32[4]{0}, f32[16]{0})
  all-gather-start(...)` then `%agd = f32[16]{0} all-gather-done(%ags)`;
- combined: several arrays in one op, its type a tuple, e.g. three gathers
  in one `all-gather-start` whose operands are the three arrays;
- wrapped: `async-start(...), calls=%wrapped` whose called computation holds
  the op itself (XLA:GPU's reduce-scatter and all-to-all).

`collectives(text)` parses each instruction (`name = TYPE OPCODE(operands)`,
a tuple type skipped by its parentheses) and counts an op once: the plain
form or its `-start`, never its `-done` nor the `async-start` around a
wrapped one (the op inside is counted). Each kind gets `ops` (collectives
issued) and `arrays` (operands moved: a combined op moves several).
"""

KINDS = (
    "all-gather",
    "all-reduce",
    "reduce-scatter",
    "collective-permute",
    "all-to-all",
    "ragged-all-to-all",
    "collective-broadcast",
)


def _close(text, i):
    # The index just past the bracket group opening at text[i].
    pairs = {"(": ")", "[": "]", "{": "}"}
    depth, j = [], i
    while j < len(text):
        c = text[j]
        if c == '"':
            # A string attribute (metadata) may hold brackets: skip it.
            end = text.find('"', j + 1)
            j = len(text) if end < 0 else end + 1
            continue
        if c in pairs:
            depth.append(pairs[c])
        elif depth and c == depth[-1]:
            depth.pop()
            if not depth:
                return j + 1
        j += 1
    return len(text)


def _top_level_items(text):
    # The comma-separated items of `text` at bracket depth 0.
    items, depth, start = [], 0, 0
    for j, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:j])
            start = j + 1
    items.append(text[start:])
    return [t for t in (s.strip() for s in items) if t]


def instruction(line):
    """(opcode, operand count) of one HLO instruction line, or None."""
    head = line.strip()
    head = head.removeprefix("ROOT ")
    eq = head.find(" = ")
    if eq < 0 or not head[:eq].lstrip("%").replace(".", "").replace("-", "").replace("_", "").isalnum():
        return None
    rest = head[eq + 3 :].lstrip()
    if rest.startswith("("):
        rest = rest[_close(rest, 0) :].lstrip()  # a tuple type
    else:
        space = rest.find(" ")
        if space < 0:
            return None
        rest = rest[space + 1 :].lstrip()  # an array type: f32[4,6]{1,0}
    paren = rest.find("(")
    if paren <= 0:
        return None
    opcode = rest[:paren]
    if not all(c.isalnum() or c in "-_" for c in opcode):
        return None
    operands = rest[paren + 1 : _close(rest, paren) - 1]
    return opcode, len(_top_level_items(operands))


def collectives(text):
    """{kind: {"ops": n, "arrays": n}} for every kind in KINDS (zeros
    included) in an HLO module's text."""
    counts = {kind: {"ops": 0, "arrays": 0} for kind in KINDS}
    for line in text.splitlines():
        found = instruction(line)
        if found is None:
            continue
        opcode, operands = found
        kind = opcode.removesuffix("-start")
        if kind in counts:
            counts[kind]["ops"] += 1
            counts[kind]["arrays"] += operands
    return counts


def ops(text):
    """{kind: collectives issued}: `collectives(text)` without array counts."""
    return {kind: c["ops"] for kind, c in collectives(text).items()}
