"""{{package}}: {{frameworks}} kernels written in C++{{cuda_and}}, compiled by begen when the
wheel is built (kernels/). The wheel carries the library (lib_kernels.so)
and its generated module (_kernels.py): installing it needs no compiler.{{torch_doc}}"""

from {{package}}.{{main_module}} import {{exports}}

__all__ = [{{all}}]
