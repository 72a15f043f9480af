//! Renders diagnostics: rustc-style text for people, `cargo:warning=` lines
//! for build scripts.
