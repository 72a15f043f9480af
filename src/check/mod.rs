//! Stage 3, check: the one place that decides. From the declared functions
//! of the front end and begen.yaml it resolves every arg_spec (inline or
//! begen.yaml tokens, or inference from the signature), each function's
//! module and FFI target, the library's name, prefix and platform, every
//! generated symbol and Python name, which sources are built and how (the
//! build plan, `library/plan.rs`: the caller's settings, the environment and
//! begen.yaml merged); it reports
//! everything wrong on the way, going on past each problem. What it returns
//! is a [`Library`] that `emit` and `build` cannot fail on.
//!
//! One dispatcher ([`check`]) calls small `check_*` functions, in order:
//! the library's settings, each function, modules, duplicate names,
//! per-function options, platform and generated-file filtering, names and
//! symbols, the build plan, include paths.

mod function;
mod library;
mod options;

use function::{arg_spec, named};
use library::{binaries, modules, names, plan, symbols};
use options::{algorithms, creator, fold, primitives, python_rules, sharding, tune};

pub(crate) use library::plan::backend as plan_backend;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::binary::declare::Binaries;
use crate::config::{LinearItem, Seg, yaml_path};
use crate::diag::{Diagnostic, Severity, messages as msg};
use crate::model::binary::BinaryCall;
use crate::model::decl::{Callee, Declared};
use crate::model::{
    Const, Defined, Function, FunctionNames, FunctionOptions, Library, Param, Platform, PlatformChoice, SourceFile,
    Token, Variant, VmapMethod, is_identifier, is_py_keyword, shadows_py_module,
};
use crate::par;
use crate::settings::RunInput;
use crate::source::{FileId, Span};

/// Checks everything: the library (with the functions that checked out)
/// and every diagnostic. Errors among the diagnostics mean the library must
/// not be built.
pub(crate) fn check(req: &RunInput, binaries: &Binaries, declared: Vec<Vec<Declared>>) -> (Library, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let name = check_library_name(req, &mut diags);
    let prefix = check_prefix(req, &name, &mut diags);
    let choice = check_platform(req, &mut diags);
    let jax_min = check_jax_min(req, &mut diags);
    let targets = check_targets(req, &mut diags);
    check_config_sources(req, &mut diags);
    check_link(req, &mut diags);
    check_include_dirs(req, &mut diags);
    let mut modules = modules::assign(req, &prefix, &mut diags);
    let variants = check_variants(req, &mut diags);
    modules.namespaced |= !variants.is_empty();
    let instances = instances(declared, &modules, &variants);
    // Every declared name, also of functions that fail their own checks,
    // as `name` and `module.name`: what `functions:` keys may say.
    let declared_names: BTreeSet<String> = if req.config.functions.is_empty() {
        BTreeSet::new()
    } else {
        instances.iter().flat_map(|i| [i.declared.name.clone(), format!("{}.{}", i.module, i.declared.name)]).collect()
    };
    let repeats = find_repeats(&instances);
    let naming = symbols::Naming {
        library: &name,
        prefix: &prefix,
        namespaced: modules.namespaced,
        explicit_prefix: req.settings.prefix.is_some() || req.config.prefix.is_some(),
    };
    let functions = check_functions(req, binaries, instances, &repeats, &modules, &mut diags);
    let mut functions = check_options(req, functions, &declared_names, &mut diags);
    primitives::check_primitives(req, &mut functions, &mut diags);
    sharding::check_sharding(req, &mut functions, &mut diags);
    fold::check_fold(req, &mut functions, &mut diags);
    algorithms::check_vjps(req, &mut functions, &declared_names, &mut diags);
    let listed = algorithms::check_algorithms(req, &functions, &mut diags);
    let mut sources = check_sources(req, &functions, choice, &variants, &mut diags);
    if choice == PlatformChoice::Cpu {
        let dropped: Vec<String> = functions.iter().filter(|f| f.binary.is_some()).map(|f| f.name.clone()).collect();
        if !dropped.is_empty()
            && let Some(span) = req.locate().key(&yaml_path!["binaries"])
        {
            diags.push(Diagnostic::warning(span, msg::binary::skipping_binaries(&dropped)));
        }
        functions.retain(|f| f.platform == Platform::Cpu);
    }
    functions.sort_by(|a, b| (&a.file, a.line, &a.name).cmp(&(&b.file, b.line, &b.name)));
    if req.settings.building && functions.is_empty() {
        diags.push(Diagnostic::file(Severity::Warning, req.root_file, msg::NO_FUNCTIONS).hint(msg::HINT_NO_FUNCTIONS));
    }
    let namespaced = modules.namespaced;
    let modules = names::name_all(req, &prefix, &modules, &mut functions, &mut diags);
    let algorithms = algorithms::resolve(listed, &functions, &modules, namespaced, &mut diags);
    let mut plan = plan::resolve(req, &name, choice, &sources, jax_min, !binaries.images.is_empty());
    if let Some(ids) = targets {
        plan.targets = ids;
    }
    check_include_paths(req, &plan.includes, &functions, &mut sources, &mut diags);
    let tuning = tune::check_tune(req, &mut functions, &modules, &algorithms, namespaced, &mut diags);
    symbols::decide(req, &naming, &mut functions, &tuning, &mut diags);
    let library = Library {
        name,
        prefix,
        functions,
        modules,
        namespaced,
        sources,
        algorithms,
        plan,
        root: req.root.to_path_buf(),
        binaries: binaries.images.clone(),
        tuning,
    };
    (library, diags)
}

