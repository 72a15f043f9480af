//! The catalogue of diagnostic texts, reviewed in one place. The seed's own
//! texts are quoted verbatim.

/// Seed 000: every `BE::Tensor` parameter is const.
pub fn no_output(func: &str) -> String {
    format!(
        "No non-const Tensor output found in '{func}'.\n\
         Mark input Tensors with 'const' to distinguish inputs from outputs,\n\
         or use the explicit dict form: functions={{'{func}': ['arg', 'ret', ...]}}"
    )
}
