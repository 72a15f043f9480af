//! The binary front end: begen.yaml's `structs:` and `binaries:` read into
//! declared functions.
//!
//! [`declare`] lays out the structs, reads every binary (a `.cubin`,
//! `.fatbin` or `.ptx` under the root) and hands each kernel to the common
//! pipeline as a [`Declared`] function with a [`Callee::Binary`], indexing
//! its [`BinaryKernel`] in the [`Binaries`] it returns beside them. It
//! decides nothing about a kernel: `check` resolves its tokens against the
//! convention and what the binary holds. Every problem it finds (a path, an
//! unreadable file, an unknown convention, a struct that cannot be laid
//! out) is a diagnostic at the place in begen.yaml that causes it.

use std::sync::Arc;

use crate::config::{KernelConfig, yaml_path};
use crate::diag::{Diagnostic, messages::binary as bm};
use crate::model::binary::{BinaryImage, Convention};
use crate::model::decl::{Callee, Declared, LocateError};
use crate::model::{AttrType, Platform, is_identifier};
use crate::settings::RunInput;
use crate::source::Span;

use super::elf::Cubin;
use super::fatbin::Fatbin;
use super::layout::{CType, Member, StructDef, Structs};
use super::ptx::{self, PtxEntry};

/// What a binary file holds, as far as begen can read it.
#[derive(Debug, Clone)]
pub(crate) enum Contents {
    Cubin(Cubin),
    Ptx(Vec<PtxEntry>),
    /// A fatbin container: its uncompressed cubins and PTX texts read.
    Fatbin(Fatbin),
    /// The file could not be read or has no known convention (reported
    /// where it is listed): its kernels are not checked.
    Unusable,
}

/// One kernel of begen.yaml's `binaries:`, for `check` to resolve.
#[derive(Debug, Clone)]
pub(crate) struct BinaryKernel {
    /// Its image's index in [`Binaries::images`] (unused when its file is
    /// [`Contents::Unusable`]).
    pub(crate) image: usize,
    /// The file as begen.yaml names it.
    pub(crate) file: String,
    pub(crate) convention: Convention,
    /// What its file holds (shared by the file's kernels).
    pub(crate) contents: Arc<Contents>,
    pub(crate) config: KernelConfig,
    /// Its entry's index in begen.yaml's `binaries:`, and its name under
    /// the entry's `kernels:`: where begen.yaml writes its options.
    pub(crate) entry: usize,
    pub(crate) name: String,
}

/// Everything [`declare`] found: the images, the kernels (indexed by
/// [`Callee::Binary`]) and the structs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Binaries {
    pub(crate) images: Vec<BinaryImage>,
    pub(crate) kernels: Vec<BinaryKernel>,
    /// begen.yaml's `structs:`, laid out (those that could be).
    pub(crate) structs: Structs,
}

fn push(diags: &mut Vec<Diagnostic>, at: Option<Span>, d: impl FnOnce(Span) -> Diagnostic) {
    if let Some(at) = at {
        diags.push(d(at));
    }
}

/// Reads `structs:` and `binaries:`: the structs' layouts, each binary's
/// bytes and contents, and one declared function per kernel.
pub(crate) fn declare(mf: &RunInput, diags: &mut Vec<Diagnostic>) -> (Vec<Declared>, Binaries) {
    let mut out = Binaries { structs: declare_structs(mf, diags), ..Binaries::default() };
    let mut declared = Vec::new();
    let at = mf.locate();
    for (e, entry) in mf.config.binaries.iter().enumerate() {
        let file_span = at.value(&yaml_path!["binaries", e, "file"]);
        let convention = Convention::bound(&entry.convention);
        if convention.is_none() {
            let other = entry.convention.as_str();
            push(diags, at.value(&yaml_path!["binaries", e, "convention"]), |s| {
                Diagnostic::error(s, bm::bad_convention(other)).hint(bm::HINT_CONVENTION)
            });
        }
        // A binary that cannot be read still declares its kernels' names
        // (so `functions:` options for them are not reported too), with
        // nothing to check.
        let read =
            read_binary(mf, &entry.file, file_span, diags).and_then(|bytes| match read_contents(&entry.file, &bytes) {
                Ok(c) => Some((bytes, c)),
                Err(why) => {
                    push(diags, file_span, |s| Diagnostic::error(s, bm::unreadable_binary(&entry.file, &why)));
                    None
                }
            });
        let (contents, convention) = match (read, convention) {
            (Some((mut bytes, contents)), Some(convention)) => {
                if entry.file.ends_with(".ptx") {
                    bytes.push(0);
                }
                out.images.push(BinaryImage { file: entry.file.clone(), bytes });
                (contents, convention)
            }
            _ => (Contents::Unusable, Convention::C),
        };
        let image = out.images.len().saturating_sub(1);
        let contents = Arc::new(contents);
        for (name, config) in &entry.kernels {
            let kernel = yaml_path!["binaries", e, "kernels", name];
            let name_span = at.key(&kernel).unwrap_or_else(|| mf.map.span(mf.root_file, 0, 0));
            let tokens = (config.params.iter().enumerate())
                .map(|(k, t)| {
                    let token = yaml_path!["binaries", e, "kernels", name, "params", k];
                    (t.clone(), at.value(&token).unwrap_or(name_span))
                })
                .collect();
            declared.push(Declared {
                name: name.clone(),
                name_span,
                tokens: Some(tokens),
                signature: Err(LocateError::NotFound),
                platform: Platform::Cuda,
                callee: Callee::Binary { kernel: out.kernels.len() },
                enclosing: None,
                structs: Vec::new(),
                stateful: false,
                creators: Vec::new(),
            });
            out.kernels.push(BinaryKernel {
                image,
                file: entry.file.clone(),
                convention,
                contents: contents.clone(),
                config: config.clone(),
                entry: e,
                name: name.clone(),
            });
        }
    }
    (declared, out)
}

