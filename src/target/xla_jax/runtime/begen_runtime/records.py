"""Section `records` (an annotated kernel with a struct attribute): a dict of
the struct's members, each converted, for XLA to decode into the struct.

Above the `# begen: emit below` line: only what this file needs on its own.
"""

from .core import _begen_show, _begen_text

# begen: emit below


def _begen_record(value, members, where):
    # A struct attribute of an annotated kernel: a dict with every member of
    # the struct and nothing else, each converted like an attribute of its
    # type; XLA decodes the dict into the struct.
    if not isinstance(value, dict):
        raise TypeError(f"{where} takes a dict of the struct's members, got {_begen_show(value)}")
    names = [name for name, _, _ in members]
    for key in value:
        if key not in names:
            raise TypeError(f"{where} has no member {_begen_text(key)}; its members are {', '.join(names)}")
    out = {}
    for name, ty, convert in members:
        if name not in value:
            raise TypeError(f"{where}: member '{name}' is missing (every member of the struct is required)")
        out[name] = convert(value[name], f"{where}, member '{name}' ({ty})")
    return out
