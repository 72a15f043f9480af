//! `begen doctor`: every toolchain piece a build would use, found the way
//! a build finds it, and what is missing.

// Used by the CLI (`begen doctor`, `begen scan`).
#![cfg_attr(not(feature = "cli"), allow(dead_code))]

use std::path::{Path, PathBuf};

use super::backend::{self, TuInputs};
use super::toolchain::{self, Discovery};
use super::{Env, arch, jaxlib, support};
use crate::error::{Error, Result};
use crate::model::Platform;
use crate::model::plan::BackendPlan;

/// One line of `begen doctor`: what, and what was found (or why not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DoctorLine {
    /// The piece looked for, e.g. `nvcc` or `XLA FFI headers`.
    pub(crate) what: &'static str,
    /// What was found (path, version...), or why nothing usable was.
    pub(crate) found: std::result::Result<String, String>,
    /// A missing piece that every build needs (nvcc is only needed for CUDA).
    pub(crate) required: bool,
}

/// What a build will compile against and so which jax releases it loads on
/// (nothing is downloaded here).
fn doctor_target(jax_min: Option<&str>, running: Option<&PathBuf>, env: &Env) -> String {
    let api = |dir: &Path| toolchain::xla_ffi_api_version(dir).unwrap_or_else(|| "unknown".into());
    match jax_min {
        Some(v) if !crate::model::is_release_number(v) => format!("--jax-min `{v}` is not a jax release number"),
        Some(v) => match (jaxlib::cached(env, v), jaxlib::cache_dir(env, v)) {
            (Some(dir), _) => {
                format!("XLA FFI API {} from jaxlib {v}'s headers ({}): jax {v} and newer", api(&dir), dir.display())
            }
            (None, Some(dir)) => format!(
                "jaxlib {v}'s XLA FFI headers: jax {v} and newer (not cached yet: a build downloads them into {})",
                dir.join("include").display()
            ),
            (None, None) => format!("jaxlib {v}'s XLA FFI headers, but neither XDG_CACHE_HOME nor HOME is set"),
        },
        None => match running {
            Some(dir) => format!(
                "XLA FFI API {} (the headers above): jax releases with that API and newer; --jax-min VERSION for older ones",
                api(dir)
            ),
            None => "unknown: no XLA FFI headers found".to_string(),
        },
    }
}

/// What `begen doctor` is asked about: the caller's settings, resolved as
/// `check` resolves them (begen.yaml is not read).
pub(crate) struct DoctorAsk<'a> {
    /// The release whose headers builds would use (`--jax-min`).
    pub(crate) jax_min: Option<&'a str>,
    /// The architectures given (`--arch`), checked even without nvcc.
    pub(crate) arch: &'a [String],
    /// A backend's plan, asked for only when its toolchain is looked at
    /// (so that the environment it reads is what the report says it read).
    pub(crate) backend: &'a dyn Fn(Platform) -> BackendPlan,
}

/// Resolves every toolchain piece the way a build would and says what it
/// found.
pub(crate) fn doctor(ask: &DoctorAsk<'_>, env: &Env) -> Vec<DoctorLine> {
    let d = Discovery::new(env);
    let mut lines = Vec::new();
    let xla = d.xla_ffi_include();
    lines.push(line(
        "XLA FFI headers",
        xla.as_ref()
            .map(|dir| {
                let api = toolchain::xla_ffi_api_version(dir).unwrap_or_else(|| "unknown".into());
                format!("{} (API {api})", dir.display())
            })
            .map_err(|e| Error::toolchain(e.to_string())),
        true,
    ));
    lines.push(line("builds target", Ok(doctor_target(ask.jax_min, xla.as_ref().ok(), env)), true));
    let support = match env.var("BEGEN_SUPPORT_INCLUDE") {
        Some(dir) => format!("{dir} (BEGEN_SUPPORT_INCLUDE)"),
        None => format!(
            "embedded, version {} ({} headers, written into each build's work directory)",
            support::version(),
            support::HEADERS.len()
        ),
    };
    lines.push(line("support headers", Ok(support), true));
    lines.push(line("host C++ (cc, CXX)", host_compiler(&(ask.backend)(Platform::Cpu), &d), true));
    lines.extend(cuda_lines(ask, &d));
    lines.push(line("Python asked", Ok(d.python()), false));
    lines.push(line("JAX in that Python", jax_report(&d), false));
    lines
}

