//! Algorithms in the torch target: one typed function per algorithm of
//! begen.yaml's `algorithms:`, which calls the best of its implementations'
//! ops for the call, as the JAX module's algorithm does. The platform is the
//! first input's device (`cpu`, `cuda`); among that platform's
//! implementations, best first, those that serve the inputs' dtypes (where
//! they differ by them), the first that supports the call's attribute
//! values (`unsupported:`; with `fallback: false` only the best may). It
//! runs in Python on every call, eagerly a few dict reads, and dynamo
//! traces it under `torch.compile` (the devices, dtypes and attribute
//! values are constants of the graph), so the graph holds the chosen op.
//!
//! A tuned algorithm (`implementations: true`) takes `config=
//! {"implementation": NAME}`; without it, the JAX module's tables choose
//! among the implementations that support the call (`algorithms_tuned.py`).

use std::fmt::Write as _;

use super::{Op, pylit};
use crate::emit::names::py_str;
use crate::emit::tune::tune_key;
use crate::model::{Library, Platform, TunedAlgorithm};

/// One algorithm as the torch module dispatches it: the ops of its
/// implementations the target keeps, best first.
struct TorchAlgorithm<'o, 'a> {
    name: &'a str,
    fallback: bool,
    /// Its tuning over its implementations, if tuned.
    tuned: Option<&'a TunedAlgorithm>,
    implementations: Vec<(&'o Op<'a>, i64)>,
}

/// The keyword names of an op's attributes and value constants, in order:
/// the implementations agree on them (checked), up to renames.
fn keywords(op: &Op<'_>) -> Vec<String> {
    let attrs = op.attrs.iter().map(|p| p.py_name.to_string());
    attrs.chain(op.value_consts().map(|k| k.py_name.clone())).collect()
}

