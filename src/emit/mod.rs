//! stage: emit (the target-neutral half)
//!
//! What every binding target shares, in memory: one wrapper translation
//! unit per annotated source (the source and its kernels' `extern "C"`
//! trampolines, [`abi`]), the paths of generated files and the quoting of
//! text written into them ([`names`]). Each binding target
//! (`src/target/`) adds its own files from the same checked [`Library`];
//! [`crate::target::emit`] puts them together. Writing them to disk is the
//! `build` stage's job.
//!
//! Rust resolves every name, type and expression into a view model; the
//! askama templates (`templates/` here, each target's beside its code)
//! only loop and print.

pub(crate) mod abi;
pub(crate) mod names;
pub(crate) mod tune;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use askama::Template;

use crate::model::generated::{FileKind, GeneratedFile};
use crate::model::{Function, Library};

pub(crate) use names::{glue_rel_path, wrapper_rel_path};

#[derive(Template)]
#[template(path = "wrapper.cc", escape = "none")]
struct WrapperTemplate<'a> {
    w: &'a abi::WrapperView,
}

/// A wrapper to emit: its source, the variant or candidate tag, the
/// defines before the source, its functions (a candidate's holding only
/// that candidate's instances), whether it holds a tuning candidate.
type Wrapper<'a> = (&'a str, Option<String>, Vec<(String, String)>, Vec<Cow<'a, Function>>, bool);

/// One wrapper per annotated source file, sorted by file; a source tuned
/// over its defines gets one wrapper per combination instead, each holding
/// its candidates (see [`names::tune_candidate_tag`]).
/// `section` is what the targets add to the wrapper of some functions.
/// Returns the wrappers and the paths of those that hold a tuning
/// candidate (whose inline functions and templates must stay their own
/// when linked: `build::link::localize_clashes`).
pub(crate) fn emit_wrappers(
    lib: &Library,
    section: &dyn Fn(&[&Function]) -> abi::TargetSection,
) -> (Vec<GeneratedFile>, BTreeSet<String>) {
    // One wrapper per source and variant of it.
    let mut by_file: BTreeMap<(&str, Option<&str>), Vec<&Function>> = BTreeMap::new();
    for f in lib.functions.iter().filter(|f| f.binary.is_none()) {
        by_file.entry((f.file.as_str(), f.variant.as_deref())).or_default().push(f);
    }
    let mut wrappers: Vec<Wrapper> = Vec::new();
    for ((file, variant), functions) in by_file {
        let source = lib.sources.iter().find(|s| s.file == file);
        let defines = source
            .and_then(|s| s.variants.iter().find(|v| Some(v.module.as_str()) == variant))
            .map(|v| v.defines.clone())
            .unwrap_or_default();
        let tuned =
            lib.tuning.kernels.iter().find(|t| {
                !t.defines.is_empty() && functions.iter().any(|f| std::ptr::eq(*f, &lib.functions[t.function]))
            });
        let Some(tuned) = tuned else {
            wrappers.push((
                file,
                variant.map(str::to_string),
                defines,
                functions.into_iter().map(Cow::Borrowed).collect(),
                false,
            ));
            continue;
        };
        for (k, combo) in tuned.combos.iter().enumerate() {
            let pairs: Vec<(String, String)> = tuned.defines.iter().cloned().zip(combo.iter().cloned()).collect();
            let mut all = defines.clone();
            all.extend(pairs.iter().cloned());
            let copies = functions
                .iter()
                .map(|f| {
                    let mut f = (*f).clone();
                    f.instances.retain(|i| !i.is_candidate() || i.defines == pairs);
                    Cow::Owned(f)
                })
                .collect();
            wrappers.push((file, Some(names::tune_candidate_tag(k)), all, copies, true));
        }
    }
    let paths = names::dedup_paths(
        wrappers.iter().map(|(file, tag, _, fs, _)| wrapper_rel_path(file, tag.as_deref(), fs[0].platform)).collect(),
    );
    let mut out = Vec::new();
    let mut candidates = BTreeSet::new();
    for ((file, _, defines, functions, candidate), rel_path) in wrappers.into_iter().zip(paths) {
        if candidate {
            candidates.insert(rel_path.clone());
        }
        let functions: Vec<&Function> = functions.iter().map(|f| f.as_ref()).collect();
        let first = functions[0];
        let source = lib.sources.iter().find(|s| s.file == file);
        // `check` set the include text of every source with functions.
        let include_path = source.and_then(|s| s.include.clone()).unwrap_or_default();
        let w = abi::wrapper_view(file, include_path, defines, &functions, section(&functions));
        out.push(GeneratedFile {
            rel_path,
            kind: FileKind::Wrapper(first.platform),
            source: Some(file.to_string()),
            contents: render(&WrapperTemplate { w: &w }),
        });
    }
    (out, candidates)
}

/// Renders a template. The templates print strings the view models made
/// and write into a `String`: rendering cannot fail.
pub(crate) fn render(t: &impl Template) -> String {
    let mut text = t.render().unwrap_or_else(|e| unreachable!("rendering into a String failed: {e}"));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}
