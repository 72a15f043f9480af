//! `_begen_ops` in `<NAME>_torch.py`: what `begen.testing.check_torch`
//! builds each op's inputs from and checks it with, as data.
//!
//! One entry per op, keyed by its name in the namespace:
//!
//! ```python
//! _begen_ops = {
//!     "square": {
//!         "call": "square",              # the typed function in this module
//!         "kernel": "square",            # the kernel, as messages name it
//!         "platform": "cpu",
//!         "args": (("x", ("T",), ("n",)),),   # tensor inputs: (name, dtype, dims)
//!         "inout": (),                   # inputs updated in place
//!         "out": (),                     # an out= op's outputs, the caller's: (name, dtype, dims),
//!                                        # None where the contract says nothing
//!         "types": {"T": ("float32", "float64")},
//!         "consts": (("TIMES", "int", (1, 2)),),   # value constants: (keyword, kind, values)
//!         "attrs": (("scale", "float", 1.0),),     # (keyword, kind, default or None)
//!         "differentiable": ("x",),      # inputs the autograd formula gives a gradient
//!         "vjp": "square_bwd",           # the backward op, or None
//!     },
//! }
//! ```
//!
//! The contracts are written as the JAX module's `_BEGEN_GRADS` writes them
//! (a dtype name, or a 1-tuple naming a type constant; dims names and
//! integers), so one drawing code reads both. Every value is a literal begen
//! writes ([`PyLit`], [`py_str`]): names the checks accepted, dtype names,
//! numbers; never text from the sources pasted as it is.

use std::fmt::Write as _;

use super::Op;
use crate::emit::names::{PyLit, py_str};
use crate::model::{ConstKind, ElementType, Extent, ScalarKind, Token};