/// One line of the report.
fn line(what: &'static str, found: Result<String>, required: bool) -> DoctorLine {
    DoctorLine { what, found: found.map_err(|e| e.to_string()), required }
}

/// The host C++ compiler's command, once it has run: it must run, not
/// only be named.
fn host_compiler(host_plan: &BackendPlan, d: &Discovery) -> Result<String> {
    let scratch = std::env::temp_dir().join(format!("begen-doctor-{}", std::process::id()));
    let tu = TuInputs { includes: &[], system_includes: &[], prefix_maps: &[], work: &scratch, cc_metadata: false };
    let host = backend::probe(Platform::Cpu, d).and_then(|cpu| cpu.command(host_plan, &tu, d, false));
    let host = host.and_then(|cmd| {
        let runs = std::process::Command::new(&cmd.program).arg("--version").output();
        match runs {
            Ok(out) if out.status.success() => Ok(describe_cmd(&cmd)),
            Ok(out) => Err(Error::toolchain(format!(
                "`{}` does not run: {}",
                cmd.program.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))),
            Err(e) => Err(Error::toolchain(format!(
                "`{}` does not run ({e}): install a C++17 compiler or set CXX",
                cmd.program.display()
            ))),
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    host
}

/// The CUDA lines: the architectures asked for, nvcc, its static runtime
/// and the architectures a build would take.
fn cuda_lines(ask: &DoctorAsk<'_>, d: &Discovery) -> Vec<DoctorLine> {
    let mut lines = Vec::new();
    // Architectures asked for are checked even without nvcc.
    if !ask.arch.is_empty() {
        let asked = arch::parse_list(ask.arch).map(|l| l.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "));
        lines.push(line(
            "--arch",
            asked.map_err(|bad| {
                Error::toolchain(format!("`{bad}` is not a CUDA architecture (write sm_90, 90 or 9.0)"))
            }),
            true,
        ));
    }
    match d.cuda() {
        Ok(cuda) => {
            let version = cuda.version.clone().unwrap_or_else(|| "version unknown".into());
            lines.push(line("nvcc", Ok(format!("{} ({version})", cuda.nvcc.display())), false));
            lines.push(line(
                "CUDA runtime (static)",
                cuda.cudart_dir
                    .as_ref()
                    .map(|p| p.join("libcudart_static.a").display().to_string())
                    .ok_or_else(|| Error::toolchain("libcudart_static.a not found beside nvcc")),
                false,
            ));
            let plan = (ask.backend)(Platform::Cuda);
            let archs = d.cuda_archs(plan.arch.as_ref(), &cuda).map(|(archs, source)| {
                let names: Vec<String> = archs.iter().map(|a| a.to_string()).collect();
                format!("{} (from {}); {}", names.join(", "), source.describe(), arch::gencode_flags(&archs).join(" "))
            });
            lines.push(line("CUDA architectures", archs, false));
        }
        Err(e) => lines.push(line("nvcc", Err(e), false)),
    }
    lines
}

/// jax and jaxlib versions and the backends JAX finds (a GPU needs its
/// CUDA plugin), as `BEGEN_PYTHON` sees them.
fn jax_report(d: &Discovery) -> Result<String> {
    let probe = "import jax, jaxlib; print(jax.__version__, jaxlib.__version__, \
                 sorted({d.platform for d in jax.devices()}), jax.default_backend())";
    let python = d.python();
    let out = d.run_probe(Path::new(&python), &["-c", probe]).map_err(Error::toolchain)?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let last = why.trim().lines().last().unwrap_or("no output");
        return Err(Error::toolchain(format!("`{python}` cannot import jax: {last}")));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    let (jax, jaxlib) = (parts.next().unwrap_or("?"), parts.next().unwrap_or("?"));
    let rest: Vec<&str> = parts.collect();
    Ok(format!("jax {jax}, jaxlib {jaxlib}; devices {}", rest.join(" ")))
}

fn describe_cmd(cmd: &super::compile::CompilerCmd) -> String {
    let mut s = cmd.program.display().to_string();
    for a in &cmd.args {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}
