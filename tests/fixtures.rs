//! Golden tests: one test per folder under `fixtures/` (see fixtures/README.md).
//! `BEGEN_BLESS=1 cargo test --test fixtures` rewrites the expectations
//! (tests/support/golden.rs).

mod support;

use std::path::{Path, PathBuf};

use begen::diag::render::render_text;
use support::golden::Goldens;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn run_case(name: &str) {
    let dir = fixtures().join(name);
    let scan = begen::driver::run(&begen::driver::Settings::new(dir.join("input")))
        .expect("the fixture's input folder is readable");
    let json = scan.to_json();
    let text: String = scan.diagnostics.iter().map(|d| render_text(d, &scan.sources, false) + "\n").collect();
    let mut goldens = Goldens::new("cargo test --test fixtures");
    goldens.check(&dir.join("scan.json"), &json);
    goldens.check(&dir.join("diagnostics.txt"), &text);
    goldens.finish();
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { run_case(stringify!($name)); } )*
        const CASES: &[&str] = &[$(stringify!($name)),*];
    };
}

cases!(
    binaries,
    err_rets_like,
    err_did_you_mean_options,
    err_did_you_mean_paths,
    err_did_you_mean_structs,
    contracts,
    err_contracts,
    order_warnings,
    err_binaries,
    infer_table,
    err_algorithms,
    err_vjp,
    warn_no_inputs,
    err_prims,
    err_python_rules,
    err_joint,
    err_joint_yaml,
    err_sharding,
    err_algorithms_yaml,
    err_config_locations,
    tensors,
    explicit_types,
    seed_examples,
    syntax_variants,
    macros,
    pp_if0,
    pp_redefine,
    kernix_wrong,
    lookalikes,
    config_forms,
    unknown_macro_inline,
    err_no_output,
    err_no_tensors,
    err_indirect,
    err_not_inferred,
    err_tokens,
    err_identifiers,
    err_duplicates,
    err_contradictions,
    err_stream_cpu,
    err_native,
    err_native_state,
    err_native_instantiate,
    err_vocab,
    err_vocab_state,
    err_state_symbols,
    tensor_lists,
    err_tensors,
    err_tune_lists,
    err_vocab_instantiate,
    err_state_command_buffer,
    native,
    err_locate,
    err_files,
    err_config_yaml,
    err_config_values,
    err_scope,
    modules,
    err_modules,
    err_library,
    err_library_names,
    err_link,
    err_variants,
    err_hardening,
    err_vmap_rank,
    err_fold,
    err_transpose_args,
    err_py_twins,
    cr_only,
    ignored_files,
    macro_names,
    typed,
    err_typed,
    err_did_you_mean,
    err_did_you_mean_tokens,
    err_did_you_mean_yaml,
    err_did_you_mean_names,
    err_rests,
    err_residuals,
    err_vjp_integer,
    err_vjp_cascade,
    err_yaml_eof,
    err_tune,
    err_two_states,
    err_tune_key_at,
    err_tune_algorithm,
    err_macro_limits,
    attrs,
    err_attrs,
    err_escapes,
);

/// Every fixture folder with a `scan.json` has a test above.
#[test]
fn every_fixture_has_a_test() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(fixtures()).expect("fixtures/ exists") {
        let entry = entry.expect("fixtures/ is readable");
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().join("scan.json").exists() && !CASES.contains(&name.as_str()) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "add these fixtures to `cases!` in tests/fixtures.rs: {missing:?}");
}
