//! Whether the links (and the commit of the outputs) can be skipped: the
//! record `link.record` in the work directory says what the last committed
//! libraries (one per selected target: `lib<NAME>.so`,
//! `lib<NAME>_torch.so`), committed together, were linked from — each
//! linker's command, the identity of each object and library it read — and
//! what each library in OUT was then (its identity and its bytes' hash, one
//! line each, in the links' order). A build that finds the same inputs,
//! every library in OUT as it left it and the other outputs (modules,
//! stubs, manifest) in OUT with the bytes it would write links nothing and
//! writes nothing; anything else relinks them all.

use std::path::{Path, PathBuf};

use super::stamp::{Stamp, content_hash};

const FILE: &str = "link.record";

/// What a link reads, as a text to compare.
pub(crate) struct LinkInputs(String);

impl LinkInputs {
    /// The linker, its arguments (with the output named as in OUT, not the
    /// staging folder) and every file it reads, with their identities.
    pub(crate) fn new(work: &Path, linker: &Path, args: &[String], inputs: &[PathBuf]) -> LinkInputs {
        let mut text = format!("{}\n", linker.display());
        for arg in args {
            text.push_str(arg);
            text.push('\n');
        }
        for input in inputs {
            let stamp =
                Stamp::of(&work.join(input)).map_or_else(|| "none".into(), |s| format!("{} {}", s.times(), s.size));
            text.push_str(&format!("{stamp} {}\n", input.display()));
        }
        LinkInputs(text)
    }

    /// The inputs of several links committed together, in order (one link:
    /// its own inputs, as they were recorded before there were several).
    pub(crate) fn all(links: Vec<LinkInputs>) -> LinkInputs {
        LinkInputs(links.into_iter().map(|l| l.0).collect())
    }

    /// `None` when nothing needs doing: the record holds these inputs, each
    /// library in OUT (`libraries`) is the one committed then, and each of
    /// `outputs` (path in OUT, bytes) holds those bytes. Else why not.
    pub(crate) fn stale(&self, work: &Path, libraries: &[PathBuf], outputs: &[(PathBuf, &[u8])]) -> Option<String> {
        let Ok(record) = std::fs::read_to_string(work.join(FILE)) else {
            return Some("no record of the last link".into());
        };
        let Some((inputs, committed)) = record.split_once("--- output\n") else {
            return Some("no record of the last link".into());
        };
        if inputs != self.0 {
            return Some("its objects or its command changed".into());
        }
        let lines: Vec<&str> = committed.lines().collect();
        if lines.len() != libraries.len() {
            return Some("the libraries to link changed".into());
        }
        for (library, line) in libraries.iter().zip(lines) {
            let mut parts = line.trim_end().splitn(3, ' ');
            let (times, size, hash) = (parts.next(), parts.next(), parts.next());
            let recorded = times.zip(size).and_then(|(t, s)| Stamp::parse(t, s));
            match Stamp::of(library) {
                None => return Some(format!("{} is missing", library.display())),
                Some(now) if Some(now) == recorded => {}
                Some(_) if content_hash(library).map(|h| format!("{h:016x}")).as_deref() == hash => {}
                Some(_) => return Some(format!("{} is not the library begen wrote", library.display())),
            }
        }
        for (path, bytes) in outputs {
            if std::fs::read(path).ok().as_deref() != Some(*bytes) {
                return Some(format!("{} is missing or not what begen writes", path.display()));
            }
        }
        None
    }

    /// Records these inputs with `libraries` as they are now (after their
    /// commit). A failure to write only costs a link next time.
    pub(crate) fn save(self, work: &Path, libraries: &[PathBuf]) {
        let path = work.join(FILE);
        let mut text = format!("{}--- output\n", self.0);
        for library in libraries {
            let (Some(stamp), Some(hash)) = (Stamp::of(library), content_hash(library)) else {
                let _ = std::fs::remove_file(&path);
                return;
            };
            text.push_str(&format!("{} {} {hash:016x}\n", stamp.times(), stamp.size));
        }
        let _ = super::files::write_record(&path, text.as_bytes());
    }

    /// Forgets the last link (before one that may fail or be interrupted).
    pub(crate) fn forget(work: &Path) {
        let _ = std::fs::remove_file(work.join(FILE));
    }
}
