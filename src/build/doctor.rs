//! `begen doctor`: every toolchain piece a build would use, found the way
//! a build finds it, and what is missing.

use std::path::{Path, PathBuf};

use super::backend::{self, TuInputs};
use super::toolchain::{self, Discovery};
use super::{Env, arch, jaxlib, support};
use crate::check::plan_backend;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::model::Platform;
use crate::settings::Settings;

/// One line of `begen doctor`: what, and what was found (or why not).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
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

/// Resolves every toolchain piece the way [`build`] would and says what
/// it found; `opts.root` supplies begen.yaml's CUDA settings when present.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
pub(crate) fn doctor(opts: &Settings, env: &Env) -> Vec<DoctorLine> {
    let d = Discovery::new(env);
    let mut lines = Vec::new();
    let line =
        |what, found: Result<String>, required| DoctorLine { what, found: found.map_err(|e| e.to_string()), required };
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
    lines.push(line("builds target", Ok(doctor_target(opts.jax_min.as_deref(), xla.as_ref().ok(), env)), true));
    let support = match env.var("BEGEN_SUPPORT_INCLUDE") {
        Some(dir) => format!("{dir} (BEGEN_SUPPORT_INCLUDE)"),
        None => format!(
            "embedded, version {} ({} headers, written into each build's work directory)",
            support::version(),
            support::HEADERS.len()
        ),
    };
    lines.push(line("support headers", Ok(support), true));
    let scratch = std::env::temp_dir().join(format!("begen-doctor-{}", std::process::id()));
    // The compiler must run, not only be named.
    let host_plan = plan_backend(opts, &Config::default(), Platform::Cpu, env);
    let tu = TuInputs {
        includes: &[],
        system_includes: &[],
        prefix_maps: &[],
        work: &scratch,
        cc_metadata: opts.cc_metadata,
    };
    let host = backend::probe(Platform::Cpu, &d).and_then(|cpu| cpu.command(&host_plan, &tu, &d, false));
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
    lines.push(line("host C++ (cc, CXX)", host, true));
    // Architectures asked for are checked even without nvcc.
    if !opts.arch.is_empty() {
        let asked =
            arch::parse_list(&opts.arch).map(|l| l.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "));
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
            let asked = plan_backend(opts, &Config::default(), Platform::Cuda, env).arch;
            let archs = d.cuda_archs(asked.as_ref(), &cuda).map(|(archs, source)| {
                let names: Vec<String> = archs.iter().map(|a| a.to_string()).collect();
                format!("{} (from {}); {}", names.join(", "), source.describe(), arch::gencode_flags(&archs).join(" "))
            });
            lines.push(line("CUDA architectures", archs, false));
        }
        Err(e) => lines.push(line("nvcc", Err(e), false)),
    }
    lines.push(line("Python asked", Ok(d.python()), false));
    lines.push(line("JAX in that Python", jax_report(&d), false));
    let _ = std::fs::remove_dir_all(&scratch);
    lines
}

/// jax and jaxlib versions and the backends JAX finds (a GPU needs its
/// CUDA plugin), as `BEGEN_PYTHON` sees them.
#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
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

#[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
fn describe_cmd(cmd: &super::compile::CompilerCmd) -> String {
    let mut s = cmd.program.display().to_string();
    for a in &cmd.args {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}
