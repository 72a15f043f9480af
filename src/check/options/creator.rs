//! begen.yaml's `instantiate:` function as the kernel's source declares
//! it: a function of that name must be there, take no arguments and return
//! what the generated glue takes (`std::unique_ptr<T>` for a kernel taking
//! `T& state`, `ffi::ErrorOr<std::unique_ptr<T>>` for one of XLA FFI's types).
//!
//! Only what begen can tell for sure is an error: where the front end
//! cannot see the function (a header it does not read, a namespace, a
//! macro of unknown expansion) or cannot resolve its return type (`auto`,
//! an alias), the compiler checks it (a `static_assert` in the wrapper).

use crate::config::Config;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::decl::CreatorLookup;
use crate::model::{Function, NativeBind, Token};
use crate::source::Span;

/// What a return type says of the state a function creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Fits,
    Wrong,
    /// An alias, `auto`, a type of a header: the compiler knows.
    Unsure,
}

/// The problem with `f`'s creating function `name` (an identifier; `f`
/// takes state), located at begen.yaml's `instantiate:` value `at`.
pub(in crate::check) fn problem(config: &Config, f: &Function, name: &str, at: Span) -> Option<Diagnostic> {
    let creator = f.creators.iter().find(|c| c.name == name)?;
    let state_ty = f.params.iter().find_map(|p| match &p.token {
        Token::State { ty, .. } => Some(ty.as_str()),
        _ => None,
    });
    let native_ty = f.native.iter().flat_map(|n| &n.params).find_map(|b| match b {
        NativeBind::State(_, ty) => Some(ty.as_str()),
        _ => None,
    });
    let want = match (&f.native, state_ty) {
        (Some(_), _) => format!("ffi::ErrorOr<std::unique_ptr<{}>>", native_ty.unwrap_or("T")),
        (None, Some(ty)) => format!("std::unique_ptr<{ty}>"),
        (None, None) => return None,
    };
    let hint = msg::hint_creator(&want, name);
    match &creator.found {
        CreatorLookup::Unknown => None,
        CreatorLookup::Absent { .. } if defines_macro(config, name) => None,
        CreatorLookup::Absent { declared } => {
            let near = crate::diag::suggest::closest(name, declared.iter().map(String::as_str));
            Some(Diagnostic::error(at, msg::instantiate_missing(&f.name, name, near)).hint(hint))
        }
        CreatorLookup::Found { at: def, ret, required, classes } => {
            let verdict = match (&f.native, state_ty) {
                (Some(_), _) => native_return(ret, classes),
                (None, state) => be_return(ret, state, classes),
            };
            if let Some(n) = required.filter(|n| *n > 0) {
                let d = Diagnostic::error(at, msg::instantiate_takes_params(&f.name, name, n));
                Some(d.with(*def, msg::LABEL_CREATOR).hint(hint))
            } else if verdict == Verdict::Wrong {
                let d = Diagnostic::error(at, msg::instantiate_wrong_return(&f.name, name, ret, &want));
                Some(d.with(*def, msg::LABEL_CREATOR).hint(hint))
            } else {
                None
            }
        }
    }
}

/// Whether a compile may see a macro named `name`, or one that expands to
/// it, that the source does not define: a flag that includes a file, a
/// `-D` of that name or value, a variant's or a tuned kernel's define
/// naming it. The source may then declare `name` without writing it.
fn defines_macro(config: &Config, name: &str) -> bool {
    let names = |text: &str| text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == name);
    let flags: Vec<&str> = config.cxx_flags.iter().chain(&config.cuda.flags).map(String::as_str).collect();
    let flag = |k: usize| {
        let f = flags[k];
        if ["-include", "-imacros", "--pre-include", "--include", "-include-pch"].iter().any(|i| f.starts_with(i)) {
            return true;
        }
        let define = match f {
            "-D" | "--define-macro" => flags.get(k + 1).copied().unwrap_or(""),
            _ => f.strip_prefix("--define-macro=").or_else(|| f.strip_prefix("-D")).unwrap_or(""),
        };
        names(define)
    };
    let value = |v: &serde_yaml_ng::Value| yaml_names(v, &names);
    (0..flags.len()).any(flag)
        || config.variants.values().flatten().any(|v| v.defines.iter().any(|(k, v)| names(k) || value(v)))
        || config.tune.values().any(value)
}

