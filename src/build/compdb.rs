//! `compile_commands.json`, clang's JSON compilation database, in the work
//! directory: one entry per translation unit of the library with the exact
//! command begen runs (nvcc's for `.cu` sources), so clangd and the editors
//! on top of it see the flags, include paths and defines of every source.
//! Rewritten on every build that compiles (only when its bytes change), so
//! it follows incremental builds; a compiler launcher is left out (it
//! changes no flag). Point clangd at it with
//! `--compile-commands-dir=<work dir>` (docs/building.md).

use std::ffi::OsString;
use std::path::Path;

use super::compile::Unit;
use super::files;
use crate::error::Result;

/// The file's name in the work directory.
pub(crate) const FILE: &str = "compile_commands.json";

/// One entry (`arguments`, not a shell-quoted `command`: nothing to unquote).
#[derive(serde::Serialize)]
struct Entry<'a> {
    directory: String,
    file: String,
    arguments: Vec<std::borrow::Cow<'a, str>>,
    output: String,
}

/// Writes the database of `commands` (each unit with its argv) into `work`.
pub(crate) fn write(work: &Path, commands: &[(&Unit, Vec<OsString>)]) -> Result<()> {
    let directory = work.display().to_string();
    let entries: Vec<Entry<'_>> = commands
        .iter()
        .map(|(unit, argv)| Entry {
            directory: directory.clone(),
            file: work.join(&unit.source).display().to_string(),
            arguments: argv.iter().map(|a| a.to_string_lossy()).collect(),
            output: work.join(&unit.object).display().to_string(),
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&entries).unwrap_or_else(|_| "[]".to_string());
    text.push('\n');
    files::write_work_file(work, Path::new(FILE), text.as_bytes())?;
    Ok(())
}
