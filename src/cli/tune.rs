//! `begen tune OUT`: measures the compiled-in candidates of a built
//! library's tuned kernels on this machine and writes the winners into a
//! tuning table. The measuring is Python's (it calls the kernels through
//! JAX, or with `--torch` through the torch ops): this file finds the
//! library, reads `--shapes`, and runs the tuner embedded from
//! `build-support/python/begen_tune.py` with the Python that has jax (or
//! torch).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::build;
use crate::driver::Env;
use crate::model::plan::Outputs;

/// The tuner, run as `python -c TUNER ARGS`.
const TUNER: &str = include_str!("../../build-support/python/begen_tune.py");

/// `begen tune OUT`.
#[derive(Debug, Args)]
#[command(after_help = TUNE_GUIDE)]
pub(crate) struct TuneArgs {
    /// The output directory of `begen build` (holds lib<NAME>.so and <NAME>.py).
    pub(crate) out: PathBuf,
    /// The library's name [default: the one library in OUT].
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// YAML: kernel (or algorithm) -> a list of dim values, each one key to
    /// tune, e.g. `colsum: [{n: 512}, {n: 4096}]`.
    #[arg(long, value_name = "FILE", conflicts_with = "record")]
    pub(crate) shapes: Option<PathBuf>,
    /// Run this program (everything after `--record`, which comes last)
    /// and tune the keys its calls of tuned kernels trace.
    #[arg(long, value_name = "CMD", num_args = 1.., allow_hyphen_values = true)]
    pub(crate) record: Vec<String>,
    /// Tune only these kernels and algorithms (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub(crate) kernels: Vec<String>,
    /// A candidate replaces the default only when faster by this fraction.
    #[arg(long, default_value_t = 0.02, value_parser = margin)]
    pub(crate) margin: f64,
    /// Also write the entries into this table, for shipping (begen.yaml
    /// `tune: table: PATH`).
    #[arg(long, value_name = "PATH")]
    pub(crate) export: Option<PathBuf>,
    /// Draw each key's candidate times into this PNG (needs matplotlib).
    #[arg(long, value_name = "PNG")]
    pub(crate) plot: Option<PathBuf>,
    /// Timed rounds per candidate (the median is kept).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) repeats: u32,
    /// Measure and print, but write no table.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Measure the torch ops (OUT/<NAME>_torch.py, in BEGEN_TORCH_PYTHON,
    /// else BEGEN_PYTHON) instead of the JAX functions; the entries are the
    /// same, so one table serves both.
    #[arg(long)]
    pub(crate) torch: bool,
}

const TUNE_GUIDE: &str = "\
Declare the candidates in begen.yaml, build, then tune on the machine to tune for:
  # kernels/colsum.cpp: // @BE colsum arg:float32[n,m] ret:float32[m] const.BLOCK=1,16,64
  # begen.yaml:         tune: {colsum: {consts: [BLOCK], key: [n]}}
  begen build kernels --out out
  begen tune out --shapes shapes.yaml          # shapes.yaml: colsum: [{n: 512, m: 512}, {n: 8192, m: 512}]
  begen tune out --record python train.py      # or: the keys train.py traces
An algorithm is tuned over its implementations: tune: {add: {implementations: true, key: [n]}}.
Each candidate's outputs are checked against the default's, then timed as many
calls inside one jit; the winners go into the user's table
($BEGEN_TUNE_DIR, else ~/.cache/begen/tune/<NAME>.tune.json), which the
module reads when a call is traced. --export writes a table to ship.
BEGEN_TUNE=default makes every call take the declared default.
With --torch the torch ops (a --target torch build) are measured, each
candidate as eager calls, into the same table; tuned algorithms and out= ops
are tuned from the JAX side, whose entries the torch module reads too.";

fn margin(text: &str) -> Result<f64, String> {
    let m: f64 = text.parse().map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..1.0).contains(&m) { Ok(m) } else { Err("the margin is a fraction from 0 up to 1, e.g. 0.02".into()) }
}

/// Runs the tuner; the exit status.
pub(crate) fn run(args: &TuneArgs) -> i32 {
    match tune(args) {
        Ok(status) => status,
        Err(message) => {
            super::say!("begen error: {message}");
            2
        }
    }
}