/// The source file of that relative name, if the root holds one.
pub(super) fn source_id(req: &RunInput, file: &str) -> Option<FileId> {
    req.sources.iter().map(|(id, _)| *id).find(|id| req.map.get(*id).name == file)
}

/// `--name`, else begen.yaml's `name`, else the directory's name; it names
/// `lib<name>.so` and the Python module, so it must be an identifier and
/// not a Python keyword. A scan reports only a bad name begen.yaml gives:
/// another matters only once something is built.
fn check_library_name(req: &RunInput, diags: &mut Vec<Diagnostic>) -> String {
    let dir = req.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (name, from, span) = match (req.settings.name.as_deref(), &req.config.name) {
        (Some(n), _) => (n.to_string(), "given name", None),
        (None, Some(n)) => (n.clone(), "name in begen.yaml", req.locate().key(&yaml_path!["name"])),
        (None, None) => (dir, "directory name", None),
    };
    let message = if !is_identifier(&name) || is_py_keyword(&name) {
        Some(msg::bad_library_name(&name, from))
    } else if shadows_py_module(&name) {
        // The generated module or JAX imports a module of this name: one
        // of the two would be imported in place of the other.
        Some(msg::library_shadows_module(&name, from))
    } else {
        None
    };
    if let Some(message) = message
        && (req.settings.building || span.is_some())
    {
        let d = match span {
            Some(span) => Diagnostic::error(span, message),
            None => Diagnostic::file(Severity::Error, req.root_file, message),
        };
        diags.push(d.hint(msg::HINT_LIBRARY_NAME));
    }
    name
}

/// The caller's prefix (`--prefix`), else begen.yaml's `prefix`
/// (identifiers joined by dots), else the name.
fn check_prefix(req: &RunInput, name: &str, diags: &mut Vec<Diagnostic>) -> String {
    let (prefix, span) = match (&req.settings.prefix, &req.config.prefix) {
        (Some(prefix), _) => (prefix, None),
        (None, Some(prefix)) => (prefix, req.locate().key(&yaml_path!["prefix"])),
        (None, None) => return name.to_string(),
    };
    if !prefix.split('.').all(is_identifier) {
        match span {
            Some(span) => diags.push(Diagnostic::error(span, msg::bad_prefix(prefix))),
            None if req.settings.prefix.is_some() => {
                diags.push(Diagnostic::file(Severity::Error, req.root_file, msg::bad_prefix(prefix)))
            }
            None => {}
        }
    }
    prefix.clone()
}

/// The caller's platform, else begen.yaml's, else `auto`.
fn check_platform(req: &RunInput, diags: &mut Vec<Diagnostic>) -> PlatformChoice {
    let configured = req.config.platform.as_deref().and_then(|p| {
        let choice = PlatformChoice::parse(p);
        if choice.is_none()
            && let Some(span) = req.locate().key(&yaml_path!["platform"])
        {
            // Other accelerators' names are no slips of `cpu` (`tpu`, one
            // edit away); a GPU is built for as `cuda`.
            let near = match p {
                "gpu" | "nvidia" => Some("cuda"),
                "tpu" | "rocm" | "metal" => None,
                _ => crate::diag::suggest::closest(p, ["cpu", "cuda", "auto"]),
            };
            diags.push(Diagnostic::error(span, msg::bad_platform(p, near)));
        }
        choice
    });
    req.settings.platform.or(configured).unwrap_or_default()
}

/// begen.yaml's `targets:` when the caller names none (`--target`,
/// `.targets()`): each name one of `target::parse_names`', an unknown one
/// an error at its item with the closest name. None: the caller's targets
/// (already checked) or begen's default.
fn check_targets(req: &RunInput, diags: &mut Vec<Diagnostic>) -> Option<Vec<crate::model::generated::TargetId>> {
    if !req.settings.targets.is_empty() || req.config.targets.is_empty() {
        return None;
    }
    for (i, name) in req.config.targets.iter().enumerate() {
        if let Err(e) = crate::target::parse_names(std::slice::from_ref(name))
            && e.starts_with("unknown target")
            && let Some(span) = req.locate().key(&yaml_path!["targets", i])
        {
            diags.push(Diagnostic::error(span, format!("begen.yaml: {e}")));
            return None;
        }
    }
    match crate::target::parse_names(&req.config.targets) {
        Ok(ids) => Some(if ids.is_empty() { crate::model::generated::DEFAULT_TARGETS.to_vec() } else { ids }),
        Err(e) => {
            if let Some(span) = req.locate().key(&yaml_path!["targets"]) {
                diags.push(Diagnostic::error(span, format!("begen.yaml: {e}")));
            }
            None
        }
    }
}

