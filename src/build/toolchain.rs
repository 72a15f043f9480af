//! Toolchain discovery: the XLA FFI headers (and the API version they
//! declare), begen's support headers, the host C++ compiler (through cc),
//! nvcc, the static CUDA runtime, and the CUDA architectures.
//!
//! Each missing piece is one paragraph ([`ErrorKind::Toolchain`](crate::ErrorKind::Toolchain)) that says what
//! was tried and how to fix it. Every environment variable is read through
//! [`Env`], so build.rs can ask Cargo to rerun when one changes.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::arch::{self, CudaArch};
use super::probes::Probes;
use super::process::{self, Finished, Stopped};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::model::plan::{ArchRequest, ArchSource};

/// What a probe of `$BEGEN_PYTHON` learned (one run, on first need).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct PythonProbe {
    /// The site-packages directory, for pip's CUDA layout.
    purelib: Option<PathBuf>,
    /// `jax.ffi.include_dir()`, or why it failed.
    jax_include: std::result::Result<PathBuf, String>,
}

const PROBE_SCRIPT: &str = "\
import sysconfig
print('purelib=' + sysconfig.get_paths()['purelib'])
try:
    import jax.ffi
    print('jax_ffi=' + jax.ffi.include_dir())
except Exception as e:
    print('jax_error=' + type(e).__name__ + ': ' + str(e).replace('\\n', ' '))
";

/// How long a probe of a program may run (`BEGEN_PROBE_TIMEOUT` overrides), and how much it may write.
const PROBE_TIMEOUT_S: u64 = 60;
const PROBE_BYTES: u64 = 1 << 20;

/// Finds toolchain pieces on demand; each lookup runs at most once, and
/// with a [`Probes`] record, a program's answer is reused across builds
/// while the program and its inputs are the same.
pub(crate) struct Discovery<'e> {
    env: &'e Env,
    probe: OnceCell<std::result::Result<PythonProbe, String>>,
    probes: Option<&'e Probes>,
}

/// The CUDA side of the toolchain.
#[derive(Debug, Clone)]
pub(crate) struct Cuda {
    pub(crate) nvcc: PathBuf,
    /// `release 13.0, V13.0.48` from `nvcc --version`, when it answers.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))] // used by the CLI (`begen doctor`, `begen scan`)
    pub(crate) version: Option<String>,
    /// The folder holding `libcudart_static.a`.
    pub(crate) cudart_dir: Option<PathBuf>,
    /// Virtual architectures this nvcc supports (`--list-gpu-arch`).
    pub(crate) supported: Vec<u32>,
}

impl<'e> Discovery<'e> {
    /// Probes everything it is asked (`begen doctor`: what is there now).
    pub(crate) fn new(env: &'e Env) -> Discovery<'e> {
        Discovery { env, probe: OnceCell::new(), probes: None }
    }

    /// Reuses the answers in `probes` where they still hold (a build).
    pub(crate) fn with_probes(env: &'e Env, probes: &'e Probes) -> Discovery<'e> {
        Discovery { env, probe: OnceCell::new(), probes: Some(probes) }
    }

