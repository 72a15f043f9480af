"""jax's gpu_examples over begen's generated function: `read_state` is
begen's `StateExecute` itself, its state made by `StateInstantiate` in XLA's
instantiate stage (begen.yaml's `instantiate:`, see prepare.py)."""

from begen_ffi_example._lib import lib

read_state = lib.StateExecute