/// The caller's `jax_min`, else begen.yaml's: a release number (`0.10.2`),
/// since begen asks pip for that jaxlib and names a folder after it.
fn check_jax_min(req: &RunInput, diags: &mut Vec<Diagnostic>) -> Option<String> {
    let (version, span) = match (&req.settings.jax_min, &req.config.jax_min) {
        (Some(v), _) => (v, None),
        (None, Some(v)) => (v, req.locate().key(&yaml_path!["jax_min"])),
        (None, None) => return None,
    };
    let message = if !crate::model::is_release_number(version) {
        msg::bad_jax_min(version)
    } else if !jax_min_supported(version) {
        msg::unsupported_jax_min(version, JAX_MIN_OLDEST, JAX_MIN_BEYOND)
    } else {
        return Some(version.clone());
    };
    let d = match span {
        Some(span) => Diagnostic::error(span, message),
        None => Diagnostic::file(Severity::Error, req.root_file, message),
    };
    diags.push(d);
    None
}

/// The oldest jax a library can be built for (`jax_min`), and the first
/// release number beyond the supported ones (jax has had no 1.x release;
/// one would have to be tried before it is accepted).
const JAX_MIN_OLDEST: &str = "0.10.2";
const JAX_MIN_BEYOND: &str = "1.0";

/// Whether the release number `version` is in
/// [`JAX_MIN_OLDEST`]..[`JAX_MIN_BEYOND`].
fn jax_min_supported(version: &str) -> bool {
    let parts = |v: &str| v.split('.').map(|p| p.parse::<u64>().unwrap_or(u64::MAX)).collect::<Vec<_>>();
    let v = parts(version);
    v >= parts(JAX_MIN_OLDEST) && v < parts(JAX_MIN_BEYOND)
}

/// `sources:` keys must name source files under the root.
fn check_config_sources(req: &RunInput, diags: &mut Vec<Diagnostic>) {
    for file in req.config.sources.keys() {
        let known = source_id(req, file).is_some();
        if !known && let Some(span) = req.locate().key(&yaml_path!["sources", file]) {
            diags.push(Diagnostic::error(span, msg::config_source_missing(file, near_source(req, file))));
        }
    }
}

/// The source file under the root whose relative name is closest to `file`,
/// a name begen.yaml gives that is none of them.
pub(super) fn near_source<'a>(req: &'a RunInput, file: &str) -> Option<&'a str> {
    crate::diag::suggest::closest(file, req.sources.iter().map(|(id, _)| req.map.get(*id).name.as_str()))
}

/// A declared function that checked out, before it is named: where it is
/// defined, its parameters and template consts, and what a precompiled
/// kernel's handler launches.
pub(super) struct Checked {
    pub(super) at: Defined,
    pub(super) params: Vec<Param>,
    pub(super) consts: Vec<Const>,
    pub(super) binary: Option<Box<BinaryCall>>,
    pub(super) returns: crate::model::Returns,
    pub(super) native: Option<crate::model::Native>,
    pub(super) rets_like: Option<String>,
}

/// How a declared function's name stands in its module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeat {
    /// No other function of the module has the name: kept if it checks out.
    Unique,
    /// The first of several: reported by the others, not kept.
    First,
    /// Exported again; the first is written at this span.
    Again(Span),
}

/// A name exported twice in one module is an error at every repeat,
/// pointing at the first too, and none of its functions is kept. Declared
/// functions that fail their own checks still take their name.
fn find_repeats(instances: &[Placed]) -> Vec<Repeat> {
    let mut first: HashMap<(&str, &str), usize, par::FxBuildHasher> = HashMap::default();
    let mut repeats = vec![Repeat::Unique; instances.len()];
    for (k, i) in instances.iter().enumerate() {
        match first.get(&(i.module.as_str(), i.declared.name.as_str())) {
            Some(&f) => {
                repeats[f] = Repeat::First;
                repeats[k] = Repeat::Again(instances[f].declared.name_span);
            }
            None => {
                first.insert((i.module.as_str(), i.declared.name.as_str()), k);
            }
        }
    }
    repeats
}