/// The bytes of a binary: a file under the root with one of the three
/// extensions.
fn read_binary(mf: &RunInput, file: &str, at: Option<Span>, diags: &mut Vec<Diagnostic>) -> Option<Vec<u8>> {
    let path = std::path::Path::new(file);
    let inside = path.is_relative() && !path.components().any(|c| matches!(c, std::path::Component::ParentDir));
    let known = [".cubin", ".fatbin", ".ptx"].iter().any(|e| file.ends_with(e));
    if !inside || !known {
        push(diags, at, |s| Diagnostic::error(s, bm::bad_binary_path(file)).hint(bm::HINT_BINARY_PATH));
        return None;
    }
    match std::fs::read(mf.root.join(path)) {
        Ok(b) => Some(b),
        Err(e) => {
            push(diags, at, |s| Diagnostic::error(s, bm::unreadable_binary(file, &e.to_string())));
            None
        }
    }
}

fn read_contents(file: &str, bytes: &[u8]) -> Result<Contents, String> {
    if file.ends_with(".cubin") {
        Cubin::parse(bytes).map(Contents::Cubin).map_err(|e| e.why())
    } else if file.ends_with(".ptx") {
        let text = std::str::from_utf8(bytes).map_err(|_| bm::PTX_NOT_UTF8.to_string())?;
        if text.contains('\0') {
            return Err(bm::PTX_NUL.into());
        }
        ptx::entries(text).map(Contents::Ptx).map_err(|e| e.to_string())
    } else {
        Fatbin::parse(bytes).map(Contents::Fatbin).map_err(|e| e.to_string())
    }
}

impl Contents {
    /// Its cubins: the file's, or each a fatbin holds.
    pub(crate) fn cubins(&self) -> Vec<&Cubin> {
        match self {
            Contents::Cubin(c) => vec![c],
            Contents::Fatbin(f) => f.cubins().collect(),
            Contents::Ptx(_) | Contents::Unusable => vec![],
        }
    }

    /// Its PTX texts' kernels: the file's, or each text a fatbin holds.
    pub(crate) fn ptx(&self) -> Vec<&[PtxEntry]> {
        match self {
            Contents::Ptx(p) => vec![p.as_slice()],
            Contents::Fatbin(f) => f.ptx().collect(),
            Contents::Cubin(_) | Contents::Unusable => vec![],
        }
    }

    /// The names of the kernels begen could read, sorted, once each.
    pub(crate) fn kernel_names(&self) -> Vec<String> {
        let cubin = self.cubins().into_iter().flat_map(|c| c.kernels.iter().map(|k| k.name.clone()));
        let ptx = self.ptx().into_iter().flat_map(|p| p.iter().map(|e| e.name.clone()));
        let names: std::collections::BTreeSet<String> = cubin.chain(ptx).collect();
        names.into_iter().collect()
    }
}

