//! Named contracts: begen.yaml's `contracts:` gives a whole arg_spec a
//! name once (`gp_pair: "arg:float64[n, d] arg:float64[m, d] ret:..."`),
//! and a kernel's tokens use it with `contract=<name>` (inline or in the
//! dict form of `sources:`). The reference is replaced by the contract's
//! tokens where it is written; what they say is then checked like tokens
//! written out, located at the reference, with the contract's definition
//! as a second place.

use std::collections::{BTreeMap, BTreeSet};

use crate::config::yaml_path;
use crate::diag::{Diagnostic, messages as msg};
use crate::model::decl::Declared;
use crate::model::is_identifier;
use crate::settings::RunInput;
use crate::source::Span;

/// The token that uses a named contract: `contract=<name>`.
const PREFIX: &str = "contract=";

/// One declared contract: its tokens, and where begen.yaml defines it.
#[derive(Debug, Clone)]
pub(in crate::check) struct Named {
    tokens: Vec<String>,
    defined: Span,
}

/// begen.yaml's contracts that read as tokens, by name.
#[derive(Debug, Clone, Default)]
pub(in crate::check) struct Contracts {
    by_name: BTreeMap<String, Named>,
    /// Declared names, also of contracts that did not check out: a
    /// reference to one of them is not reported again as unknown.
    declared: BTreeSet<String>,
}

/// Reads `contracts:`, reporting a name that is not an identifier, one
/// without tokens, and one that uses another contract.
pub(in crate::check) fn declared(req: &RunInput, diags: &mut Vec<Diagnostic>) -> Contracts {
    let mut out = Contracts::default();
    for (name, text) in &req.config.contracts {
        out.declared.insert(name.clone());
        let key = || req.locate().key(&yaml_path!["contracts", name]);
        let value = req.locate().value(&yaml_path!["contracts", name]);
        let problem = if !is_identifier(name) { Some((key(), msg::contract_bad_name(name))) } else { None };
        let tokens: Vec<String> =
            crate::scan::annotation::words(text.as_bytes(), 0).into_iter().map(|w| w.text).collect();
        let problem = problem.or_else(|| {
            if tokens.is_empty() {
                Some((value, msg::contract_empty(name)))
            } else if tokens.iter().any(|t| t.starts_with(PREFIX)) {
                Some((value, msg::contract_nested(name)))
            } else {
                None
            }
        });
        match (problem, value) {
            (Some((span, text)), _) => diags.extend(span.map(|s| Diagnostic::error(s, text))),
            (None, Some(defined)) => {
                out.by_name.insert(name.clone(), Named { tokens, defined });
            }
            (None, None) => {}
        }
    }
    out
}

/// Where a function's tokens used a contract: the reference's span, the
/// contract's name and definition.
pub(in crate::check) type Uses = Vec<(Span, String, Span)>;

/// `c` with each `contract=<name>` among its tokens replaced by the
/// contract's tokens (each located at the reference), and the uses; `None`
/// when it has no reference. A reference that names no contract, and a
/// token beside a contract that names an attribute or dimension the
/// contract names too, are errors.
///
/// A reference to a declared contract that did not check out (its error
/// is reported at its definition) leaves the function out, without more.
pub(in crate::check) fn expand(
    c: &Declared,
    contracts: &Contracts,
    diags: &mut Vec<Diagnostic>,
) -> Option<(Declared, Uses, bool)> {
    let tokens = c.tokens.as_ref()?;
    if !tokens.iter().any(|(t, _)| t.starts_with(PREFIX)) {
        return None;
    }
    let mut out = Vec::new();
    let mut uses = Uses::new();
    let mut from_contract: Vec<(String, String)> = Vec::new();
    let mut beside: Vec<(String, Span)> = Vec::new();
    let mut sound = true;
    for (text, span) in tokens {
        let Some(name) = text.strip_prefix(PREFIX) else {
            out.push((text.clone(), *span));
            beside.push((text.clone(), *span));
            continue;
        };
        match contracts.by_name.get(name) {
            Some(named) => {
                uses.push((*span, name.to_string(), named.defined));
                out.extend(named.tokens.iter().map(|t| (t.clone(), *span)));
                from_contract.extend(named.tokens.iter().map(|t| (name.to_string(), t.clone())));
            }
            None if contracts.declared.contains(name) => sound = false,
            None if !is_identifier(name) => {
                diags.push(Diagnostic::error(*span, msg::bad_contract_ref(text)).hint(msg::HINT_UNKNOWN_CONTRACT));
            }
            None => {
                let near = crate::diag::suggest::closest(name, contracts.declared.iter().map(String::as_str));
                diags.push(
                    Diagnostic::error(*span, msg::unknown_contract(&c.name, name, near))
                        .hint(msg::HINT_UNKNOWN_CONTRACT),
                );
            }
        }
    }
    // A token beside the contract that names what the contract names (an
    // attribute, a dimension, a template parameter) would give it twice.
    for (text, span) in &beside {
        let Some(key) = named_key(text) else { continue };
        if let Some((name, _)) = from_contract.iter().find(|(_, t)| named_key(t).as_ref() == Some(&key)) {
            let defined = uses.iter().find(|(_, n, _)| n == name).map(|u| u.2);
            let mut d = Diagnostic::error(*span, msg::contract_token_again(&c.name, text, name, &key))
                .hint(msg::HINT_CONTRACT_BESIDE);
            if let Some(at) = defined {
                d = d.with(at, msg::label_contract_defined(name));
            }
            diags.push(d);
        }
    }
    let expanded = Declared { tokens: Some(out), ..c.clone() };
    Some((expanded, uses, sound))
}

/// What a token names, when it names something by name: `attribute 'x'`
/// for `attr.x[:t][=v]`, `dimension 'n'`, `template parameter 'B'`.
fn named_key(token: &str) -> Option<String> {
    let head = |rest: &str| rest.split([':', '=']).next().unwrap_or_default().to_string();
    if let Some(rest) = token.strip_prefix("attr.").or_else(|| token.strip_prefix("attrs.")) {
        return Some(format!("attribute '{}'", msg::q(&head(rest))));
    }
    if let Some(rest) = token.strip_prefix("dim.") {
        return Some(format!("dimension '{}'", msg::q(&head(rest))));
    }
    token.strip_prefix("const.").map(|rest| format!("template parameter '{}'", msg::q(&head(rest))))
}

/// Points each diagnostic about a function whose tokens use contracts at
/// the contracts' definitions too (those of its uses where it is located
/// at a use, else all): the tokens it speaks of are written there.
pub(in crate::check) fn label_uses(uses: &Uses, diags: &mut [Diagnostic]) {
    for d in diags {
        let at_use = uses.iter().any(|(at, _, _)| *at == d.span);
        for (at, name, defined) in uses {
            if (at_use && *at != d.span) || d.labels.iter().any(|l| l.span == *defined) {
                continue;
            }
            d.labels.push(crate::diag::Label { span: *defined, text: msg::label_contract_defined(name) });
        }
    }
}