fn tune(args: &TuneArgs) -> Result<i32, String> {
    let name = match &args.name {
        Some(name) => name.clone(),
        None if args.torch => torch_library_in(&args.out)?,
        None => library_in(&args.out)?,
    };
    let module = args.out.join(if args.torch { torch_module(&name) } else { Outputs::of(&name).module });
    if !module.is_file() {
        let target = if args.torch { " with --target torch (or jax,torch)" } else { "" };
        return Err(format!(
            "{} does not exist: build the library into {}{target} first",
            module.display(),
            args.out.display()
        ));
    }
    let env = Env::new();
    let (python, which) = match env.var("BEGEN_TORCH_PYTHON").filter(|_| args.torch) {
        Some(p) => (p, "BEGEN_TORCH_PYTHON"),
        None => (build::python(&env), "BEGEN_PYTHON"),
    };
    let mut cmd = std::process::Command::new(&python);
    cmd.arg("-c").arg(TUNER).arg(&args.out).arg(&name);
    if let Some(file) = &args.shapes {
        cmd.arg("--shapes-json").arg(shapes_json(file)?);
    }
    if !args.kernels.is_empty() {
        cmd.arg("--kernels").arg(args.kernels.join(","));
    }
    cmd.arg("--margin").arg(args.margin.to_string()).arg("--repeats").arg(args.repeats.to_string());
    if let Some(path) = &args.export {
        cmd.arg("--export").arg(path);
    }
    if let Some(path) = &args.plot {
        cmd.arg("--plot").arg(path);
    }
    if args.dry_run {
        cmd.arg("--dry-run");
    }
    if args.torch {
        cmd.arg("--torch");
    }
    if args.shapes.is_none() && args.record.is_empty() {
        return Err("give the keys to tune: --shapes FILE, or --record CMD ... to record them from a run".into());
    }
    if !args.record.is_empty() {
        cmd.arg("--record").args(&args.record);
    }
    let status = cmd.status().map_err(|e| format!("cannot run {python} ({which}): {e}"))?;
    Ok(status.code().unwrap_or(2))
}

/// The one library begen built into `out`: a `<NAME>.yaml` manifest with
/// its `<NAME>.py` and `lib<NAME>.so`.
fn library_in(out: &Path) -> Result<String, String> {
    let entries = std::fs::read_dir(out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".yaml")).map(str::to_string))
        .filter(|n| {
            let names = Outputs::of(n);
            out.join(names.module).is_file() && out.join(names.library).is_file()
        })
        .collect();
    names.sort();
    match names.len() {
        1 => Ok(names.remove(0)),
        0 => Err(format!("{} holds no library begen built (lib<NAME>.so, <NAME>.py, <NAME>.yaml)", out.display())),
        _ => Err(format!("{} holds several libraries ({}): choose one with --name", out.display(), names.join(", "))),
    }
}

/// The torch module of library `name`.
fn torch_module(name: &str) -> String {
    format!("{name}_torch.py")
}

/// The one library whose torch target begen built into `out`: a
/// `<NAME>_torch.py` beside its `lib<NAME>_torch.so`.
fn torch_library_in(out: &Path) -> Result<String, String> {
    let entries = std::fs::read_dir(out).map_err(|e| format!("cannot read {}: {e}", out.display()))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix("_torch.py")).map(str::to_string))
        .filter(|n| out.join(format!("lib{n}_torch.so")).is_file())
        .collect();
    names.sort();
    match names.len() {
        1 => Ok(names.remove(0)),
        0 => Err(format!(
            "{} holds no torch target begen built (lib<NAME>_torch.so, <NAME>_torch.py): build with --target torch",
            out.display()
        )),
        _ => Err(format!("{} holds several libraries ({}): choose one with --name", out.display(), names.join(", "))),
    }
}

/// The dtype names a `--shapes` key's `dtypes:` may give.
const DTYPES: &[&str] = &[
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
];

/// The largest `--shapes` file read: it lists a few keys per kernel.
const MAX_SHAPES_BYTES: u64 = 1 << 20;

