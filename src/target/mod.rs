//! Binding targets beside the XLA/JAX output (the target `jax`, emitted by
//! `emit` and linked by `build`): each other target in a folder of its own.

pub(crate) mod torch;

/// A binding target a build makes outputs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// XLA FFI handlers and the JAX module (`lib<NAME>.so`, `<NAME>.py`).
    Jax,
    /// PyTorch ops (`lib<NAME>_torch.so`, `<NAME>_torch.py`).
    Torch,
}

/// Every target, by name.
pub(crate) const TARGETS: [(&str, Target); 2] = [("jax", Target::Jax), ("torch", Target::Torch)];

/// The targets named (`jax`, `torch`; each list item may itself be
/// comma-separated), or the message for the first unknown name, with the
/// closest known one. None named: `jax`.
pub(crate) fn parse(names: &[String]) -> Result<Vec<Target>, String> {
    let mut out = Vec::new();
    for name in names.iter().flat_map(|n| n.split(',')).map(str::trim).filter(|n| !n.is_empty()) {
        match TARGETS.iter().find(|(n, _)| *n == name) {
            Some((_, t)) => {
                if !out.contains(t) {
                    out.push(*t);
                }
            }
            None => {
                let known = TARGETS.map(|(n, _)| n);
                let hint = crate::diag::suggest::closest(name, known)
                    .map(|c| format!("; did you mean '{c}'?"))
                    .unwrap_or_default();
                return Err(format!("unknown target '{name}': the targets are {}{hint}", known.join(", ")));
            }
        }
    }
    if out.is_empty() {
        out.push(Target::Jax);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_with_a_suggestion() {
        assert_eq!(parse(&[]), Ok(vec![Target::Jax]));
        assert_eq!(parse(&["jax,torch".into()]), Ok(vec![Target::Jax, Target::Torch]));
        assert_eq!(parse(&["torch".into(), "torch".into()]), Ok(vec![Target::Torch]));
        let err = parse(&["jax,troch".into()]).unwrap_err();
        assert_eq!(err, "unknown target 'troch': the targets are jax, torch; did you mean 'torch'?");
    }
}
