//! The binding targets: what turns one checked [`Library`] into the files
//! of one framework's bindings. Everything before (scan, parse, check, the
//! model and its plan) and the wrappers with their `extern "C"`
//! trampolines ([`crate::emit::abi`]) are shared; a target owns, in its
//! folder, its option checks, its emitted files and its toolchain needs
//! (the headers its translation units compile against, the API version it
//! records, the shared library it links from the wrappers' objects and its
//! own units).
//!
//! A new target is one folder here (implementing [`Target`]) and one line
//! in [`TARGETS`] (its `TargetId` constant beside it).

pub(crate) mod torch;
pub(crate) mod xla_jax;

use crate::build::TargetToolchain;
use crate::diag::Diagnostic;
use crate::emit::abi::TargetSection;
use crate::model::generated::{Emitted, FileKind, GeneratedFile, TargetId};
use crate::model::{Function, Library};
use crate::source::SourceMap;

/// One binding target.
pub(crate) trait Target: Sync {
    /// Its name, as the CLI and begen.yaml spell it.
    fn id(&self) -> TargetId;

    /// Its own checks of the checked library (its begen.yaml options, what
    /// it cannot bind), as diagnostics into `sources`; a kernel it refuses
    /// or leaves out is named.
    fn check(&self, _lib: &Library, _sources: &SourceMap) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// The names of the files it writes into OUT (its library first), for
    /// the refusal of a file in the way that begen did not write.
    fn outputs(&self, lib: &Library) -> Vec<String>;

    /// What it adds to the wrapper of a source's `functions`, compiled with
    /// the source.
    fn wrapper_section(&self, functions: &[&Function]) -> TargetSection;

    /// Its files: its translation units (`FileKind::TargetUnit` of its id)
    /// and its outputs. `api_version` is what its toolchain found, if it
    /// was asked (`TargetHeaders::api_version`). It cannot fail: `check`
    /// made every name and path safe.
    fn emit(&self, lib: &Library, api_version: Option<&str>) -> Vec<GeneratedFile>;

    /// What it needs from the machine.
    fn toolchain(&self) -> &dyn TargetToolchain;
}

/// Every known target, one line each.
pub(crate) const TARGETS: &[&dyn Target] = &[&xla_jax::Jax, &torch::Torch];

/// The target named `id`. Every `TargetId` in a plan is one of
/// [`TARGETS`]' (the CLI and begen.yaml give names, looked up here).
pub(crate) fn of(id: TargetId) -> &'static dyn Target {
    TARGETS
        .iter()
        .copied()
        .find(|t| t.id() == id)
        .unwrap_or_else(|| unreachable!("target {id} is not in target::TARGETS"))
}

/// The target called `name`, if there is one.
pub(crate) fn named(name: &str) -> Option<&'static dyn Target> {
    TARGETS.iter().copied().find(|t| t.id().name() == name)
}

/// The targets `--target` names (each item may itself be comma-separated),
/// in the order first named, each once (empty: none named, begen's
/// default), or the message for the first unknown name with the closest
/// known one.
pub(crate) fn parse_names(names: &[String]) -> Result<Vec<TargetId>, String> {
    let mut ids: Vec<TargetId> = Vec::new();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim).filter(|n| !n.is_empty()) {
        let Some(t) = named(name) else {
            let known: Vec<&str> = TARGETS.iter().map(|t| t.id().name()).collect();
            let hint = crate::diag::suggest::closest(name, known.iter().copied())
                .map(|c| format!("; did you mean '{c}'?"))
                .unwrap_or_default();
            return Err(format!("unknown target '{name}': the targets are {}{hint}", known.join(", ")));
        };
        if !ids.contains(&t.id()) {
            ids.push(t.id());
        }
    }
    Ok(ids)
}

/// The plan's targets of `lib`.
pub(crate) fn selected(lib: &Library) -> impl Iterator<Item = &'static dyn Target> + '_ {
    lib.plan.targets.iter().map(|t| of(*t))
}