/// Writes `_begen_ops` into `py`: an entry for each op of `ops` at `kept`
/// (those the module registers), with its backward op where `pairs` (forward
/// index, backward index) gives one.
pub(super) fn emit(ops: &[Op<'_>], kept: &[usize], pairs: &[(usize, usize)], py: &mut String) {
    py.push_str("#: Each op's contracts, attributes and gradients, as data: what\n");
    py.push_str("#: begen.testing.check_torch builds its inputs from and checks.\n");
    py.push_str("_begen_ops = {\n");
    for &i in kept {
        let op = &ops[i];
        let bwd = pairs.iter().find(|p| p.0 == i).map(|p| &ops[p.1]);
        let _ = writeln!(py, "    {}: {{", py_str(&op.name));
        for (key, value) in entry(op, bwd) {
            let _ = writeln!(py, "        {}: {value},", py_str(key));
        }
        py.push_str("    },\n");
    }
    py.push_str("}\n\n\n");
}

/// The fields of one op's entry, each a literal.
fn entry(op: &Op<'_>, bwd: Option<&Op<'_>>) -> Vec<(&'static str, String)> {
    let f = op.f;
    // (name, dtype, dims): None for what the contract does not say.
    let contract = |p: &&crate::model::Param| {
        let c = p.token.contract();
        let dtype = match super::known_dtype(f, p) {
            Some(ElementType::Dtype(t)) => PyLit::Str(t.as_str().to_string()),
            Some(ElementType::Param(k)) => PyLit::strs([k]),
            None => PyLit::Raw("None".into()),
        };
        let dims = match c.and_then(|c| c.dims.as_ref()) {
            Some(dims) => PyLit::tuple(dims.iter().map(|d| match d {
                Extent::Named(n) => PyLit::Str(n.clone()),
                Extent::Fixed(n) => PyLit::Raw(n.to_string()),
                // Refused by `Op::of`: never written.
                Extent::Rest(_) => PyLit::Raw("None".into()),
            })),
            None => PyLit::Raw("None".into()),
        };
        PyLit::tuple([PyLit::Str(op.tname(p).to_string()), dtype, dims])
    };
    let args = PyLit::tuple(op.inputs.iter().map(contract));
    let outs = PyLit::tuple(op.outs.iter().map(contract));
    let inout = PyLit::strs(op.inputs.iter().filter(|p| matches!(p.token, Token::InOut(_))).map(|p| &*p.py_name));
    let types: Vec<String> = f
        .consts
        .iter()
        .filter(|k| k.kind == ConstKind::Type)
        .map(|k| format!("{}: {}", py_str(&k.name), PyLit::strs(&k.values)))
        .collect();
    let consts = PyLit::tuple(f.consts.iter().filter_map(|k| match k.kind {
        ConstKind::Value(t) => {
            let bool_ = t.kind() == ScalarKind::Bool;
            let values = PyLit::tuple(k.values.iter().filter_map(|v| const_value(bool_, v)));
            Some(PyLit::tuple([PyLit::Str(k.py_name.clone()), kind_lit(bool_), values]))
        }
        ConstKind::Type => None,
    }));
    // A source tuned over its defines: their names and each built
    // candidate's values (what `where:` allows), passed as `config=`.
    let defines = if op.defines.is_empty() {
        PyLit::Raw("None".into())
    } else {
        let combos = f.instances.iter().map(|i| PyLit::tuple(i.defines.iter().map(|(_, v)| PyLit::Raw(v.clone()))));
        PyLit::tuple([PyLit::strs(&op.defines), PyLit::tuple(combos)])
    };
    // Each attribute's kind is its schema type: bool, int, float, str,
    // bool[], int[], float[].
    let attrs = PyLit::tuple(op.attrs.iter().filter_map(|p| {
        let schema = super::attr_schema(p).ok()?.schema;
        let default = p.default.as_deref().and_then(super::schema_default).unwrap_or_else(|| "None".into());
        Some(PyLit::tuple([PyLit::Str(p.py_name.to_string()), PyLit::Str(schema.to_string()), PyLit::Raw(default)]))
    }));
    let differentiable = match bwd {
        Some(_) => PyLit::strs(op.inputs.iter().filter(|p| super::is_float(p)).map(|p| &*p.py_name)),
        None => PyLit::tuple([]),
    };
    vec![
        ("call", py_str(&op.call)),
        ("kernel", py_str(&f.name)),
        ("platform", py_str(f.platform.as_str())),
        ("args", args.to_string()),
        ("inout", inout.to_string()),
        ("out", outs.to_string()),
        ("types", format!("{{{}}}", types.join(", "))),
        ("consts", consts.to_string()),
        ("defines", defines.to_string()),
        ("attrs", attrs.to_string()),
        ("differentiable", differentiable.to_string()),
        ("vjp", bwd.map_or_else(|| "None".to_string(), |b| py_str(&b.name))),
    ]
}

fn kind_lit(bool_: bool) -> PyLit {
    PyLit::Str(if bool_ { "bool" } else { "int" }.to_string())
}

/// A value constant's canonical value as a Python literal: `True`/`False`,
/// or an integer (anything else is left out).
fn const_value(bool_: bool, v: &str) -> Option<PyLit> {
    match (bool_, v) {
        (true, "true" | "1") => Some(PyLit::Raw("True".into())),
        (true, "false" | "0") => Some(PyLit::Raw("False".into())),
        (false, _) => v.parse::<i64>().ok().map(|n| PyLit::Raw(n.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::emit as torch_emit;

    fn py(dir: &str) -> String {
        torch_emit(&crate::driver::run(&crate::driver::Settings::new(dir)).expect("the tree checks").library).py
    }

    #[test]
    fn each_op_carries_its_contracts_attributes_and_gradients() {
        let typed = py("tests/e2e/typed");
        for line in [
            "    \"axpy\": {\n        \"call\": \"axpy\",\n        \"kernel\": \"axpy\",\n        \"platform\": \"cpu\",\n        \"args\": ((\"x\", \"float32\", (\"n\",)), (\"y\", \"float32\", (\"n\",))),",
            "        \"types\": {\"T\": (\"float32\", \"float64\", \"int32\")},",
            "        \"consts\": ((\"TIMES\", \"int\", (1, 2, 3)),),",
            "        \"inout\": (\"acc\",),",
        ] {
            assert!(typed.contains(line), "{line}\n{typed}");
        }
        let algo = py("tests/e2e/algo");
        let square = algo.split("    \"square\": {").nth(1).expect("square's entry");
        let square = &square[..square.find("    },").expect("its end")];
        assert!(square.contains("\"attrs\": ((\"scale\", \"float\", None),),"), "{square}");
        assert!(square.contains("\"differentiable\": (\"x\",),"), "{square}");
        assert!(square.contains("\"vjp\": \"square_bwd\","), "{square}");
        // The backward op is checked as an op; it has no formula of its own.
        let bwd = algo.split("    \"square_bwd\": {").nth(1).expect("square_bwd's entry");
        assert!(bwd[..bwd.find("    },").expect("its end")].contains("\"vjp\": None,"));
    }

    #[test]
    fn defaults_are_numbers_or_booleans_and_consts_integers() {
        assert_eq!(super::const_value(true, "true").map(|v| v.to_string()).as_deref(), Some("True"));
        assert_eq!(super::const_value(false, "-4").map(|v| v.to_string()).as_deref(), Some("-4"));
        // Anything else is left out, never pasted.
        assert_eq!(super::const_value(false, "1); import os; ("), None);
        assert_eq!(super::super::schema_default("__import__('os')"), None);
        assert_eq!(super::super::schema_default("1e-5").as_deref(), Some("1e-5"));
    }
}
