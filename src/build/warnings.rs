//! Compiler warnings that help: a large tree's sources can give a thousand
//! warnings (cc adds `-Wall -Wextra`), which bury the progress lines and
//! the errors. Each compiled unit's output is kept beside its object
//! (`<obj>.log`); what is shown is its number of warnings and the first
//! few, and `warnings.log` in the work directory holds all of them, for
//! every unit of the library (compiled this time or before). `begen build
//! -v` shows every warning as the compiler wrote it. Output that holds no
//! recognisable warning line (a note, a remark) is shown as it is.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::Reporter;
use super::compile::Unit;

/// The file in the work directory with every unit's compiler output.
pub(crate) const LOG: &str = "warnings.log";

/// How many warning lines a summary shows.
const FIRST: usize = 3;

/// What a compile pass summarised.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    units: usize,
    total: usize,
}

fn unit_log(object: &Path) -> PathBuf {
    let mut s = object.as_os_str().to_owned();
    s.push(".log");
    PathBuf::from(s)
}

/// Whether `line` is a warning's first line: gcc and clang's `file:1:2:
/// warning: ...`, nvcc's front end's `file(1): warning #177-D: ...`.
fn is_warning(line: &str) -> bool {
    line.contains("warning: ") || line.contains("warning #")
}

impl Warnings {
    /// Keeps a unit's compiler output beside its object and returns what
    /// to show: all of it when `verbose` or when it has no warning line,
    /// else the count and the first warnings.
    pub(crate) fn add(&mut self, work: &Path, object: &Path, output: &str, verbose: bool) -> String {
        let path = work.join(unit_log(object));
        if output.trim().is_empty() {
            let _ = std::fs::remove_file(&path);
            return String::new();
        }
        // Only the summary needs it: a failure to keep it is no error.
        let _ = super::files::write_record(&path, output.as_bytes());
        let lines: Vec<&str> = output.lines().filter(|l| is_warning(l)).collect();
        if verbose || lines.is_empty() {
            return output.to_string();
        }
        self.units += 1;
        self.total += lines.len();
        let mut text = match lines.len() {
            1 => "1 warning:\n".to_string(),
            n if n <= FIRST => format!("{n} warnings:\n"),
            n => format!("{n} warnings, the first {FIRST}:\n"),
        };
        for line in lines.iter().take(FIRST) {
            let _ = writeln!(text, "  {}", line.trim());
        }
        text
    }

    /// Writes `warnings.log` from every unit's output, and says where it is
    /// when warnings were summarised.
    pub(crate) fn finish(&self, work: &Path, units: &[Unit], reporter: &mut dyn Reporter) {
        let mut log = String::new();
        for unit in units {
            if let Ok(text) = std::fs::read_to_string(work.join(unit_log(&unit.object))) {
                let _ = writeln!(log, "--- {}\n{}", unit.name, text.trim_end());
            }
        }
        let path = work.join(LOG);
        if log.is_empty() {
            let _ = std::fs::remove_file(&path);
        } else {
            let _ = super::files::write_work_file(work, Path::new(LOG), log.as_bytes());
        }
        if self.total > 0 {
            reporter.progress(&format!(
                "{} compiler warning(s) in {} translation unit(s), summarised above: all of them are in {} \
                 (`begen build -v` prints them)",
                self.total,
                self.units,
                path.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_counted_and_the_first_shown() {
        let dir = std::env::temp_dir().join(format!("begen-warnings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let gcc = "k.cc: In function 'void f()':\nk.cc:3:7: warning: unused variable 'a' [-Wunused-variable]\n    3 | int a;\n\
                   k.cc:4:7: warning: unused variable 'b'\nk.cc:5:7: warning: unused variable 'c'\n\
                   k.cu(9): warning #177-D: variable \"d\" was declared but never referenced\n";
        let mut w = Warnings::default();
        let shown = w.add(&dir, Path::new("k.o"), gcc, false);
        assert!(shown.starts_with("4 warnings, the first 3:\n  k.cc:3:7: warning: unused variable 'a'"), "{shown}");
        assert!(shown.contains("'c'") && !shown.contains("#177"), "{shown}");
        assert_eq!(std::fs::read_to_string(dir.join("k.o.log")).unwrap(), gcc);
        assert_eq!(w.add(&dir, Path::new("k.o"), gcc, true), gcc, "verbose: all of it");
        assert_eq!(w.add(&dir, Path::new("n.o"), "a note\n", false), "a note\n", "no warning line: as it is");
        assert_eq!((w.units, w.total), (1, 4));
        assert_eq!(w.add(&dir, Path::new("k.o"), "", false), "");
        assert!(!dir.join("k.o.log").exists(), "a clean compile has no log");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