/// Checks every declared function, in parallel: the functions that check
/// out and have a name of their own in their module. The workers report the
/// repeated names too, and drop what is not kept.
fn check_functions(
    req: &RunInput,
    binaries: &Binaries,
    instances: Vec<Placed>,
    repeats: &[Repeat],
    modules: &modules::Modules,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Function> {
    // begen.yaml's named contracts, which the functions' tokens may use.
    let contracts = &named::declared(req, diags);
    let map = req.map;
    let config = &req.config;
    let locate = req.locate();
    // Where a binary kernel is defined: the configuration file.
    let (config_name, config_path) = match req.config_file {
        Some(c) => (map.get(c.id).name.to_string(), map.get(c.id).path.clone()),
        None => (crate::config::FILE.to_string(), req.root.join(crate::config::FILE)),
    };
    // Small items (a declared function and a checked one are large, and a
    // large tree has thousands): each takes its instance out of `slots` and
    // drops it on the worker, and a function that may be kept (its name is
    // unique) is written into a slot of its own in `kept`, in order, which
    // becomes the functions in place: no second copy of every function.
    struct Item<'a> {
        instance: &'a mut Option<Placed>,
        repeat: Repeat,
        function: Option<&'a mut Option<Function>>,
        diags: Vec<Diagnostic>,
    }
    let mut slots: Vec<Option<Placed>> = instances.into_iter().map(Some).collect();
    let unique = repeats.iter().filter(|&&r| r == Repeat::Unique).count();
    let mut kept: Vec<Option<Function>> = std::iter::repeat_with(|| None).take(unique).collect();
    let mut kept_slots = kept.iter_mut();
    let mut items: Vec<Item> = slots
        .iter_mut()
        .zip(repeats)
        .map(|(instance, &repeat)| Item {
            instance,
            repeat,
            function: if repeat == Repeat::Unique { kept_slots.next() } else { None },
            diags: Vec::new(),
        })
        .collect();
    par::for_each(
        &mut items,
        par::threads(),
        || (),
        |_, item| {
            let Some(Placed { declared: mut d, module, variant }) = item.instance.take() else { return };
            // A repeated name, reported after the function's own problems.
            let repeated = match item.repeat {
                Repeat::Again(first) => {
                    let (message, hint) = if modules.namespaced {
                        (msg::duplicate_in_module(&d.name, &module), msg::HINT_DUPLICATE_MODULES)
                    } else {
                        (msg::duplicate_function(&d.name), msg::HINT_DUPLICATE)
                    };
                    Some(
                        Diagnostic::error(d.name_span, message)
                            .label(msg::LABEL_EXPORTED_AGAIN)
                            .with(first, msg::LABEL_FIRST_EXPORTED)
                            .hint(hint),
                    )
                }
                Repeat::Unique | Repeat::First => None,
            };
            let (checked, mut diags) = match d.callee {
                Callee::Source { .. } => {
                    let entry = function_entry(config, &d.name, &module);
                    d.stateful = entry.is_some_and(|o| o.instantiate.is_some());
                    let cx = arg_spec::Context { contracts, warn_order: warn_order(config, entry) };
                    arg_spec::check_declared(&d, map, &cx)
                }
                Callee::Binary { kernel } => binaries::check_kernel(
                    &d,
                    &binaries.kernels[kernel],
                    binaries,
                    map,
                    (&config_name, &config_path),
                    &locate,
                ),
            };
            // A variant repeats its source's functions: their own problems are
            // reported once, with the source's.
            if variant.is_some() {
                diags.clear();
            }
            diags.extend(repeated);
            // Named only when kept: a large tree may repeat every name.
            if let (Some(slot), Some(c)) = (item.function.as_deref_mut(), checked) {
                let names = FunctionNames { module, variant };
                let mut f = Function::new(d.name.clone(), names, c.at, c.params, c.consts, c.binary);
                f.returns = c.returns;
                f.native = c.native;
                f.rets_like = c.rets_like;
                f.creators = std::mem::take(&mut d.creators);
                *slot = Some(f);
            }
            item.diags = diags;
        },
    );
    // One allocation: a large tree has a diagnostic per function.
    diags.reserve(items.iter().map(|i| i.diags.len()).sum());
    for item in items {
        diags.extend(item.diags);
    }
    // In place (an `Option<Function>` is a `Function`'s size): `flatten`
    // would collect into a new vector.
    #[expect(clippy::filter_map_identity, reason = "collects in place, where `flatten` allocates anew")]
    let functions = kept.into_iter().filter_map(|f| f).collect();
    functions
}

/// Whether the conventional order's warning is on for function `name` of
/// `module`: its `functions:` entry's `warnings: {order: ...}` (keyed
/// `module.name` or `name`), else the top-level one's, else on.
/// begen.yaml's `functions:` entry of a function: under `module.name`, else
/// under its plain name.
fn function_entry<'c>(
    config: &'c crate::config::Config,
    name: &str,
    module: &str,
) -> Option<&'c crate::config::FunctionConfig> {
    let functions = &config.functions;
    if functions.is_empty() {
        return None;
    }
    functions.get(&format!("{module}.{name}")).or_else(|| functions.get(name))
}

/// Whether the conventional-order warning is on: the function's setting,
/// else the library's, else on.
fn warn_order(config: &crate::config::Config, entry: Option<&crate::config::FunctionConfig>) -> bool {
    entry.and_then(|f| f.warnings.order).or(config.warnings.order).unwrap_or(true)
}

/// A declared function placed in one module (not a template instance,
/// `model::Instance`): its file's, or one of its file's
/// variants'.
struct Placed {
    declared: Declared,
    module: String,
    variant: Option<String>,
}

