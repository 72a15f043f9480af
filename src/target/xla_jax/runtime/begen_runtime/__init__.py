"""begen's Python runtime, as real source: the helpers every generated module
(`<NAME>.py`) holds.

begen embeds these files and emits into each generated module only the
sections the library uses, each from its `# begen: emit below` line on; this
package exists so that the runtime can be imported, unit-tested and linted on
its own (see ../README.md). Generated modules never import it.
"""