/// Whether a key or scalar anywhere in `v` passes `names`.
fn yaml_names(v: &serde_yaml_ng::Value, names: &dyn Fn(&str) -> bool) -> bool {
    use serde_yaml_ng::Value;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if names(s) => return true,
            Value::Sequence(items) => stack.extend(items),
            Value::Mapping(m) => {
                for (k, v) in m {
                    stack.push(k);
                    stack.push(v);
                }
            }
            Value::Tagged(t) => stack.push(&t.value),
            _ => {}
        }
    }
    false
}

/// A BE kernel's creator returns `std::unique_ptr<state>`.
fn be_return(ret: &str, state: Option<&str>, classes: &[String]) -> Verdict {
    unique_ptr(ret, state, classes)
}

/// A native kernel's creator returns `ErrorOr<std::unique_ptr<T>>`, with
/// `ErrorOr` qualified any way (`xla::ffi::ErrorOr`, `ffi::ErrorOr`).
fn native_return(ret: &str, classes: &[String]) -> Verdict {
    if let Some(v) = opaque(ret) {
        return v;
    }
    match split_template(ret) {
        Some((name, inner)) if last(name) == "ErrorOr" => unique_ptr(inner, None, classes),
        _ => other(ret, classes),
    }
}

/// Whether `ty` is `std::unique_ptr<want>` (of any pointee without `want`).
fn unique_ptr(ty: &str, want: Option<&str>, classes: &[String]) -> Verdict {
    if let Some(v) = opaque(ty) {
        return v;
    }
    match split_template(ty) {
        Some((name, inner)) if matches!(bare(name), "unique_ptr" | "std::unique_ptr") => {
            let Some(want) = want else { return Verdict::Fits };
            if bare(inner) == bare(want) || last(inner) == last(want) {
                Verdict::Fits
            } else if has_top_level_comma(inner) || (is_class(inner, classes) && is_class(want, classes)) {
                // A deleter of its own, or another struct of the source.
                Verdict::Wrong
            } else {
                Verdict::Unsure
            }
        }
        _ => other(ty, classes),
    }
}

/// `auto`, `decltype(...)` or nothing: unsure; a pointer or reference:
/// wrong; else `None` (to be looked at).
fn opaque(ty: &str) -> Option<Verdict> {
    if ty.is_empty() || ty == "auto" || ty.contains("decltype") {
        Some(Verdict::Unsure)
    } else if ty.ends_with('*') || ty.ends_with('&') {
        Some(Verdict::Wrong)
    } else {
        None
    }
}

/// A type that is not the one wanted by its name: wrong where it is one
/// of C++'s own, the standard library's (never a user's alias), XLA FFI's
/// or a struct of the source; unsure where it may be an alias.
fn other(ty: &str, classes: &[String]) -> Verdict {
    let name = split_template(ty).map_or(ty, |(name, _)| name);
    let first = name.split(' ').next().unwrap_or(name);
    let builtin = matches!(
        first,
        "void" | "bool" | "char" | "short" | "int" | "long" | "float" | "double" | "signed" | "unsigned" | "size_t"
    ) || (first.ends_with("_t") && (first.starts_with("int") || first.starts_with("uint")));
    let known = ["std::", "xla::ffi::", "ffi::"].iter().any(|p| bare(name).starts_with(p));
    if builtin || known || is_class(name, classes) { Verdict::Wrong } else { Verdict::Unsure }
}

