"""The begen library built from jax's examples (its directory on sys.path)."""

import os
import sys

sys.path.insert(0, os.environ["BEGEN_FFI_EXAMPLES_LIB"])

import _ffi_examples as lib

__all__ = ["lib"]
