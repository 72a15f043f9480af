//! Environment variables, read through one place that remembers every name
//! it was asked for, so build.rs can print `cargo:rerun-if-env-changed` for
//! each and `begen doctor` can say what it looked at.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The process environment plus explicit overrides, recording each name read.
///
/// An empty value counts as unset (`CXX=` means "use the default").
///
/// ```
/// let env = begen::driver::Env::new().with("BEGEN_CUDA_ARCH", "sm_90");
/// assert_eq!(env.var("BEGEN_CUDA_ARCH").as_deref(), Some("sm_90"));
/// assert!(env.names_read().contains(&"BEGEN_CUDA_ARCH".to_string()));
/// ```
#[derive(Debug, Default)]
pub struct Env {
    overrides: BTreeMap<String, Option<String>>,
    read: RefCell<BTreeSet<String>>,
}

impl Env {
    /// The process environment, nothing read yet.
    ///
    /// ```
    /// let env = begen::driver::Env::new();
    /// assert!(env.names_read().is_empty());
    /// ```
    pub fn new() -> Env {
        Env::default()
    }

    /// Overrides `name` with `value` (tests, and settings given in code).
    ///
    /// ```
    /// let env = begen::driver::Env::new().with("CXX", "clang++");
    /// assert_eq!(env.var("CXX").as_deref(), Some("clang++"));
    /// ```
    pub fn with(mut self, name: &str, value: &str) -> Env {
        self.overrides.insert(name.to_string(), Some(value.to_string()));
        self
    }

    /// Treats `name` as unset whatever the process environment says.
    ///
    /// ```
    /// let env = begen::driver::Env::new().without("PATH");
    /// assert_eq!(env.var("PATH"), None);
    /// ```
    pub fn without(mut self, name: &str) -> Env {
        self.overrides.insert(name.to_string(), None);
        self
    }

    /// The value of `name`, `None` when unset, empty or not UTF-8.
    ///
    /// ```
    /// let env = begen::driver::Env::new().with("CXX", " ");
    /// assert_eq!(env.var("CXX"), None, "blank counts as unset");
    /// ```
    pub fn var(&self, name: &str) -> Option<String> {
        self.read.borrow_mut().insert(name.to_string());
        let value = match self.overrides.get(name) {
            Some(v) => v.clone(),
            // The one sanctioned read of the process environment (clippy.toml):
            // the name is recorded above.
            #[allow(clippy::disallowed_methods)]
            None => std::env::var(name).ok(),
        };
        value.filter(|v| !v.trim().is_empty())
    }

    /// begen's per-user cache, `$XDG_CACHE_HOME/begen`, else
    /// `$HOME/.cache/begen` (a relative `XDG_CACHE_HOME` is ignored, as the
    /// XDG base directory rules say); `None` when neither is set.
    pub(crate) fn user_cache(&self) -> Option<PathBuf> {
        let base = match self.var("XDG_CACHE_HOME").filter(|d| Path::new(d).is_absolute()) {
            Some(dir) => PathBuf::from(dir),
            None => PathBuf::from(self.var("HOME")?).join(".cache"),
        };
        Some(base.join("begen"))
    }

    /// The whole environment (the process's, with the overrides), as one
    /// text to compare: a toolchain probe's answer is kept only for the
    /// environment it was given (cc alone reads some forty variables, most
    /// with per-target variants). Not recorded as read: nothing is built
    /// from it. Variables that change from one shell or one Cargo run to
    /// the next and that no compiler reads ([`VOLATILE`]) are left out, so
    /// they cost no probe.
    pub(crate) fn snapshot(&self) -> String {
        // The one sanctioned read of every variable: a fingerprint, not a value used.
        #[allow(clippy::disallowed_methods)]
        let mut vars: BTreeMap<String, Option<String>> = std::env::vars_os()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), Some(v.to_string_lossy().into_owned())))
            .collect();
        vars.extend(self.overrides.clone());
        let mut text = String::new();
        for (name, value) in vars {
            let volatile = VOLATILE.iter().any(|v| match v.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == *v,
            });
            if let (Some(value), false) = (value, volatile) {
                text.push_str(&format!("{name}={value}\n"));
            }
        }
        text
    }

    /// Every name asked for so far, sorted.
    ///
    /// ```
    /// let env = begen::driver::Env::new();
    /// env.var("NVCC");
    /// env.var("CXX");
    /// assert_eq!(env.names_read(), ["CXX", "NVCC"]);
    /// ```
    pub fn names_read(&self) -> Vec<String> {
        self.read.borrow().iter().cloned().collect()
    }
}

/// Variables [`Env::snapshot`] leaves out: a shell's and a terminal's
/// state, Cargo's jobserver, and begen's own switches that change no
/// toolchain answer (`*` ends a prefix).
const VOLATILE: &[&str] = &[
    "_",
    "PWD",
    "OLDPWD",
    "SHLVL",
    "LINES",
    "COLUMNS",
    "TERM*",
    "COLORTERM",
    "SSH_*",
    "DISPLAY",
    "WINDOWID",
    "TMUX*",
    "STY",
    "VTE_*",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_SESSION_*",
    "MAKEFLAGS",
    "MFLAGS",
    "CARGO_MAKEFLAGS",
    "BEGEN_EXPLAIN",
    "BEGEN_COMPILE_TIMEOUT",
    "BEGEN_COMPILER_LAUNCHER",
    "NO_COLOR",
];