/// A struct of the source, by its plain name.
fn is_class(ty: &str, classes: &[String]) -> bool {
    let ty = bare(ty);
    !ty.contains(['<', ':', ' ']) && classes.iter().any(|c| c == ty)
}

/// `name<inner>`.
fn split_template(ty: &str) -> Option<(&str, &str)> {
    let open = ty.find('<')?;
    let body = ty.strip_suffix('>')?;
    Some((&ty[..open], &body[open + 1..]))
}

/// Without a leading `::`, `struct ` or `class `.
fn bare(ty: &str) -> &str {
    let ty = ty.strip_prefix("struct ").or_else(|| ty.strip_prefix("class ")).unwrap_or(ty);
    ty.trim_start_matches("::")
}

/// The last component of a qualified name (`ErrorOr` of `xla::ffi::ErrorOr`).
fn last(name: &str) -> &str {
    let name = bare(name);
    if name.contains('<') {
        return name;
    }
    name.rsplit("::").next().unwrap_or(name)
}

fn has_top_level_comma(ty: &str) -> bool {
    let mut depth = 0i32;
    for c in ty.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes() -> Vec<String> {
        vec!["Counter".to_string(), "Other".to_string()]
    }

    #[test]
    fn be_returns() {
        let c = classes();
        for ret in [
            "std::unique_ptr<Counter>",
            "::std::unique_ptr<Counter>",
            "unique_ptr<::Counter>",
            "std::unique_ptr<ns::Counter>",
        ] {
            assert_eq!(be_return(ret, Some("Counter"), &c), Verdict::Fits, "{ret}");
        }
        for ret in ["auto", "CounterPtr", "Ptr<Counter>", "std::unique_ptr<Alias>"] {
            assert_eq!(be_return(ret, Some("Counter"), &c), Verdict::Unsure, "{ret}");
        }
        for ret in [
            "Counter*",
            "Counter",
            "std::shared_ptr<Counter>",
            "void",
            "std::unique_ptr<Other>",
            "std::unique_ptr<Counter,D>",
            "int32_t",
        ] {
            assert_eq!(be_return(ret, Some("Counter"), &c), Verdict::Wrong, "{ret}");
        }
    }

    #[test]
    fn macros_from_flags_and_defines() {
        let with_flags =
            |flags: &[&str]| Config { cxx_flags: flags.iter().map(|f| f.to_string()).collect(), ..Config::default() };
        assert!(!defines_macro(&with_flags(&["-O2", "-DNDEBUG", "-DBLOCK=256", "-I", "inc"]), "make"));
        assert!(defines_macro(&with_flags(&["-DMAKE=make"]), "make"));
        assert!(defines_macro(&with_flags(&["-D", "make=other"]), "make"));
        assert!(defines_macro(&with_flags(&["-include", "pre.h"]), "make"));
        let mut tuned = Config::default();
        tuned.tune.insert("k".to_string(), serde_yaml_ng::from_str("{defines: {MAKE: [make, other]}}").unwrap());
        assert!(defines_macro(&tuned, "make"));
        assert!(!defines_macro(&tuned, "made"));
    }

    #[test]
    fn native_returns() {
        let c = classes();
        for ret in [
            "ffi::ErrorOr<std::unique_ptr<Counter>>",
            "xla::ffi::ErrorOr<std::unique_ptr<X>>",
            "ErrorOr<unique_ptr<X>>",
        ] {
            assert_eq!(native_return(ret, &c), Verdict::Fits, "{ret}");
        }
        for ret in ["auto", "Made", "ffi::ErrorOr<Ptr>", "absl::StatusOr<std::unique_ptr<X>>"] {
            assert_eq!(native_return(ret, &c), Verdict::Unsure, "{ret}");
        }
        for ret in
            ["std::unique_ptr<Counter>", "ffi::Error", "ffi::ErrorOr<Counter*>", "ffi::ErrorOr<Counter>", "Counter*"]
        {
            assert_eq!(native_return(ret, &c), Verdict::Wrong, "{ret}");
        }
    }
}