/// Every declared function in its file's module, and once more in each
/// variant of its file.
fn instances(
    declared: Vec<Vec<Declared>>,
    modules: &modules::Modules,
    variants: &BTreeMap<FileId, Vec<Variant>>,
) -> Vec<Placed> {
    let mut out = Vec::with_capacity(declared.iter().map(Vec::len).sum());
    for d in declared.into_iter().flatten() {
        let file = match d.callee {
            Callee::Source { file } => file,
            // Binary kernels are in the library's default module.
            Callee::Binary { .. } => {
                out.push(Placed { module: modules.default_module().to_string(), declared: d, variant: None });
                continue;
            }
        };
        for v in variants.get(&file).into_iter().flatten() {
            out.push(Placed { declared: d.clone(), module: v.module.clone(), variant: Some(v.module.clone()) });
        }
        out.push(Placed { module: modules.of(file).to_string(), declared: d, variant: None });
    }
    out
}

/// begen.yaml's `variants:`: each names a source, a module that is an
/// identifier, and defines of identifiers to numbers, booleans or
/// identifiers (they are written into generated C++).
fn check_variants(req: &RunInput, diags: &mut Vec<Diagnostic>) -> BTreeMap<FileId, Vec<Variant>> {
    let mut out = BTreeMap::new();
    for (file, list) in &req.config.variants {
        let Some(id) = source_id(req, file) else {
            if let Some(span) = req.locate().key(&yaml_path!["variants", file]) {
                diags.push(Diagnostic::error(span, msg::config_source_missing(file, near_source(req, file))));
            }
            continue;
        };
        let mut variants = Vec::new();
        for (i, v) in list.iter().enumerate() {
            let mut ok = true;
            if !is_identifier(&v.module) {
                ok = false;
                if let Some(span) = req.locate().value(&yaml_path!["variants", file, i, "module"]) {
                    diags.push(Diagnostic::error(span, msg::bad_module_name(&v.module)).hint(msg::HINT_MODULE_NAME));
                }
            }
            let mut defines = Vec::new();
            for (name, value) in &v.defines {
                let text = define_value(value);
                match (is_identifier(name), &text) {
                    (true, Some(text)) => defines.push((name.clone(), text.clone())),
                    _ => {
                        ok = false;
                        if let Some(span) = req.locate().key(&yaml_path!["variants", file, i, "defines", name]) {
                            diags.push(Diagnostic::error(span, msg::bad_define(name)).hint(msg::HINT_DEFINE));
                        }
                    }
                }
            }
            if ok {
                variants.push(Variant { module: v.module.clone(), defines });
            }
        }
        out.insert(id, variants);
    }
    out
}