/// `--shapes FILE` as the JSON the tuner reads, checked for shape: a
/// mapping of kernel names to lists of mappings of dims to integers (and
/// `dtypes:`, a list of dtype names; `attrs:`, attribute values).
fn shapes_json(file: &Path) -> Result<String, String> {
    // A FIFO would block the read for ever, a link to `/dev/zero` fill the
    // memory: only a regular file of a bounded size is read.
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read {}: {e}", file.display());
    if let Some(kind) = crate::source::not_regular(file).map_err(|e| cannot(&e))? {
        return Err(format!("{}: not a shapes file: {kind}, not a regular file", file.display()));
    }
    let size = std::fs::metadata(file).map_err(|e| cannot(&e))?.len();
    if size > MAX_SHAPES_BYTES {
        return Err(format!(
            "{}: not a shapes file: {size} bytes, over the {MAX_SHAPES_BYTES} one may have",
            file.display()
        ));
    }
    let text = std::fs::read_to_string(file).map_err(|e| cannot(&e))?;
    // The YAML parser is quadratic in the nesting depth: refused first, as
    // in begen.yaml.
    if let Some(at) = crate::config::too_deep(&text) {
        let line = text[..at].matches('\n').count() + 1;
        return Err(format!(
            "{}:{line}: not a shapes file: nested more than {} deep",
            file.display(),
            crate::config::MAX_FLOW_DEPTH
        ));
    }
    type Shapes = BTreeMap<String, Vec<BTreeMap<String, serde_yaml_ng::Value>>>;
    let shapes: Shapes = serde_yaml_ng::from_str(&text).map_err(|e| {
        format!("{}: {e}; write it as `kernel: [{{n: 512, m: 64}}, {{n: 4096, m: 64}}]`", file.display())
    })?;
    let mut doc = serde_json::Map::new();
    for (kernel, keys) in shapes {
        let mut list = Vec::new();
        for key in keys {
            let mut entry = serde_json::Map::new();
            for (dim, value) in key {
                let at = || format!("{}: `{}`: `{}`", file.display(), kernel.escape_debug(), dim.escape_debug());
                let json = match (dim.as_str(), &value) {
                    ("dtypes", serde_yaml_ng::Value::Sequence(items)) => {
                        let mut names = Vec::new();
                        for item in items {
                            let Some(name) = item.as_str().filter(|n| DTYPES.contains(n)) else {
                                let text = match item.as_str() {
                                    Some(n) => format!("`{}`", n.escape_debug()),
                                    None => serde_json::to_string(item).unwrap_or_default(),
                                };
                                let near = item
                                    .as_str()
                                    .and_then(|n| crate::diag::suggest::closest(n, DTYPES.iter().copied()));
                                let more = near.map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default();
                                return Err(format!(
                                    "{}: {} is not a dtype{more}; dtypes: {}",
                                    at(),
                                    text.escape_debug(),
                                    DTYPES.join(", ")
                                ));
                            };
                            names.push(serde_json::json!(name));
                        }
                        serde_json::Value::Array(names)
                    }
                    ("dtypes", _) => {
                        return Err(format!("{} must be a list of dtype names, e.g. `dtypes: [float32]`", at()));
                    }
                    ("attrs", serde_yaml_ng::Value::Mapping(m)) => {
                        let scalar = |v: &serde_yaml_ng::Value| v.is_bool() || v.is_number() || v.is_string();
                        if !m.iter().all(|(k, v)| k.is_string() && scalar(v)) {
                            return Err(format!(
                                "{} must map attribute names to numbers or booleans, e.g. `attrs: {{alpha: 0.5}}`",
                                at()
                            ));
                        }
                        serde_json::to_value(&value).map_err(|e| format!("{}: {e}", at()))?
                    }
                    ("attrs", _) => {
                        return Err(format!(
                            "{} must map attribute names to numbers or booleans, e.g. `attrs: {{alpha: 0.5}}`",
                            at()
                        ));
                    }
                    (_, serde_yaml_ng::Value::Number(n)) if n.as_u64().is_some() => serde_json::json!(n.as_u64()),
                    _ => {
                        return Err(format!(
                            "{}: `{}`: dimension `{}` must be a non-negative integer",
                            file.display(),
                            kernel.escape_debug(),
                            dim.escape_debug()
                        ));
                    }
                };
                entry.insert(dim, json);
            }
            list.push(serde_json::Value::Object(entry));
        }
        doc.insert(kernel, serde_json::Value::Array(list));
    }
    Ok(serde_json::Value::Object(doc).to_string())
}
