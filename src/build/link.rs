//! Linking the objects into `lib<NAME>.so` with the host compiler driver.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::stamp::Stamp;
use super::toolchain::FoundLib;
use crate::error::{Error, Result};

/// One link: objects and output are relative to `work`, where it runs.
#[derive(Clone, Copy)]
pub(crate) struct LinkJob<'a> {
    pub(crate) work: &'a Path,
    pub(crate) linker: &'a Path,
    /// The words written with the linker's program (`CXX="zig c++"`).
    pub(crate) lead: &'a [std::ffi::OsString],
    pub(crate) objects: &'a [PathBuf],
    pub(crate) output: &'a Path,
    /// The plan's libraries, as found.
    pub(crate) libs: &'a [FoundLib],
    /// The plan's linker arguments, passed as they are.
    pub(crate) extra: &'a [String],
    /// What the backends add (a GPU runtime), last.
    pub(crate) runtime: &'a [String],
    /// Whether symbols may stay undefined, for the process that loads the
    /// library to resolve (torch's stable ABI): no `--no-undefined`.
    pub(crate) allow_undefined: bool,
}

/// The linker's argv (without the program).
pub(crate) fn link_args(job: &LinkJob<'_>) -> Vec<String> {
    let mut args: Vec<String> = job.lead.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    args.extend(["-shared".to_string(), "-o".to_string(), job.output.display().to_string()]);
    args.extend(job.objects.iter().map(|o| o.display().to_string()));
    let soname = job.output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    args.push(format!("-Wl,-soname,{soname}"));
    if !job.allow_undefined {
        args.push("-Wl,--no-undefined".to_string());
    }
    args.push("-Wl,--exclude-libs,ALL".to_string());
    // Linked libraries: by the file found (pip ships only versioned ones).
    // The run path holds the folder of the library itself (libraries
    // shipped beside it) and the folders begen found them in.
    if !job.libs.is_empty() {
        args.push("-Wl,-rpath,$ORIGIN".to_string());
    }
    for lib in job.libs {
        args.push(format!("-L{}", lib.dir.display()));
        args.push(format!("-l:{}", lib.file));
        if lib.rpath {
            args.push(format!("-Wl,-rpath,{}", lib.dir.display()));
        }
    }
    args.extend(job.extra.iter().cloned());
    args.extend(job.runtime.iter().cloned());
    args
}