    /// `run`'s answer, or the one on record for the same `inputs` (with the
    /// whole environment) while the files it named are unchanged.
    pub(crate) fn remembered<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        name: &str,
        inputs: &str,
        run: impl FnOnce() -> (T, Option<Vec<PathBuf>>),
    ) -> T {
        match self.probes {
            Some(probes) => probes.get_or(name, &format!("{inputs}\n{}", self.env.snapshot()), run),
            None => run().0,
        }
    }

    /// An environment variable, read through the build's environment.
    pub(crate) fn var(&self, name: &str) -> Option<String> {
        self.env.var(name)
    }

    /// The file a program name runs: itself when it is a path, else found
    /// on `PATH`.
    pub(crate) fn program_file(&self, program: &Path) -> Option<PathBuf> {
        if program.components().count() > 1 {
            return program.is_file().then(|| program.to_path_buf());
        }
        self.which(&program.to_string_lossy())
    }

    /// The Python that is asked about jax and pip's CUDA packages:
    /// `BEGEN_PYTHON`, else the venv's Python when begen was installed into
    /// one by pip (`venv/bin/begen` beside `venv/bin/python`), else `python3`.
    pub(crate) fn python(&self) -> String {
        self.env.var("BEGEN_PYTHON").unwrap_or_else(|| {
            let exe = std::env::current_exe().ok();
            exe.and_then(|exe| venv_python(&exe)).map_or_else(|| "python3".to_string(), |p| p.display().to_string())
        })
    }

    /// Runs a program begen asks about itself (`$BEGEN_PYTHON`, nvcc),
    /// bounded: [`PROBE_TIMEOUT_S`] seconds unless `BEGEN_PROBE_TIMEOUT` says
    /// otherwise, and [`PROBE_BYTES`] bytes of output. The error names the
    /// program and says why it gave no answer.
    pub(super) fn run_probe(&self, program: &Path, args: &[&str]) -> std::result::Result<Finished, String> {
        let seconds =
            self.env.var("BEGEN_PROBE_TIMEOUT").and_then(|s| s.parse::<u64>().ok()).unwrap_or(PROBE_TIMEOUT_S);
        let timeout = std::time::Duration::from_secs(seconds.max(1));
        let shown = program.display();
        process::run_bounded(Command::new(program).args(args), timeout, PROBE_BYTES).map_err(|stopped| match stopped {
            Stopped::Spawn(e) => format!("`{shown}` could not be run ({e})"),
            Stopped::Wait(e) => format!("waiting for `{shown}` failed ({e})"),
            Stopped::Timeout(..) => format!(
                "`{shown}` did not answer within {} s and was stopped (BEGEN_PROBE_TIMEOUT sets the limit, in seconds)",
                timeout.as_secs()
            ),
            Stopped::TooMuch => format!("`{shown}` wrote more than {PROBE_BYTES} bytes and was stopped"),
        })
    }

    fn probe(&self) -> &std::result::Result<PythonProbe, String> {
        self.probe.get_or_init(|| {
            let python = self.python();
            let inputs = format!("python {python}\n{PROBE_SCRIPT}");
            self.remembered("python", &inputs, || {
                let probe = self.run_python_probe(&python);
                // Kept while the interpreter and its site-packages (which a
                // `pip install` changes) are the same; a failure is retried.
                let files = match (&probe, self.program_file(Path::new(&python))) {
                    (Ok(PythonProbe { purelib: Some(site), jax_include: Ok(_) }), Some(exe)) => {
                        Some(vec![exe, site.clone()])
                    }
                    _ => None,
                };
                (probe, files)
            })
        })
    }

    fn run_python_probe(&self, python: &str) -> std::result::Result<PythonProbe, String> {
        {
            let output = self.run_probe(Path::new(python), &["-c", PROBE_SCRIPT])?;
            if !output.status.success() {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let last = stderr.lines().last().unwrap_or("no output");
                return Err(format!("`{python}` failed ({last})"));
            }
            let stdout = String::from_utf8_lossy(&output.stdout);
            let mut probe = PythonProbe { purelib: None, jax_include: Err("no answer".to_string()) };
            for line in stdout.lines() {
                if let Some(v) = line.strip_prefix("purelib=") {
                    probe.purelib = Some(PathBuf::from(v));
                } else if let Some(v) = line.strip_prefix("jax_ffi=") {
                    probe.jax_include = Ok(PathBuf::from(v));
                } else if let Some(v) = line.strip_prefix("jax_error=") {
                    probe.jax_include = Err(v.to_string());
                }
            }
            Ok(probe)
        }
    }

    /// The directory holding `xla/ffi/api/ffi.h`.
    pub(crate) fn xla_ffi_include(&self) -> Result<PathBuf> {
        const HEADER: &str = "xla/ffi/api/ffi.h";
        if let Some(dir) = self.env.var("XLA_FFI_INCLUDE_DIR") {
            let dir = PathBuf::from(dir);
            if dir.join(HEADER).is_file() {
                return Ok(dir);
            }
            return Err(Error::toolchain(format!(
                "XLA_FFI_INCLUDE_DIR is set to `{}`, but `{HEADER}` is not there. \
                 Point it at the directory that contains `xla/` (for a pip install of jax: \
                 the output of `python3 -c 'import jax.ffi; print(jax.ffi.include_dir())'`), \
                 or unset it to let begen ask Python.",
                dir.display()
            )));
        }
        let python = self.python();
        let why = match self.probe() {
            Ok(PythonProbe { jax_include: Ok(dir), .. }) if dir.join(HEADER).is_file() => {
                return Ok(dir.clone());
            }
            Ok(PythonProbe { jax_include: Ok(dir), .. }) => {
                format!("it answered `{}`, which has no `{HEADER}`", dir.display())
            }
            Ok(PythonProbe { jax_include: Err(e), .. }) => format!("importing jax.ffi failed: {e}"),
            Err(e) => e.clone(),
        };
        Err(Error::toolchain(format!(
            "begen needs the XLA FFI headers (`{HEADER}`) and could not find them. \
             Tried: XLA_FFI_INCLUDE_DIR (unset); asking `{python}` for \
             `jax.ffi.include_dir()` ({why}). Fix: install jax into that Python \
             (`{python} -m pip install jax`), set BEGEN_PYTHON to a Python that has jax, \
             or set XLA_FFI_INCLUDE_DIR to a directory that contains `{HEADER}`."
        )))
    }

    /// nvcc: `NVCC`, then `$CUDA_PATH/bin/nvcc`, `$CUDA_HOME/bin/nvcc`, `nvcc` on
    /// `PATH`, `/usr/local/cuda/bin/nvcc`, then pip's layout in
    /// `$BEGEN_PYTHON`'s site-packages (`nvidia/cu13/bin/nvcc`,
    /// `nvidia/cuda_nvcc/bin/nvcc`).
    pub(crate) fn cuda(&self) -> Result<Cuda> {
        let mut tried = Vec::new();
        let nvcc = self.find_nvcc(&mut tried).ok_or_else(|| {
            Error::toolchain(format!(
                "CUDA sources need nvcc, and none was found. Tried: {}. Fix: install the \
                 CUDA toolkit and set CUDA_PATH (or NVCC to nvcc's path), or install pip's \
                 toolkit into BEGEN_PYTHON's environment (`pip install nvidia-cuda-nvcc \
                 nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl`); or build only the \
                 CPU kernels with `--platform cpu` (`.platform(\"cpu\")` in build.rs).",
                tried.join("; ")
            ))
        })?;
        let (version, supported) = self.remembered("nvcc", &format!("nvcc {}", nvcc.display()), || {
            let version = self
                .run_stdout(&nvcc, &["--version"])
                .and_then(|out| out.lines().find_map(|l| l.split_once("release ").map(|(_, v)| v.trim().to_string())));
            let supported: Vec<u32> = self
                .run_stdout(&nvcc, &["--list-gpu-arch"])
                .map(|out| out.split_whitespace().filter_map(|w| w.strip_prefix("compute_")?.parse().ok()).collect())
                .unwrap_or_default();
            let keep = (version.is_some() && !supported.is_empty()).then(|| vec![nvcc.clone()]);
            ((version, supported), keep)
        });
        let cudart_dir = self.find_cudart(&nvcc);
        Ok(Cuda { nvcc, version, cudart_dir, supported })
    }

    /// What a probe wrote on stdout, when it answered and succeeded.
    fn run_stdout(&self, program: &Path, args: &[&str]) -> Option<String> {
        let out = self.run_probe(program, args).ok()?;
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn find_nvcc(&self, tried: &mut Vec<String>) -> Option<PathBuf> {
        if let Some(nvcc) = self.env.var("NVCC") {
            let path = PathBuf::from(&nvcc);
            if path.components().count() > 1 {
                if path.is_file() {
                    return Some(path);
                }
                tried.push(format!("NVCC=`{nvcc}` (missing)"));
            } else if let Some(found) = self.which(&nvcc) {
                return Some(found);
            } else {
                tried.push(format!("NVCC=`{nvcc}` (not on PATH)"));
            }
        } else {
            tried.push("NVCC (unset)".to_string());
        }
        for var in ["CUDA_PATH", "CUDA_HOME"] {
            match self.env.var(var) {
                Some(dir) => {
                    let path = Path::new(&dir).join("bin/nvcc");
                    if path.is_file() {
                        return Some(path);
                    }
                    tried.push(format!("{var}/bin/nvcc (`{}` missing)", path.display()));
                }
                None => tried.push(format!("{var} (unset)")),
            }
        }
        if let Some(found) = self.which("nvcc") {
            return Some(found);
        }
        tried.push("nvcc on PATH (not found)".to_string());
        let usr = Path::new("/usr/local/cuda/bin/nvcc");
        if usr.is_file() {
            return Some(usr.to_path_buf());
        }
        tried.push(format!("`{}` (missing)", usr.display()));
        let python = self.python();
        match self.probe() {
            Ok(PythonProbe { purelib: Some(site), .. }) => {
                for rel in ["nvidia/cu13/bin/nvcc", "nvidia/cuda_nvcc/bin/nvcc"] {
                    let path = site.join(rel);
                    if path.is_file() {
                        return Some(path);
                    }
                }
                tried.push(format!(
                    "pip's layout in `{python}`'s site-packages (`{}/nvidia/cu13/bin/nvcc`: missing)",
                    site.display()
                ));
            }
            Ok(_) => tried.push(format!("pip's layout (`{python}` named no site-packages)")),
            Err(e) => tried.push(format!("pip's layout ({e})")),
        }
        None
    }

    /// `program` on `PATH`, like `which`. PATH is read through [`Env`], so
    /// build.rs reruns when it changes.
    fn which(&self, program: &str) -> Option<PathBuf> {
        let path = self.env.var("PATH")?;
        std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| p.is_file())
    }

    /// The folder with `libcudart_static.a`: beside nvcc's toolkit (`lib64`,
    /// `lib`, `targets/<arch>-linux/lib`) or pip's `nvidia/cuda_runtime/lib`.
    fn find_cudart(&self, nvcc: &Path) -> Option<PathBuf> {
        let top = nvcc.parent()?.parent()?;
        let mut candidates =
            vec![top.join("lib64"), top.join("lib"), top.join(format!("targets/{}-linux/lib", std::env::consts::ARCH))];
        if let Some(site) = top.parent().and_then(Path::parent) {
            candidates.push(site.join("nvidia/cuda_runtime/lib"));
        }
        candidates.into_iter().find(|dir| dir.join("libcudart_static.a").is_file())
    }

    /// Finds a library to link, by `-l` name: in `dirs` (the plan's
    /// `link: dirs:`), then in `toolkit` (the backends' own folders, such
    /// as nvcc's toolkit and pip's `nvidia/*/lib`), then in `LIBRARY_PATH`
    /// and the system's folders. A missing one is one paragraph saying
    /// where begen looked and how to fix it.
    pub(crate) fn find_library(&self, name: &str, dirs: &[PathBuf], toolkit: &[PathBuf]) -> Result<FoundLib> {
        let mut candidates: Vec<(PathBuf, bool)> = dirs.iter().chain(toolkit).map(|d| (d.clone(), true)).collect();
        if let Some(paths) = self.env.var("LIBRARY_PATH") {
            candidates.extend(std::env::split_paths(&paths).map(|d| (d, false)));
        }
        let triple = format!("{}-linux-gnu", std::env::consts::ARCH);
        for d in [
            "/usr/local/lib".to_string(),
            format!("/usr/lib/{triple}"),
            "/usr/lib64".into(),
            "/usr/lib".into(),
            format!("/lib/{triple}"),
            "/lib64".into(),
            "/lib".into(),
        ] {
            candidates.push((PathBuf::from(d), false));
        }
        for (dir, own) in &candidates {
            if let Some(file) = library_file(dir, name) {
                return Ok(FoundLib { name: name.to_string(), dir: dir.clone(), file, rpath: *own });
            }
        }
        let looked: Vec<String> = candidates.iter().map(|(d, _)| d.display().to_string()).collect();
        Err(Error::toolchain(format!(
            "the library `{name}` (begen.yaml's `link: libs:`) was not found: no `lib{name}.so`, \
             `lib{name}.so.<version>` or `lib{name}.a` in {}. Fix: install it (a CUDA toolkit library \
             comes with the toolkit, or from pip, e.g. `pip install nvidia-{name}` into BEGEN_PYTHON's \
             environment), or add its directory under `link: dirs:`.",
            looked.join(", ")
        )))
    }

    /// The architectures to build for and where the choice came from: the
    /// plan's request, else this machine's GPUs, else begen's list.
    pub(crate) fn cuda_archs(&self, request: Option<&ArchRequest>, cuda: &Cuda) -> Result<(Vec<CudaArch>, ArchSource)> {
        let parse = |items: &[String], source: ArchSource| {
            let archs = arch::parse_list(items).map_err(|bad| {
                Error::toolchain(format!(
                    "`{bad}` (from {}) is not a CUDA architecture. Write `sm_90`, `90`, `9.0` \
                     or a suffixed target such as `sm_90a`; separate several with commas.",
                    source.describe()
                ))
            })?;
            // `arch: ['']` would give nvcc no -gencode at all: its own default, neither what was asked nor begen's.
            if archs.is_empty() {
                return Err(Error::toolchain(format!(
                    "{} names no CUDA architecture. Write `sm_90`, `90` or `9.0`, or leave it out for \
                     the local GPUs or begen's default list.",
                    source.describe()
                )));
            }
            Ok((archs, source))
        };
        if let Some(request) = request {
            return parse(&request.items, request.source);
        }
        let local = self.local_gpus();
        if !local.is_empty() {
            return Ok((local, ArchSource::LocalGpu));
        }
        Ok((arch::default_archs(&cuda.supported), ArchSource::Default))
    }
}

