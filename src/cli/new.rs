//! `begen new PATH`: a kernel package that builds and passes its own test
//! in one command. The files are templates/new/, embedded in the binary;
//! `{{key}}` placeholders are filled with the package's names.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::model::{is_identifier, is_py_keyword};

/// `begen new PATH`.
#[derive(Debug, Args)]
#[command(after_help = NEW_GUIDE)]
pub(crate) struct NewArgs {
    /// The project folder to create (it must not exist, or be empty).
    pub(crate) path: PathBuf,
    /// The Python package's import name [default: PATH's folder name, with
    /// `-` as `_`].
    #[arg(long)]
    pub(crate) package: Option<String>,
    /// Add a CUDA kernel (kernels/square_cuda.cu) beside the CPU one; the
    /// wheel's build then needs nvcc.
    #[arg(long)]
    pub(crate) cuda: bool,
    /// Build the kernels as PyTorch ops too (begen's torch target): the
    /// wheel holds `_kernels_torch.py` beside `_kernels.py`, requires torch,
    /// and tests/test_torch.py calls the ops from torch (with --cuda, the
    /// CUDA kernel's test skips without a GPU).
    #[arg(long)]
    pub(crate) torch: bool,
}

const NEW_GUIDE: &str = "\
What it writes (PATH = mykernels):
  pyproject.toml               hatchling + begen's build hook: `pip wheel .` compiles the kernels
  kernels/square.cpp           a CPU kernel (`// @BE square ...`) and its backward kernel
  kernels/begen.yaml           pairs them: jax.grad(mykernels.square) runs square_bwd
  src/mykernels/__init__.py    the package; the wheel adds _kernels.py and lib_kernels.so
  tests/test_package.py        the kernel against numpy, its gradient by begen.testing.check_grads
  README.md, .gitignore