/// Links; on failure the error carries the command and the linker's output.
pub(crate) fn link(job: &LinkJob<'_>) -> Result<()> {
    let args = link_args(job);
    let output = Command::new(job.linker)
        .args(&args)
        .current_dir(job.work)
        .output()
        .map_err(|e| Error::toolchain(format!("could not run the linker `{}`: {e}", job.linker.display())))?;
    if output.status.success() {
        return Ok(());
    }
    Err(Error::compile(
        format!("linking {}", job.output.display()),
        format!(
            "command: {} {}\n{}{}",
            job.linker.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    ))
}

/// Makes the modules of a namespaced library link as one: a function name
/// may repeat across modules, so two translation units may define the same
/// C++ symbol (`void fill(BE::Tensor, float, int64_t)` in two sources). Each
/// strong global symbol defined in more than one object is made local to
/// each object that defines it (`objcopy --localize-symbol`), so every
/// source's trampolines call the function of their own source, as separate
/// libraries would. Returns the objects to link (a localized copy,
/// `<object>.local.o`, where one was needed). Weak and unique symbols
/// (inline functions, templates) are left to the linker, which merges them,
/// except between the candidates of a source tuned over its defines
/// (`candidates[k]`): there an inline function or a template may read a
/// define, and each candidate must keep its own body, so each such symbol
/// two candidates define is renamed in each (`<name>.begen<k>`).
///
/// Both steps are kept per object: an object's symbols (`<object>.syms`)
/// and its localized copy (`<object>.local.cmd`) are redone only when the
/// object (or the list of clashing symbols) changed, so a build that
/// recompiled one source runs `nm` once, and a no-op build not at all. Why
/// each ran is added to `notes` (`BEGEN_EXPLAIN`).
pub(crate) fn localize_clashes(
    work: &Path,
    objects: &[PathBuf],
    candidates: &[bool],
    nm: &Path,
    objcopy: &Path,
    notes: &mut Vec<String>,
) -> Result<Vec<PathBuf>> {
    let mut defined: Vec<Vec<String>> = Vec::with_capacity(objects.len());
    for object in objects {
        defined.push(globals(work, object, nm, Binding::Strong, notes)?);
    }
    let mut weak: Vec<Vec<String>> = Vec::with_capacity(objects.len());
    for (object, &candidate) in objects.iter().zip(candidates) {
        weak.push(if candidate { globals(work, object, nm, Binding::Weak, notes)? } else { Vec::new() });
    }
    let mut weak_count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for names in &weak {
        for n in names {
            *weak_count.entry(n.as_str()).or_default() += 1;
        }
    }
    let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for names in &defined {
        for n in names {
            *count.entry(n.as_str()).or_default() += 1;
        }
    }
    let mut out = Vec::with_capacity(objects.len());
    for (k, (object, names)) in objects.iter().zip(&defined).enumerate() {
        let clashing: Vec<&String> = names.iter().filter(|n| count[n.as_str()] > 1).collect();
        let renamed: Vec<String> = weak
            .get(k)
            .into_iter()
            .flatten()
            .filter(|n| weak_count[n.as_str()] > 1)
            .map(|n| format!("--redefine-sym={n}={n}.begen{k}"))
            .collect();
        let local = PathBuf::from(format!("{}.local.o", object.display()));
        let record = work.join(with_suffix(object, ".local.cmd"));
        if clashing.is_empty() && renamed.is_empty() {
            let _ = std::fs::remove_file(work.join(&local));
            let _ = std::fs::remove_file(&record);
            out.push(object.clone());
            continue;
        }
        let mut args: Vec<String> = clashing.iter().map(|n| format!("--localize-symbol={n}")).collect();
        args.extend(renamed);
        args.push(object.display().to_string());
        args.push(local.display().to_string());
        let made_from = |stamp: Option<Stamp>| format!("{}\n{}\n", stamp_line(stamp), args.join("\n"));
        let want = made_from(Stamp::of(&work.join(object)));
        let up_to_date = std::fs::read_to_string(&record).is_ok_and(|r| r == want) && work.join(&local).is_file();
        if !up_to_date {
            notes.push(format!(
                "{}: localizing its clashing symbols (the object or the clashes changed)",
                object.display()
            ));
            let _ = std::fs::remove_file(&record);
            run_tool(work, objcopy, &args, &format!("localizing clashing symbols of {}", object.display()))?;
            // Only saves the next run: a failure to write it is no error.
            let _ = super::files::write_record(&record, want.as_bytes());
        }
        out.push(local);
    }
    Ok(out)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The first line of a per-object record: the object's identity.
fn stamp_line(stamp: Option<Stamp>) -> String {
    stamp.map_or_else(|| "none".to_string(), |s| format!("{} {}", s.times(), s.size))
}

/// Which global symbols [`globals`] lists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Binding {
    /// Text, data, bss, read-only data: two definitions clash.
    Strong,
    /// Weak and unique (inline functions, template instances, their
    /// static locals): the linker keeps one of them.
    Weak,
}

/// The global symbols of `binding` an object defines (`nm -P`), sorted;
/// from `<object>.syms` (`.weak`) while the object is the one they were
/// listed from.
fn globals(work: &Path, object: &Path, nm: &Path, binding: Binding, notes: &mut Vec<String>) -> Result<Vec<String>> {
    let suffix = if binding == Binding::Strong { ".syms" } else { ".weak" };
    let record = work.join(with_suffix(object, suffix));
    let stamp = stamp_line(Stamp::of(&work.join(object)));
    if let Ok(text) = std::fs::read_to_string(&record) {
        let mut lines = text.lines();
        if lines.next() == Some(stamp.as_str()) {
            return Ok(lines.map(str::to_string).collect());
        }
    }
    notes.push(format!("{}: listing its symbols (a new or changed object)", object.display()));
    let args = ["-P".to_string(), "-g".to_string(), "--defined-only".to_string(), object.display().to_string()];
    let text = run_tool(work, nm, &args, &format!("listing the symbols of {}", object.display()))?;
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let (name, kind) = (parts.next()?, parts.next()?);
            let wanted = match binding {
                Binding::Strong => matches!(kind, "T" | "D" | "B" | "R" | "G" | "S"),
                Binding::Weak => matches!(kind, "W" | "V" | "u"),
            };
            wanted.then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    let mut kept = stamp + "\n";
    for n in &names {
        kept.push_str(n);
        kept.push('\n');
    }
    // Only saves the next run: a failure to write it is no error.
    let _ = super::files::write_record(&record, kept.as_bytes());
    Ok(names)
}

/// Runs a binutils tool in `work`; its stdout, or an error with its output.
fn run_tool(work: &Path, tool: &Path, args: &[String], what: &str) -> Result<String> {
    let output = Command::new(tool).args(args).current_dir(work).output().map_err(|e| {
        Error::toolchain(format!(
            "{what}: could not run `{}`: {e}. A library with modules needs binutils' nm and objcopy \
             (set NM and OBJCOPY to use others)",
            tool.display()
        ))
    })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    Err(Error::compile(
        what.to_string(),
        format!(
            "command: {} {}\n{}{}",
            tool.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    ))
}