impl Discovery<'_> {
    /// This machine's GPUs (`nvidia-smi`), kept while `nvidia-smi` and the
    /// driver's list of GPUs (`/proc/driver/nvidia/gpus`) are the same.
    /// Without `nvidia-smi` on `PATH` there are none, and nothing runs.
    fn local_gpus(&self) -> Vec<CudaArch> {
        let Some(smi) = self.which("nvidia-smi") else {
            return Vec::new();
        };
        let mut gpus = String::new();
        if let Ok(entries) = std::fs::read_dir("/proc/driver/nvidia/gpus") {
            let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            dirs.sort();
            for dir in dirs {
                let info = std::fs::read_to_string(dir.join("information")).unwrap_or_default();
                gpus.push_str(&format!("{}\n{info}", dir.display()));
            }
        }
        let numbers: Vec<(u32, Option<char>)> =
            self.remembered("gpus", &format!("nvidia-smi {}\n{gpus}", smi.display()), || {
                let found: Vec<(u32, Option<char>)> =
                    arch::local_gpus(&smi).iter().map(|a| (a.number, a.suffix)).collect();
                (found, Some(vec![smi.clone()]))
            });
        numbers.into_iter().map(|(number, suffix)| CudaArch { number, suffix }).collect()
    }
}

/// A library to link, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FoundLib {
    /// The `-l` name asked for.
    pub(crate) name: String,
    /// The directory holding it.
    pub(crate) dir: PathBuf,
    /// Its file name there (`libcublas.so.13`).
    pub(crate) file: String,
    /// Whether `dir` goes into the library's run path (begen.yaml's and
    /// the CUDA toolkit's folders; not the system's).
    pub(crate) rpath: bool,
}