--cuda adds kernels/square_cuda.cu (the wheel's build then needs nvcc).
--torch builds the torch target too (`targets = [\"jax\", \"torch\"]` in the
hook): the package's functions are then the torch ops (_kernels_torch.py),
the JAX functions stay in mykernels._kernels, the wheel requires torch, and
tests/test_torch.py checks each op and its gradient from torch.
The kernels register with XLA as mykernels._kernels.<kernel> (the import
path), so the package loads beside any other begen-built one.

Then:
  cd mykernels
  pip wheel . --no-deps -w dist        # -v shows begen's report (platform tag, glibc)
  pip install dist/*.whl pytest begen-jax
  pytest tests";

/// One file of the scaffold: where it goes and its template.
struct File {
    path: &'static str,
    text: &'static str,
    cuda_only: bool,
    torch_only: bool,
}

const FILES: &[File] = &[
    File {
        path: "pyproject.toml",
        text: include_str!("../../templates/new/pyproject.toml"),
        cuda_only: false,
        torch_only: false,
    },
    File {
        path: "README.md",
        text: include_str!("../../templates/new/README.md"),
        cuda_only: false,
        torch_only: false,
    },
    File {
        path: ".gitignore",
        text: include_str!("../../templates/new/gitignore"),
        cuda_only: false,
        torch_only: false,
    },
    File {
        path: "kernels/begen.yaml",
        text: include_str!("../../templates/new/kernels/begen.yaml"),
        cuda_only: false,
        torch_only: false,
    },
    File {
        path: "kernels/square.cpp",
        text: include_str!("../../templates/new/kernels/square.cpp"),
        cuda_only: false,
        torch_only: false,
    },
    File {
        path: "kernels/square_cuda.cu",
        text: include_str!("../../templates/new/kernels/square_cuda.cu"),
        cuda_only: true,
        torch_only: false,
    },
    File {
        path: "src/{{package}}/__init__.py",
        text: include_str!("../../templates/new/src/__init__.py"),
        cuda_only: false,
        torch_only: false,
    },
    File {
        path: "tests/test_package.py",
        text: include_str!("../../templates/new/tests/test_package.py"),
        cuda_only: false,
        torch_only: false,
    },
    File {
        path: "tests/test_torch.py",
        text: include_str!("../../templates/new/tests_torch.py"),
        cuda_only: false,
        torch_only: true,
    },
];

const CUDA_TORCH_TEST: &str = include_str!("../../templates/new/tests_torch_cuda.py");

const CUDA_TEST: &str = include_str!("../../templates/new/tests_cuda.py");

pub(crate) fn run(args: &NewArgs) -> i32 {
    match create(args) {
        Ok(package) => {
            super::say!("created {} (package `{package}`)", args.path.display());
            super::say!(
                "next: cd {} && pip wheel . --no-deps -w dist && pip install dist/*.whl pytest begen-jax && pytest tests",
                args.path.display()
            );
            0
        }
        Err(why) => {
            super::say!("error: {why}");
            2
        }
    }
}

/// The package's import name: `--package`, else the folder's name with
/// `-` as `_`; an identifier that is not a Python keyword.
fn package_name(args: &NewArgs) -> Result<String, String> {
    let (name, from) = match &args.package {
        Some(name) => (name.clone(), "--package"),
        None => {
            let folder = args.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            (folder.replace('-', "_"), "the folder's name")
        }
    };
    if !is_identifier(&name) || is_py_keyword(&name) || name.starts_with('_') {
        return Err(format!(
            "`{}` ({from}) is not a usable Python package name: use letters, digits and `_`, not starting with a \
             digit or `_`, not a Python keyword; pass --package NAME",
            name.escape_debug()
        ));
    }
    let python = python_names(&name);
    if let Some(why) = taken(&name, python.as_ref()) {
        let free = [format!("{name}_kernels"), format!("my_{name}"), format!("{name}_ops")]
            .into_iter()
            .find(|n| taken(n, python.as_ref()).is_none())
            .map(|n| format!("; did you mean `--package {n}`?"))
            .unwrap_or_default();
        return Err(format!(
            "`{name}` ({from}) is {why}: a package of that name would hide it, and installing its wheel would \
             replace it{free}"
        ));
    }
    Ok(name)
}

/// Names begen refuses for a package whatever Python says: begen's own
/// modules (a `begen` package's wheel would uninstall begen-jax's).
const BEGEN_MODULES: &[&str] = &["begen", "begen_jax", "begen_runtime", "begen_tune"];

/// Standard-library packages `sys.stdlib_module_names` leaves out, refused
/// also when no Python answers (`test`, CPython's own tests).
const STDLIB_EXTRA: &[&str] = &["test", "idlelib"];

/// What the Python begen asks knows of `name` and of the names offered
/// instead: its standard library's names (`sys.stdlib_module_names`, 3.10
/// and later) and which of them are importable there. `None` when no
/// Python answers: the built-in lists alone decide then.
struct PythonNames {
    stdlib: Vec<String>,
    importable: Vec<(String, String)>,
}

/// Asks the Python begen builds with about `name` and its alternatives.
fn python_names(name: &str) -> Option<PythonNames> {
    // The current folder is left off the path: it is not where the
    // package will be imported from.
    const SCRIPT: &str = "\
import sys, importlib.util
sys.path = [p for p in sys.path if p not in ('', '.')]
print(' '.join(sorted(getattr(sys, 'stdlib_module_names', ()))))
for n in sys.argv[1:]:
    try:
        spec = importlib.util.find_spec(n)
    except Exception:
        spec = True
    if spec is not None:
        print(n, getattr(spec, 'origin', None) or 'a namespace package')
";
    let names = [name.to_string(), format!("{name}_kernels"), format!("my_{name}"), format!("{name}_ops")];
    let args: Vec<&str> = names.iter().map(String::as_str).collect();
    let text = crate::build::ask_python(&crate::driver::Env::new(), SCRIPT, &args).ok()?;
    let mut lines = text.lines();
    let stdlib = lines.next()?.split_whitespace().map(str::to_string).collect();
    let importable = lines
        .filter_map(|l| l.split_once(' '))
        .map(|(n, origin)| (n.to_string(), origin.escape_debug().to_string()))
        .collect();
    Some(PythonNames { stdlib, importable })
}

/// Why `name` cannot be a package's name, if it cannot: a module of
/// Python's standard library, one the generated code, JAX or its start-up
/// imports, begen's own, or one importable in the environment.
fn taken(name: &str, python: Option<&PythonNames>) -> Option<String> {
    if BEGEN_MODULES.contains(&name) {
        return Some("one of begen's own modules".into());
    }
    if python.is_some_and(|p| p.stdlib.iter().any(|s| s == name)) {
        return Some("a module of Python's standard library".into());
    }
    if STDLIB_EXTRA.contains(&name) {
        return Some("a package of Python's standard library".into());
    }
    if crate::model::pynames::shadows_py_module(name) {
        return Some("a module that Python, JAX or the generated code imports".into());
    }
    let found = python.and_then(|p| p.importable.iter().find(|(n, _)| n == name));
    found.map(|(_, origin)| format!("importable in this environment already ({origin})"))
}

/// Fills `{{key}}` placeholders.
fn fill(text: &str, values: &[(&str, String)]) -> String {
    let mut out = text.to_string();
    for (key, value) in values {
        out = out.replace(&format!("{{{{{key}}}}}"), value);
    }
    out
}

fn create(args: &NewArgs) -> Result<String, String> {
    let package = package_name(args)?;
    let root: &Path = &args.path;
    if root.exists() {
        let empty = root.read_dir().map_err(|e| format!("{}: {e}", root.display()))?.next().is_none();
        if !root.is_dir() || !empty {
            return Err(format!(
                "{} exists and is not an empty folder: `begen new` writes a whole project and overwrites nothing",
                root.display()
            ));
        }
    }
    let dist = package.replace('_', "-");
    let exports = if args.cuda { vec!["square", "square_cuda"] } else { vec!["square"] };
    let (major, minor) = crate::target::torch::FLOOR;
    let torch_floor = format!("torch>={major}.{minor}");
    let jax_ns = if args.torch { "_kernels".to_string() } else { package.clone() };
    // A CUDA torch wheel names its CUDA major (torch's stable ABI holds
    // within one; the hatch hook refuses a name without it): the version's
    // local label, from the nvcc found now.
    let (version, version_note) = if args.torch && args.cuda {
        let note = "# A CUDA torch wheel names the CUDA major of the nvcc that built it (begen's\n\
                    # docs/shipping.md, \"Torch wheels per CUDA major\"): 0.1.0+cu13 for CUDA 13.\n";
        match crate::build::nvcc_major(&crate::driver::Env::new()) {
            Some(major) => (format!("0.1.0+cu{major}"), note.to_string()),
            None => (
                "0.1.0".to_string(),
                note.replace("0.1.0+cu13 for CUDA 13.", "no nvcc was found by `begen new`: add +cu<major>."),
            ),
        }
    } else {
        ("0.1.0".to_string(), String::new())
    };
    let values = [
        ("version", version),
        ("version_note", version_note),
        ("package", package.clone()),
        ("dist", dist),
        ("dist_file", package.clone()),
        ("begen_version", env!("CARGO_PKG_VERSION").to_string()),
        ("platform", if args.cuda { "auto" } else { "cpu" }.to_string()),
        ("cuda_and", if args.cuda { " and CUDA" } else { "" }.to_string()),
        ("cuda_files", if args.cuda { ", `kernels/square_cuda.cu`" } else { "" }.to_string()),
        ("cuda_functions", if args.cuda { "  square_cuda: {vjp: square_cuda_bwd}\n" } else { "" }.to_string()),
        ("exports", exports.join(", ")),
        ("all", exports.iter().map(|e| format!("\"{e}\"")).collect::<Vec<_>>().join(", ")),
        // With --torch the package's names are the torch ops: the JAX
        // tests call the `_kernels` module's.
        ("cuda_imports", if args.cuda && !args.torch { "import pytest  # noqa: E402\n" } else { "" }.to_string()),
        ("cuda_test", if args.cuda { fill(CUDA_TEST, &[("package", package.clone()), ("jax_ns", jax_ns.clone())]) } else { String::new() }),
        ("jax_ns", jax_ns.clone()),
        ("frameworks", if args.torch { "JAX and PyTorch" } else { "JAX" }.to_string()),
        ("torch_requires", if args.torch { format!(r#", "{torch_floor}""#) } else { String::new() }),
        ("torch_why", if args.torch { ", torch has the stable-ABI headers of the torch ops" } else { "" }.to_string()),
        ("torch_dep", if args.torch { format!(" and `{torch_floor}`") } else { String::new() }),
        (
            "targets_line",
            if args.torch {
                "targets = [\"jax\", \"torch\"]  # also _kernels_torch.py, lib_kernels_torch.so: torch ops\n"
            } else {
                ""
            }
            .to_string(),
        ),
        (
            "torch_doc",
            if args.torch {
                format!(
                    "\nThe functions here are the torch ops (_kernels_torch.py, which needs no\njax); the JAX \
                     functions are `from {package} import _kernels`."
                )
            } else {
                String::new()
            }
        ),
        ("main_module", if args.torch { "_kernels_torch" } else { "_kernels" }.to_string()),
        (
            "jax_import",
            if args.torch {
                "import pytest\n\njax = pytest.importorskip(\"jax\")  # the JAX side; tests/test_torch.py needs only torch"
            } else {
                "import jax"
            }
            .to_string(),
        ),
    ];
    let torch_values = [
        ("package", package.clone()),
        ("cuda_test", if args.cuda { CUDA_TORCH_TEST.to_string() } else { String::new() }),
    ];
    for file in FILES.iter().filter(|f| (args.cuda || !f.cuda_only) && (args.torch || !f.torch_only)) {
        let path = root.join(fill(file.path, &values));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let text = if file.torch_only { fill(file.text, &torch_values) } else { fill(file.text, &values) };
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(package)
}
