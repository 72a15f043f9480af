//! CUDA architectures: parsing what the user wrote (`sm_90`, `90`, `9.0`,
//! `sm_90a`), choosing a list, and turning it into nvcc `-gencode` flags.
//!
//! Order of choice: the plan's request (`check` takes `--arch` /
//! `Build::arch`, then `BEGEN_CUDA_ARCH`, then `cuda.arch` in begen.yaml),
//! else the GPUs of this machine (`nvidia-smi --query-gpu=compute_cap`),
//! else [`DEFAULT_ARCHS`] (those the found nvcc supports). Each architecture gets its SASS; the newest
//! one without a suffix also gets PTX so that newer GPUs can JIT it.
//! Suffixed targets (`sm_90a`, `sm_100f`) are tied to their GPU family and
//! never get PTX.

use std::fmt;
use std::path::Path;
use std::process::Command;

/// The default list when nothing else says: Turing through Blackwell, what
/// CUDA 13 still supports and JAX users are likely to have.
pub(crate) const DEFAULT_ARCHS: [u32; 7] = [75, 80, 86, 89, 90, 100, 120];

/// One real GPU architecture, e.g. `sm_90a` = `{ number: 90, suffix: Some('a') }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct CudaArch {
    /// The compute capability without the dot: 90 for `sm_90` / `9.0`.
    pub(crate) number: u32,
    /// `a` (architecture-specific) or `f` (family-specific), when given.
    pub(crate) suffix: Option<char>,
}

impl CudaArch {
    /// Parses `sm_90`, `compute_90`, `90`, `9.0`, `sm_90a`, `90a`.
    pub(crate) fn parse(text: &str) -> Option<CudaArch> {
        let t = text.trim();
        let t = t.strip_prefix("sm_").or_else(|| t.strip_prefix("compute_")).unwrap_or(t);
        let t: String =
            if let Some((major, minor)) = t.split_once('.') { format!("{major}{minor}") } else { t.to_string() };
        let (digits, suffix) = match t.chars().last() {
            Some(c @ ('a' | 'f')) => (&t[..t.len() - 1], Some(c)),
            _ => (t.as_str(), None),
        };
        if digits.is_empty() || digits.len() > 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let number: u32 = digits.parse().ok()?;
        (number >= 10).then_some(CudaArch { number, suffix })
    }

    fn code(&self) -> String {
        match self.suffix {
            Some(s) => format!("{}{s}", self.number),
            None => self.number.to_string(),
        }
    }
}

impl fmt::Display for CudaArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}", self.code())
    }
}

/// Parses a list given as several strings, each possibly `,`/space-separated.
/// Returns the first unparsable entry as the error.
pub(crate) fn parse_list<S: AsRef<str>>(items: &[S]) -> Result<Vec<CudaArch>, String> {
    let mut out = Vec::new();
    for item in items {
        for word in item.as_ref().split(|c: char| c == ',' || c.is_whitespace()) {
            if word.is_empty() {
                continue;
            }
            let arch = CudaArch::parse(word).ok_or_else(|| word.to_string())?;
            if !out.contains(&arch) {
                out.push(arch);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The compute capabilities of this machine's GPUs, if `nvidia-smi` answers.
pub(crate) fn local_gpus(nvidia_smi: &Path) -> Vec<CudaArch> {
    let output = Command::new(nvidia_smi).args(["--query-gpu=compute_cap", "--format=csv,noheader"]).output();
    match output {
        Ok(o) if o.status.success() => {
            parse_list(&[String::from_utf8_lossy(&o.stdout).into_owned()]).unwrap_or_default()
        }
        _ => Vec::new(),
    }
}

/// The default list, limited to what `nvcc --list-gpu-arch` reports when it
/// answers (older and newer toolkits support different ranges).
pub(crate) fn default_archs(nvcc_supported: &[u32]) -> Vec<CudaArch> {
    DEFAULT_ARCHS
        .iter()
        .filter(|n| nvcc_supported.is_empty() || nvcc_supported.contains(n))
        .map(|&number| CudaArch { number, suffix: None })
        .collect()
}

/// `-gencode` flags: SASS for each architecture, PTX for the newest one
/// without a suffix.
pub(crate) fn gencode_flags(archs: &[CudaArch]) -> Vec<String> {
    let mut flags: Vec<String> =
        archs.iter().map(|a| format!("-gencode=arch=compute_{0},code=sm_{0}", a.code())).collect();
    if let Some(newest) = archs.iter().filter(|a| a.suffix.is_none()).max() {
        flags.push(format!("-gencode=arch=compute_{0},code=compute_{0}", newest.code()));
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        for (text, want) in [
            ("sm_90", "sm_90"),
            ("90", "sm_90"),
            ("9.0", "sm_90"),
            ("12.0", "sm_120"),
            ("compute_86", "sm_86"),
            ("sm_100f", "sm_100f"),
            ("90a", "sm_90a"),
        ] {
            assert_eq!(CudaArch::parse(text).map(|a| a.to_string()).as_deref(), Some(want), "{text}");
        }
        for bad in ["", "sm_", "sm_9", "abc", "sm_90b", "1234", "-O3"] {
            assert_eq!(CudaArch::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn list_dedups_and_sorts() {
        let l = parse_list(&["sm_90, 8.0", "sm_90"]).unwrap();
        assert_eq!(l.iter().map(|a| a.to_string()).collect::<Vec<_>>(), ["sm_80", "sm_90"]);
        assert_eq!(parse_list(&["sm_90,oops"]), Err("oops".to_string()));
    }

    #[test]
    fn suffixed_only_gets_no_ptx() {
        let flags = gencode_flags(&[CudaArch::parse("sm_90a").unwrap()]);
        assert_eq!(flags, ["-gencode=arch=compute_90a,code=sm_90a"]);
    }
}

#[cfg(test)]
mod examples {
    #[test]
    fn cuda_arch() {
        use crate::build::arch::CudaArch;
        let a = CudaArch::parse("9.0").unwrap();
        assert_eq!(a.to_string(), "sm_90");
        assert_eq!(CudaArch::parse("sm_90a").unwrap().to_string(), "sm_90a");
        assert!(CudaArch::parse("sm_x").is_none());
    }

    #[test]
    fn gencode_flags() {
        use crate::build::arch::{CudaArch, gencode_flags};
        let archs = [CudaArch::parse("sm_80").unwrap(), CudaArch::parse("sm_90a").unwrap()];
        assert_eq!(
            gencode_flags(&archs),
            [
                "-gencode=arch=compute_80,code=sm_80",
                "-gencode=arch=compute_90a,code=sm_90a",
                "-gencode=arch=compute_80,code=compute_80",
            ]
        );
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples of this module's crate-private items, run as unit tests
    //! (an example in a doc comment must compile outside the crate).

    #[test]
    fn cuda_arch() {
        use crate::build::arch::CudaArch;
        assert_eq!(CudaArch::parse("9.0").unwrap().to_string(), "sm_90");
        assert!(CudaArch::parse("sm_x").is_none());
    }

    #[test]
    fn cuda_arch_parse() {
        use crate::build::arch::CudaArch;
        let a = CudaArch::parse("sm_90a").unwrap();
        assert_eq!((a.number, a.suffix), (90, Some('a')));
        assert_eq!(CudaArch::parse("compute_86"), CudaArch::parse("8.6"));
    }
}