/// Every generated file of `lib`: the wrappers (with every selected
/// target's section), then each selected target's files in the plan's
/// order, then the shipped tuning table. `api_version` answers each
/// target's toolchain's API version, where one was found.
pub(crate) fn emit(lib: &Library, api_version: &dyn Fn(TargetId) -> Option<String>) -> Emitted {
    let section = |functions: &[&Function]| {
        let mut all = TargetSection::default();
        for t in selected(lib) {
            let s = t.wrapper_section(functions);
            all.headers.extend(s.headers);
            all.code.push_str(&s.code);
        }
        all
    };
    let (mut files, tune_candidates) = crate::emit::emit_wrappers(lib, &section);
    for t in selected(lib) {
        files.extend(t.emit(lib, api_version(t.id()).as_deref()));
    }
    if let Some(table) = &lib.tuning.table {
        files.push(GeneratedFile {
            rel_path: lib.plan.outputs.tune_table.clone(),
            kind: FileKind::TuneTable,
            source: None,
            contents: table.clone(),
        });
    }
    Emitted { files, tune_candidates }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{Reporter, Toolchain};
    use crate::env::Env;
    use crate::model::generated::JAX;
    use crate::settings::Settings;

    struct Quiet;
    impl Reporter for Quiet {
        fn diagnostic(&mut self, _: &Diagnostic, _: &crate::source::SourceMap) {}
        fn progress(&mut self, _: &str) {}
        fn compiler_output(&mut self, _: &str, _: &str) {}
    }

    /// tests/e2e/typed checked, with OUT and the work directory in a
    /// scratch folder.
    fn typed_library(name: &str) -> (std::path::PathBuf, Library) {
        let scratch = std::env::temp_dir().join(format!("begen-target-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let mut settings = Settings::new(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/typed"));
        settings.out = Some(scratch.join("out"));
        settings.work_dir = Some(scratch.join("work"));
        let run = crate::driver::run(&settings).unwrap();
        assert!(!run.library.functions.is_empty());
        (scratch, run.library)
    }

    #[test]
    fn without_a_target_only_the_shared_wrappers_are_emitted_and_no_xla_header_is_looked_for() {
        let (scratch, mut lib) = typed_library("none");
        assert_eq!(lib.plan.targets, [JAX], "jax is the default");
        let with = emit(&lib, &|_| None);
        assert!(with.target_units().any(|(_, t)| t == JAX), "the glue");
        lib.plan.targets.clear();
        let without = emit(&lib, &|_| None);
        assert!(!without.files.is_empty());
        for f in &without.files {
            assert!(matches!(f.kind, FileKind::Wrapper(_)), "{} is not a wrapper", f.rel_path);
            assert!(!f.contents.contains("xla"), "{} names XLA", f.rel_path);
            // The same wrapper, byte for byte, as the jax target's build
            // compiles (these kernels have no native handlers).
            assert!(with.files.contains(f), "{} differs from jax's", f.rel_path);
        }
        // XLA's headers are where no build finds them: jax's toolchain
        // fails on them, and a build without jax never looks.
        let env = Env::new().with("XLA_FFI_INCLUDE_DIR", &scratch.join("no-xla").display().to_string());
        assert!(Toolchain::resolve(&lib, &[], &env, &mut Quiet).is_ok());
        let jax = Toolchain::resolve(&lib, &[of(JAX).toolchain()], &env, &mut Quiet);
        let message = jax.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("XLA_FFI_INCLUDE_DIR"), "{message}");
        let _ = std::fs::remove_dir_all(&scratch);
    }

    #[test]
    fn every_target_is_listed_once_by_a_distinct_name() {
        let mut names: Vec<&str> = TARGETS.iter().map(|t| t.id().name()).collect();
        assert!(names.contains(&"jax"), "{names:?}");
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "two targets share a name");
        for t in TARGETS {
            assert_eq!(of(t.id()).id(), t.id());
            assert_eq!(named(t.id().name()).map(|t| t.id()), Some(t.id()));
        }
        assert!(named("tensorflow").is_none());
        assert_eq!(named("torch").map(|t| t.id()), Some(crate::model::generated::TORCH));
        for t in crate::model::generated::DEFAULT_TARGETS {
            assert!(named(t.name()).is_some(), "default target {t} is not listed");
        }
    }

    #[test]
    fn target_names_parse_with_a_suggestion() {
        use crate::model::generated::{JAX as jax, TORCH as torch};
        assert_eq!(parse_names(&[]), Ok(vec![]));
        assert_eq!(parse_names(&["jax,torch".into()]), Ok(vec![jax, torch]));
        assert_eq!(parse_names(&["torch".into(), "jax".into(), "torch".into()]), Ok(vec![torch, jax]));
        assert_eq!(parse_names(&["torch".into()]), Ok(vec![torch]), "torch builds alone");
        let err = parse_names(&["jax,troch".into()]).unwrap_err();
        assert_eq!(err, "unknown target 'troch': the targets are jax, torch; did you mean 'torch'?");
    }
}