/// The algorithms at least one of whose implementations the target keeps
/// (`kept` indexes `ops`).
fn algorithms<'o, 'a>(library: &'a Library, ops: &'o [Op<'a>], kept: &[usize]) -> Vec<TorchAlgorithm<'o, 'a>> {
    let tuned = |k: usize| library.tuning.algorithms.iter().find(|t| t.algorithm == k);
    library
        .algorithms
        .iter()
        .enumerate()
        .filter_map(|(k, a)| {
            let implementations: Vec<(&Op<'a>, i64)> = a
                .implementations
                .iter()
                .filter_map(|i| {
                    let f = &library.functions[i.function];
                    let op = kept.iter().map(|&j| &ops[j]).find(|op| std::ptr::eq(op.f, f))?;
                    Some((op, i.priority))
                })
                .collect();
            (!implementations.is_empty()).then_some(TorchAlgorithm {
                name: &a.name,
                fallback: a.fallback,
                tuned: tuned(k),
                implementations,
            })
        })
        .collect()
}

/// The module's algorithm table, its dispatch and one function per
/// algorithm; the names it adds to `__all__`.
pub(super) fn py(library: &Library, ops: &[Op<'_>], kept: &[usize], out: &mut String) -> Vec<String> {
    let algorithms = algorithms(library, ops, kept);
    if algorithms.is_empty() {
        return Vec::new();
    }
    out.push_str(RUNTIME_PY);
    out.push_str("_BEGEN_ALGORITHMS = {\n");
    for a in &algorithms {
        let first = keywords(a.implementations[0].0);
        // Inputs' dtypes, where the implementations differ by them.
        let dtypes_of = |op: &Op<'_>| op.f.input_dtypes();
        let by_dtype = a.implementations.iter().any(|(op, _)| dtypes_of(op) != dtypes_of(a.implementations[0].0));
        let mut rows = Vec::new();
        for (op, priority) in &a.implementations {
            let own = keywords(op);
            let renames: Vec<String> = first
                .iter()
                .zip(&own)
                .filter(|(a, b)| a != b)
                .map(|(a, b)| format!("{}: {}", pylit(a), pylit(b)))
                .collect();
            let unsupported: Vec<String> =
                op.f.options
                    .unsupported
                    .iter()
                    .map(|(attr, values)| {
                        let py = op.f.params.iter().find(|p| *p.name == **attr).map_or(attr.as_str(), |p| &*p.py_name);
                        format!("{}: ({},)", pylit(py), values.join(", "))
                    })
                    .collect();
            let dtypes = if by_dtype {
                let ts: Vec<String> = dtypes_of(op)
                    .iter()
                    .map(|t| t.map_or_else(|| "None".to_string(), |t| pylit(super::torch_dtype(t).2)))
                    .collect();
                format!("({},)", ts.join(", "))
            } else {
                "()".to_string()
            };
            rows.push(format!(
                "        _BegenTorchImplementation({}, {}, {priority}, {{{}}}, {}, {{{}}}, {dtypes}),",
                pylit(&tune_key(library, op.f)),
                pylit(op.f.platform.as_str()),
                unsupported.join(", "),
                op.def_name,
                renames.join(", "),
            ));
        }
        let _ = writeln!(
            out,
            "    {}: ({}, {}, (\n{}\n    )),",
            pylit(a.name),
            if a.fallback { "True" } else { "False" },
            if a.tuned.is_some() { "True" } else { "False" },
            rows.join("\n")
        );
    }
    out.push_str("}\n\n\n");
    let tuned: Vec<&TorchAlgorithm<'_, '_>> = algorithms.iter().filter(|a| a.tuned.is_some()).collect();
    if !tuned.is_empty() {
        // What the tables are searched with: the JAX module's entry's
        // target, hash and key, and each platform's implementations.
        out.push_str("_BEGEN_TUNE_ALGORITHMS = {\n");
        for a in &tuned {
            let t = a.tuned.expect("tuned");
            let key_at: Vec<String> =
                t.key_at.iter().map(|(dim, input, axis)| format!("({}, {input}, {axis})", py_str(dim))).collect();
            let all = &library.algorithms[t.algorithm].implementations;
            let per_platform: Vec<String> = [Platform::Cpu, Platform::Cuda]
                .into_iter()
                .filter_map(|p| {
                    let names: Vec<String> = all
                        .iter()
                        .map(|i| &library.functions[i.function])
                        .filter(|f| f.platform == p)
                        .map(|f| py_str(&tune_key(library, f)))
                        .collect();
                    (!names.is_empty()).then(|| format!("{}: ({},)", py_str(p.as_str()), names.join(", ")))
                })
                .collect();
            let _ = writeln!(
                out,
                "    {}: {{\"target\": {}, \"hash\": {}, \"key_at\": ({}), \"implementations\": {{{}}}}},",
                pylit(a.name),
                py_str(&format!("algorithm:{}.{}", library.prefix, a.name)),
                py_str(&t.hash),
                key_at.iter().map(|k| format!("{k}, ")).collect::<String>(),
                per_platform.join(", ")
            );
        }
        out.push_str("}\n\n\n");
        out.push_str(TUNED_PY);
        out.push_str("\n\n");
    }
    for a in &algorithms {
        let best = a.implementations[0].0;
        let mut sig = best.py_params(false);
        let mut kw: Vec<String> = keywords(best).iter().map(|k| format!("{}: {k}", pylit(k))).collect();
        if !best.outs.is_empty() {
            // The implementations agree on their contracts: all out= ops.
            sig = super::keyword_after(sig, ["out".to_string()]);
            kw.push("\"out\": out".to_string());
        }
        if a.tuned.is_some() {
            sig = super::keyword_after(sig, ["config=None".to_string()]);
        }
        let inputs: Vec<&str> = best.inputs.iter().map(|p| &*p.py_name).collect();
        let listed: Vec<String> = a
            .implementations
            .iter()
            .map(|(op, p)| format!("{} ({}, priority {p})", op.f.name, op.f.platform.as_str()))
            .collect();
        let _ = writeln!(out, "def {}({sig}):", a.name);
        let _ = writeln!(
            out,
            "    \"\"\"Algorithm `{}`: calls its best implementation for the inputs' device.\n\n    {}\n    \"\"\"",
            a.name,
            listed.join(", ")
        );
        let config = if a.tuned.is_some() { "config" } else { "None" };
        let _ = writeln!(
            out,
            "    return _begen_algorithm({}, ({}{}), {{{}}}, {config})\n\n",
            pylit(a.name),
            inputs.join(", "),
            if inputs.len() == 1 { "," } else { "" },
            kw.join(", ")
        );
    }
    algorithms.iter().map(|a| pylit(a.name)).collect()
}

/// The stubs of the algorithms' functions: the best implementation's
/// signature (and `config=` where tuned).
pub(super) fn pyi(library: &Library, ops: &[Op<'_>], kept: &[usize], out: &mut String) {
    for a in algorithms(library, ops, kept) {
        let (mut params, ret) = a.implementations[0].0.pyi_parts();
        if a.tuned.is_some() {
            params = super::keyword_after(params, ["config: dict[str, str] | None = None".to_string()]);
        }
        let _ = writeln!(out, "def {}({params}) -> {ret}: ...", a.name);
    }
}

/// Whether the module has a tuned algorithm (so it holds the tuning runtime).
pub(super) fn tuned(library: &Library, ops: &[Op<'_>], kept: &[usize]) -> bool {
    algorithms(library, ops, kept).iter().any(|a| a.tuned.is_some())
}

/// The dispatch every module with an algorithm holds.
const RUNTIME_PY: &str = include_str!("algorithms.py");

/// A tuned algorithm's choice from the tables.
const TUNED_PY: &str = include_str!("algorithms_tuned.py");