/// The file of library `name` in `dir`: `lib<name>.so`, else a versioned
/// `lib<name>.so.<N>` (pip's wheels ship no unversioned link), else
/// `lib<name>.a`.
fn library_file(dir: &Path, name: &str) -> Option<String> {
    let plain = format!("lib{name}.so");
    if dir.join(&plain).exists() {
        return Some(plain);
    }
    let versioned = format!("lib{name}.so.");
    let is_version =
        |v: &str| !v.is_empty() && v.split('.').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.strip_prefix(&versioned).is_some_and(is_version))
        .collect();
    // The shortest version: the soname link (`libcublas.so.13`) over `.13.0.2`.
    found.sort_by_key(|f| (f.len(), f.clone()));
    if let Some(f) = found.into_iter().next() {
        return Some(f);
    }
    let archive = format!("lib{name}.a");
    dir.join(&archive).is_file().then_some(archive)
}

/// The Python of the virtual environment `exe` was installed into: `exe`
/// in its `bin/` beside a `python`, and `pyvenv.cfg` one level up.
fn venv_python(exe: &Path) -> Option<PathBuf> {
    let bin = exe.parent()?;
    let python = bin.join("python");
    (bin.parent()?.join("pyvenv.cfg").is_file() && python.is_file()).then_some(python)
}

