//! Precompiled GPU kernels (cuTile exports, plain CUDA or Rust-CUDA cubins,
//! fatbins and PTX): what begen needs to bind a
//! kernel it did not compile, by its calling convention.
//!
//! - [`cutile`]: cuTile's `cutile_python_v1` symbols, demangled into the
//!   Python parameters (arrays with their assumptions, lists, scalars,
//!   constants) and expanded into the C arguments the kernel takes; the
//!   host-side checks of an array against its assumptions.
//! - [`layout`]: C layout of structs and of a kernel's parameter buffer, and
//!   packing values into it (the `c` convention: primitives, pointers,
//!   slices as pointer + length, structs by value).
//! - [`ptx`]: the `.entry` kernels of PTX text and their `.param` lists.
//! - [`elf`]: the kernels of a cubin and the parameter table the driver
//!   launches them with.
//! - [`fatbin`]: the cubins and PTX texts of a fatbin container (those it
//!   holds uncompressed).
//!
//! The run-time side is the support header `begen/cuda_driver.h`
//! (`build-support/include`): the driver loaded with `dlopen`, the image
//! loaded once per context, launches on XLA's stream; `begen/list_words.h`
//! writes a cuTile list's words on that stream (a kernel whose parameters
//! carry them, safe under CUDA-graph capture).
//!
//! - [`launch`]: the grammar of the launch dimensions (`grid:`, `block:`,
//!   `shared:`).
//! - `declare`: the front end. It reads begen.yaml's `structs:` and
//!   `binaries:` (their shape is `config`'s) into declared functions, called
//!   by the driver beside `scan` and `parse`.
//!
//! The other modules decide nothing about begen.yaml: `declare` and `check`
//! call them with what the manifest says and turn their typed errors into
//! diagnostics.

pub(crate) mod cutile;
pub(crate) mod declare;
pub(crate) mod elf;
pub(crate) mod fatbin;
pub(crate) mod launch;
pub(crate) mod layout;
pub(crate) mod ptx;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn module() {
        use crate::binary::{
            cutile,
            layout::{ParamLayout, Structs},
        };
        let sig = cutile::demangle("scale_Kt1_A1f32_1l0_A1f32_1l0_Sf32_I16").unwrap();
        let types: Vec<_> = sig.kernel_args().unwrap().iter().map(|a| a.ty).collect();
        let l = ParamLayout::of(&types, &Structs::new());
        assert_eq!(l.offsets, [0, 8, 12, 16, 24, 28, 32]);
        assert_eq!(l.size, 36);
    }
}