/// The C++ text of a define's value: a number, `1`/`0` for a boolean, or
/// an identifier; `None` for anything else.
fn define_value(value: &serde_yaml_ng::Value) -> Option<String> {
    use serde_yaml_ng::Value;
    match value {
        Value::Bool(b) => Some(if *b { "1" } else { "0" }.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if is_identifier(s) => Some(s.clone()),
        Value::String(_) | Value::Null | Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => None,
    }
}

/// Applies begen.yaml's `functions:` options. A key is a function name
/// (every function of that name, in any module) or `module.function`; one
/// that names no declared function is an error.
fn check_options(
    req: &RunInput,
    mut functions: Vec<Function>,
    declared_names: &BTreeSet<String>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Function> {
    // Each function under its name and its `module.name`, looked up once
    // per key (begen.yaml may list thousands).
    let mut by_key: HashMap<String, Vec<usize>, par::FxBuildHasher> = HashMap::default();
    let listed = if req.config.functions.is_empty() { &[][..] } else { &functions[..] };
    for (k, f) in listed.iter().enumerate() {
        by_key.entry(f.name.clone()).or_default().push(k);
        by_key.entry(format!("{}.{}", f.module, f.name)).or_default().push(k);
    }
    for (key, opts) in &req.config.functions {
        let vmap_method = match &opts.vmap_method {
            None => VmapMethod::default(),
            Some(v) => VmapMethod::parse(v).unwrap_or_else(|| {
                if let Some(span) = req.locate().key(&yaml_path!["functions", key, "vmap_method"]) {
                    let near = crate::diag::suggest::closest(v, VmapMethod::ALL.iter().map(|m| m.as_str()));
                    diags.push(Diagnostic::error(span, msg::bad_vmap_method(v, near)));
                }
                VmapMethod::default()
            }),
        };
        if !declared_names.contains(key) {
            if let Some(span) = req.locate().key(&yaml_path!["functions", key]) {
                let near = crate::diag::suggest::closest(key, declared_names.iter().map(String::as_str));
                diags.push(Diagnostic::error(span, msg::unknown_config_function(key, near)));
            }
            continue;
        }
        let python_vjp = python_rules::check(req, key, opts, diags);
        let mut seen = BTreeSet::new();
        for &k in by_key.get(key).into_iter().flatten() {
            // Problems with `unsupported:` are reported once per key.
            let mut found = Vec::new();
            let unsupported = algorithms::check_unsupported(req, key, opts, &functions[k], &mut found);
            diags.extend(found.into_iter().filter(|d| seen.insert(d.message.clone())));
            functions[k].options = FunctionOptions {
                command_buffer: opts.command_buffer.unwrap_or(false),
                vmap_method,
                has_side_effect: opts.has_side_effect.unwrap_or(false),
                vjp: opts.vjp.clone(),
                residuals: opts.residuals.clone().unwrap_or_default(),
                vjp_bind: Vec::new(),
                vjp_grads: Vec::new(),
                unsupported,
                linear: (opts.linear.iter().flatten())
                    .filter_map(|l| match l {
                        LinearItem::One(name) => Some(name.clone()),
                        LinearItem::Group(_) => None,
                    })
                    .collect(),
                groups: (opts.linear.iter().flatten())
                    .filter_map(|l| match l {
                        LinearItem::Group(names) => Some(names.clone()),
                        LinearItem::One(_) => None,
                    })
                    .collect(),
                transpose: opts.transpose.iter().map(|(p, k)| (p.clone(), k.kernel().to_string())).collect(),
                transpose_bind: (opts.transpose.iter())
                    .filter_map(|(p, k)| match k {
                        crate::config::TransposeConfig::Mapped(m) => Some(crate::model::TransposeBind {
                            param: p.clone(),
                            args: m.args.clone(),
                            by_position: m.by_position,
                        }),
                        crate::config::TransposeConfig::Kernel(_) => None,
                    })
                    .collect(),
                jvp: opts.jvp.clone(),
                python_vjp: python_vjp.clone(),
                zero_outputs: opts.zero_outputs.unwrap_or(false),
                instantiate: opts.instantiate.clone(),
                shard: opts.shard.clone().unwrap_or_default(),
                reduce: opts.reduce.clone().unwrap_or_default(),
                sum: opts.sum.iter().map(|(o, ds)| (o.clone(), ds.clone())).collect(),
                fold: opts.vmap.iter().flat_map(|v| &v.fold).map(|(p, d)| (p.clone(), d.clone())).collect(),
                fold_plan: None,
            }
            .into();
            if let Some(d) = fixed_rank_batching(req, key, &functions[k])
                && seen.insert(d.message.clone())
            {
                diags.push(d);
            }
            if let Some(d) = instantiate_problem(req, key, &functions[k])
                && seen.insert(d.message.clone())
            {
                diags.push(d);
            }
            if let Some(d) = state_in_command_buffer(req, key, &functions[k]) {
                diags.push(d);
            }
        }
    }
    // A kernel that takes state without a function that creates it.
    for f in &functions {
        if let (Some(at), None) = (f.state_param(), &f.options.instantiate) {
            if f.native.is_some() {
                diags.push(Diagnostic::error(at, msg::state_without_instantiate(&f.name)).hint(msg::HINT_INSTANTIATE));
            } else {
                diags.push(Diagnostic::error(at, msg::be_state_without_instantiate(&f.name)).hint(msg::HINT_BE_STATE));
            }
        }
    }
    functions
}

/// A `functions:` entry's `instantiate:` that is no C++ identifier, that
/// names a function for a kernel that takes no state, or that names one the
/// kernel's source surely lacks or declares with another signature
/// ([`creator::problem`]).
fn instantiate_problem(req: &RunInput, key: &str, f: &Function) -> Option<Diagnostic> {
    let name = f.options.instantiate.as_ref()?;
    let span = req.locate().key(&yaml_path!["functions", key, "instantiate"])?;
    if !is_identifier(name) {
        Some(Diagnostic::error(span, msg::bad_instantiate(name)).hint(msg::HINT_IDENTIFIER))
    } else if !f.takes_state() && f.native.is_some() {
        Some(Diagnostic::error(span, msg::instantiate_without_state(&f.name, name)).hint(msg::HINT_INSTANTIATE))
    } else if !f.takes_state() {
        Some(Diagnostic::error(span, msg::be_instantiate_without_state(&f.name, name)).hint(msg::HINT_BE_STATE))
    } else {
        let at = req.locate().value(&yaml_path!["functions", key, "instantiate"])?;
        creator::problem(req.config, f, name, at)
    }
}

/// A kernel with state (a BE kernel's `T& state`, a native kernel's `T*`)
/// marked `command_buffer: true`: the glue makes each device's state on
/// that device's first call, inside what XLA would capture into a CUDA
/// graph, where the `instantiate:` function's allocations cannot run.
fn state_in_command_buffer(req: &RunInput, key: &str, f: &Function) -> Option<Diagnostic> {
    if !(f.options.command_buffer && f.takes_state() && f.options.instantiate.is_some()) {
        return None;
    }
    let span = req.locate().key(&yaml_path!["functions", key, "command_buffer"])?;
    Some(Diagnostic::error(span, msg::state_in_command_buffer(&f.name)).hint(msg::HINT_STATE_COMMAND_BUFFER))
}

/// A kernel whose handler decodes a buffer of fixed rank (a parameter typed
/// with a shape, `float32[n]`, a list of such arrays, or a native buffer
/// type with a rank, `ffi::Buffer<ffi::F64, 2>`) cannot take a
/// `vmap_method` that passes the batch as a leading dimension
/// (`expand_dims`, `broadcast_all`, `legacy_vectorized`): an error at
/// begen.yaml's `vmap_method`, naming the kernel, the parameter and why.
fn fixed_rank_batching(req: &RunInput, key: &str, f: &Function) -> Option<Diagnostic> {
    let method = f.options.vmap_method;
    if matches!(method, VmapMethod::Sequential | VmapMethod::SequentialUnrolled) {
        return None;
    }
    let typed = f.params.iter().find_map(|p| match &p.token {
        // A shape with a rest (`[..., n]`) takes a leading batch dimension.
        Token::Arg(Some(t)) | Token::Ret(Some(t)) | Token::InOut(Some(t)) | Token::List(t)
            if t.fixed_rank().is_some() =>
        {
            Some((p, t))
        }
        _ => None,
    });
    // A native kernel's buffer type that fixes a rank (`ffi::Buffer<T, 2>`):
    // XLA's decoder refuses the batched buffer before the kernel runs.
    let native = || f.native.as_ref()?.ranks.first();
    let (message, hint) = match (typed, native()) {
        (Some((param, contract)), _) => {
            let rank = contract.dims.as_ref().map_or(0, Vec::len);
            let message =
                msg::vmap_method_fixed_rank(method.as_str(), &f.name, &param.name, &contract.to_string(), rank);
            (message, msg::HINT_VMAP_FIXED_RANK.to_string())
        }
        (None, Some(r)) => {
            let message = msg::vmap_method_fixed_rank(method.as_str(), &f.name, &r.name, &r.ty, r.rank as usize);
            (message, msg::hint_vmap_native_rank(&r.ty, r.rank))
        }
        (None, None) => return None,
    };
    let span = req.locate().key(&yaml_path!["functions", key, "vmap_method"])?;
    Some(Diagnostic::error(span, message).hint(hint))
}

/// A wrapper begen generated (emit's names).
fn is_generated(name: &str) -> bool {
    name.ends_with(".begen.cc") || name.ends_with(".begen.cu")
}

/// The sources to compile: all under the root but begen's own outputs
/// (silently when under the output directory, with a warning for a stray
/// generated wrapper) and, for platform `cpu`, CUDA sources (a warning each).
fn check_sources(
    req: &RunInput,
    functions: &[Function],
    choice: PlatformChoice,
    variants: &BTreeMap<FileId, Vec<Variant>>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<SourceFile> {
    let out = req.settings.out.as_deref().and_then(|o| std::fs::canonicalize(o).ok());
    // OUT inside the kernel directory: what is under it is begen's. OUT the
    // kernel directory or above it (`--out .` from the project): every
    // source is under OUT, and only the sources `begen generate` wrote
    // into OUT/gen are begen's.
    let holds_root = out.as_ref().is_some_and(|out| std::fs::canonicalize(req.root).is_ok_and(|r| r.starts_with(out)));
    let inside_out = |path: &Path| {
        out.as_ref().is_some_and(|out| {
            let ours = if holds_root { out.join("gen") } else { out.clone() };
            std::fs::canonicalize(path).is_ok_and(|p| p.starts_with(ours))
        })
    };
    let mut sources = Vec::new();
    for &(id, platform) in req.sources {
        let f = req.map.get(id);
        if inside_out(&f.path) && (!holds_root || is_generated(&f.name)) {
            continue;
        }
        if is_generated(&f.name) {
            diags.push(
                Diagnostic::file(Severity::Warning, id, msg::skipping_generated(&f.name)).hint(msg::HINT_GENERATED),
            );
            continue;
        }
        if choice == PlatformChoice::Cpu && platform == Platform::Cuda {
            let kernels: Vec<String> = functions.iter().filter(|k| k.file == f.name).map(|k| k.name.clone()).collect();
            diags.push(
                Diagnostic::file(Severity::Warning, id, msg::skipping_cuda(&f.name, &kernels))
                    .hint(msg::HINT_SKIPPING_CUDA),
            );
            continue;
        }
        let variants = variants.get(&id).cloned().unwrap_or_default();
        sources.push(SourceFile { file: f.name.clone(), path: f.path.clone(), platform, include: None, variants });
    }
    sources.sort_by(|a, b| a.file.cmp(&b.file));
    sources
}

/// Every annotated source is `#include`d by its wrapper as its path
/// relative to the root (on every TU's include path), so generated sources
/// and their objects do not depend on where the tree is: the text must be
/// UTF-8 without `"`, `\` or control characters. Where a directory searched
/// before the root (the caller's or begen.yaml's include directories) holds
/// a file of the same relative path, the absolute path is written instead.
fn check_include_paths(
    req: &RunInput,
    includes: &[PathBuf],
    functions: &[Function],
    sources: &mut [SourceFile],
    diags: &mut Vec<Diagnostic>,
) {
    let annotated: BTreeSet<&str> = functions.iter().map(|f| f.file.as_str()).collect();
    // The plan's include directories end with the root itself.
    let before_root = includes.strip_suffix(&[req.root.to_path_buf()]).unwrap_or(includes);
    for s in sources.iter_mut().filter(|s| annotated.contains(s.file.as_str())) {
        let shadowed = before_root.iter().any(|d| d.join(&s.file).is_file());
        let path: PathBuf = if shadowed {
            std::path::absolute(&s.path).unwrap_or_else(|_| s.path.clone())
        } else {
            // The path as the file system spells it below the root: a name
            // that is not UTF-8 has only a lossy `file`, which would name
            // another file.
            let depth = s.file.split('/').count();
            let parts: Vec<&std::ffi::OsStr> = s.path.iter().collect();
            parts[parts.len().saturating_sub(depth)..].iter().collect()
        };
        match include_path_text(&path) {
            Ok(text) => s.include = Some(text),
            Err(why) => {
                if let Some((id, _)) = req.sources.iter().find(|(id, _)| req.map.get(*id).name == s.file) {
                    let d = Diagnostic::file(
                        Severity::Error,
                        *id,
                        msg::unincludable_path(&path.display().to_string(), &why),
                    );
                    diags.push(d.hint(msg::HINT_UNINCLUDABLE));
                }
            }
        }
    }
}

/// The text of a path for `#include "<text>"`: UTF-8, without `"`, `\` or
/// control characters (any of which could end the directive or start a new
/// line of C++).
pub(crate) fn include_path_text(path: &Path) -> Result<String, String> {
    let text = path.to_str().ok_or_else(|| msg::PATH_NOT_UTF8.to_string())?;
    #[cfg(windows)]
    let text = &text.replace('\\', "/");
    if let Some(c) = text.chars().find(|&c| c == '"' || c == '\\' || c.is_control() || crate::model::is_invisible(c)) {
        return Err(msg::path_contains(c));
    }
    Ok(text.to_string())
}

/// `include_dirs:` entries must be directories (a missing one would be
/// passed to the compiler silently): a relative one from the root, which may
/// lead out of it (`../shared/include`), an absolute one as it is (a system
/// folder such as `/usr/include/eigen3`).
fn check_include_dirs(req: &RunInput, diags: &mut Vec<Diagnostic>) {
    check_dirs(req, &yaml_path!["include_dirs"], &req.config.include_dirs, msg::include_dir_missing, diags);
    // The caller's `-I` (read from the caller's folder, see the plan).
    for dir in &req.settings.includes {
        if !plan::caller_path(dir).is_dir() {
            let message = msg::include_option_missing(&dir.display().to_string());
            diags.push(Diagnostic::file(Severity::Error, req.root_file, message));
        }
    }
}

/// Each of `dirs` must be a directory, a relative one read from the root
/// (it may lead out of it), an absolute one as it is; a missing one is an
/// error where begen.yaml lists it (`dirs` is the list at `section`).
fn check_dirs(
    req: &RunInput,
    section: &[Seg],
    dirs: &[String],
    missing: fn(&str) -> String,
    diags: &mut Vec<Diagnostic>,
) {
    for (i, dir) in dirs.iter().enumerate() {
        if !req.root.join(dir).is_dir()
            && let Some(span) = req.locate().value(&[section, &yaml_path![i]].concat())
        {
            diags.push(Diagnostic::error(span, missing(dir)));
        }
    }
}

/// `link:` values: a library is a plain `-l` name (no path, no `lib`
/// prefix or extension needed), a directory must exist (as `include_dirs:`).
fn check_link(req: &RunInput, diags: &mut Vec<Diagnostic>) {
    let link = &req.config.link;
    for (i, lib) in link.libs.iter().enumerate() {
        let plain = !lib.is_empty() && lib.chars().all(|c| c.is_ascii_alphanumeric() || "_-+.".contains(c));
        if !plain && let Some(span) = req.locate().value(&yaml_path!["link", "libs", i]) {
            diags.push(Diagnostic::error(span, msg::bad_link_lib(lib)).hint(msg::HINT_LINK_LIB));
        }
    }
    check_dirs(req, &yaml_path!["link", "dirs"], &link.dirs, msg::link_dir_missing, diags);
}

#[cfg(test)]
mod tests {
    use super::include_path_text;
    use std::path::Path;

    #[test]
    fn include_paths_reject_what_could_escape_or_mislead() {
        for bad in ["a\"b.cu", "a\nb.cu", "a\\b.cu", "a\u{1}.cu", "evil\u{202E}uc.cu", "zero\u{200B}width.cu"] {
            assert!(include_path_text(Path::new(bad)).is_err(), "{bad:?}");
        }
        assert_eq!(include_path_text(Path::new("dir with space/é.cu")).unwrap(), "dir with space/é.cu");
    }
}