/// The `XLA_FFI_API_MAJOR.MINOR` that the headers in `include` declare.
pub(crate) fn xla_ffi_api_version(include: &Path) -> Option<String> {
    let text = std::fs::read_to_string(include.join("xla/ffi/api/c_api.h")).ok()?;
    let define = |name: &str| -> Option<u32> {
        text.lines().find_map(|line| {
            let rest = line.trim().strip_prefix("#define")?.trim_start();
            let value = rest.strip_prefix(name)?;
            value.starts_with(char::is_whitespace).then(|| value.trim().parse().ok())?
        })
    };
    Some(format!("{}.{}", define("XLA_FFI_API_MAJOR")?, define("XLA_FFI_API_MINOR")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_api_version() {
        let dir = std::env::temp_dir().join(format!("begen-toolchain-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("xla/ffi/api")).unwrap();
        std::fs::write(
            dir.join("xla/ffi/api/c_api.h"),
            "#define XLA_FFI_API_MAJOR_X 9\n#define XLA_FFI_API_MAJOR 0\n  #define XLA_FFI_API_MINOR 3  \n",
        )
        .unwrap();
        assert_eq!(xla_ffi_api_version(&dir).as_deref(), Some("0.3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_begen_installed_in_a_venv_asks_its_python() {
        let venv = std::env::temp_dir().join(format!("begen-venv-{}", std::process::id()));
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        std::fs::write(venv.join("bin/begen"), "").unwrap();
        assert_eq!(venv_python(&venv.join("bin/begen")), None, "no python there");
        std::fs::write(venv.join("bin/python"), "").unwrap();
        assert_eq!(venv_python(&venv.join("bin/begen")), None, "no pyvenv.cfg: not a venv");
        std::fs::write(venv.join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        assert_eq!(venv_python(&venv.join("bin/begen")), Some(venv.join("bin/python")));
        std::fs::remove_dir_all(&venv).unwrap();
        // The binary under test lives in target/, not in a venv.
        let env = Env::new().without("BEGEN_PYTHON");
        assert_eq!(Discovery::new(&env).python(), "python3");
    }

    #[test]
    fn an_empty_architecture_list_is_refused() {
        let env = Env::new().without("BEGEN_CUDA_ARCH");
        let cuda = Cuda { nvcc: PathBuf::from("nvcc"), version: None, cudart_dir: None, supported: vec![90] };
        let d = Discovery::new(&env);
        let asked =
            |items: &[&str], source| ArchRequest { items: items.iter().map(|s| s.to_string()).collect(), source };
        for config in [asked(&[""], ArchSource::Config), asked(&[" , "], ArchSource::Config)] {
            let err = d.cuda_archs(Some(&config), &cuda).unwrap_err().to_string();
            assert!(err.contains("begen.yaml cuda.arch names no CUDA architecture"), "{err}");
        }
        let err = d.cuda_archs(Some(&asked(&[","], ArchSource::Option)), &cuda).unwrap_err().to_string();
        assert!(err.contains("names no CUDA architecture"), "{err}");
        let (archs, _) = d.cuda_archs(Some(&asked(&["sm_90"], ArchSource::Config)), &cuda).unwrap();
        assert_eq!(archs.len(), 1);
    }

    #[test]
    fn missing_xla_dir_is_one_paragraph() {
        let env = Env::new().with("XLA_FFI_INCLUDE_DIR", "/nonexistent/begen");
        let err = Discovery::new(&env).xla_ffi_include().unwrap_err().to_string();
        assert!(err.contains("XLA_FFI_INCLUDE_DIR is set to `/nonexistent/begen`"), "{err}");
        assert!(!err.contains('\n'));
    }

    #[test]
    fn missing_nvcc_says_what_was_tried() {
        let env = Env::new()
            .with("NVCC", "/nonexistent/nvcc")
            .with("CUDA_PATH", "/nonexistent/cuda")
            .without("CUDA_HOME")
            .with("BEGEN_PYTHON", "/nonexistent/python");
        let d = Discovery::new(&env);
        match d.cuda() {
            // A machine with a system CUDA finds it on PATH; nothing to check then.
            Ok(cuda) => assert!(cuda.nvcc.is_file()),
            Err(e) => {
                let text = e.to_string();
                assert!(text.contains("NVCC=`/nonexistent/nvcc` (missing)"), "{text}");
                assert!(text.contains("--platform cpu"), "{text}");
            }
        }
        assert!(env.names_read().contains(&"CUDA_HOME".to_string()));
        assert!(env.names_read().contains(&"PATH".to_string()), "nvcc on PATH is a recorded read");
    }
}