/// Lays out `structs:` (a member may name another struct; each is added
/// after the structs it contains, so nesting cannot be cyclic). Linear in
/// the members: each struct is read once and added when the last struct
/// it contains is (a chain of 8,000 structs declared in any order, or one
/// of 100,000 members, takes milliseconds).
fn declare_structs(mf: &RunInput, diags: &mut Vec<Diagnostic>) -> Structs {
    /// A member's type: a scalar, or the struct of an index in `pending`
    /// (`None`: a struct that is never laid out, one with a bad name).
    enum Ty {
        Prim(AttrType),
        Struct(Option<usize>),
    }
    let mut structs = Structs::new();
    let at = mf.locate();
    let span = |name: &str| at.key(&yaml_path!["structs", name]);
    for name in mf.config.structs.keys() {
        if !is_identifier(name) {
            push(diags, span(name), |s| Diagnostic::error(s, bm::bad_struct_name(name)));
        }
    }
    let pending: Vec<(&String, &Vec<String>)> = mf.config.structs.iter().filter(|(n, _)| is_identifier(n)).collect();
    let index: std::collections::HashMap<&str, usize> =
        pending.iter().enumerate().map(|(i, (name, _))| (name.as_str(), i)).collect();
    // Each struct's members read once; `None` for a struct with a bad member.
    let mut parsed: Vec<Option<Vec<(&str, Ty)>>> = Vec::with_capacity(pending.len());
    let mut waits_for = vec![0usize; pending.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); pending.len()];
    for (i, (name, members)) in pending.iter().enumerate() {
        let mut read = Vec::with_capacity(members.len());
        let mut ok = true;
        for (k, m) in members.iter().enumerate() {
            let member_span = || at.value(&yaml_path!["structs", name.as_str(), k]);
            let Some((member, ty)) = m.split_once(':').filter(|(n, _)| is_identifier(n)) else {
                ok = false;
                push(diags, member_span(), |s| Diagnostic::error(s, bm::bad_member(name, m)));
                continue;
            };
            let ty = ty.trim();
            if let Some(t) = AttrType::parse(ty) {
                read.push((member, Ty::Prim(t)));
            } else if mf.config.structs.contains_key(ty) && ty != name.as_str() {
                let inner = index.get(ty).copied();
                waits_for[i] += 1;
                if let Some(inner) = inner {
                    dependents[inner].push(i);
                }
                read.push((member, Ty::Struct(inner)));
            } else {
                ok = false;
                // The closest of the types and the other structs' names.
                let types = AttrType::ALL.iter().map(|t| t.as_str());
                let others = mf.config.structs.keys().map(String::as_str).filter(|n| *n != name.as_str());
                let near = crate::diag::suggest::closest(ty, types.chain(others));
                push(diags, member_span(), |s| {
                    Diagnostic::error(s, bm::bad_member_type(name, member, ty, near)).hint(msg_types())
                });
            }
        }
        parsed.push(ok.then_some(read));
    }
    // Kahn's order: a struct is laid out once every struct it contains is.
    let mut ids: Vec<Option<super::layout::StructId>> = vec![None; pending.len()];
    let mut ready: std::collections::VecDeque<usize> =
        (0..pending.len()).filter(|&i| waits_for[i] == 0 && parsed[i].is_some()).collect();
    let mut failed = Vec::new();
    while let Some(i) = ready.pop_front() {
        let Some(read) = &parsed[i] else { continue };
        let members = read.iter().filter_map(|(member, ty)| match ty {
            Ty::Prim(t) => Some(Member::new(member, *t)),
            Ty::Struct(inner) => inner.and_then(|j| ids[j]).map(|id| Member::of(member, CType::Struct(id))),
        });
        let name = pending[i].0;
        match structs.add(StructDef::new(name, members)) {
            Ok(id) => ids[i] = Some(id),
            Err(e) => {
                push(diags, span(name), |s| Diagnostic::error(s, bm::bad_struct(&e.to_string())));
                failed.push(i);
                continue;
            }
        }
        for &d in &dependents[i] {
            waits_for[d] -= 1;
            if waits_for[d] == 0 && parsed[d].is_some() {
                ready.push_back(d);
            }
        }
    }
    // What still waits contains a struct with an error (said once, at the
    // struct that contains it), or itself.
    failed.extend((0..pending.len()).filter(|&i| parsed[i].is_none()));
    let mut blamed = vec![false; pending.len()];
    while let Some(j) = failed.pop() {
        for &d in &dependents[j] {
            if !blamed[d] && ids[d].is_none() && parsed[d].is_some() {
                blamed[d] = true;
                failed.push(d);
                let name = pending[d].0;
                push(diags, span(name), |s| Diagnostic::error(s, bm::struct_member_failed(name, pending[j].0)));
            }
        }
    }
    for (i, (name, _)) in pending.iter().enumerate() {
        if parsed[i].is_some() && ids[i].is_none() && !blamed[i] && waits_for[i] > 0 {
            push(diags, span(name), |s| Diagnostic::error(s, bm::struct_cycle(name)));
        }
    }
    structs
}

fn msg_types() -> String {
    bm::member_types(&AttrType::ALL.map(|t| t.as_str()))
}
