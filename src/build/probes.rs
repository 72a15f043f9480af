//! What begen learned by running the toolchain (cc's compiler detection,
//! `nvcc --version` and `--list-gpu-arch`, `nvidia-smi`, the Python probe),
//! kept in the work directory (`probes.json`) so that a build with nothing
//! changed starts no process.
//!
//! An answer is reused only while everything it was derived from is as it
//! was: its inputs (the program's path, the settings and the environment
//! that choose or configure it, as one text compared whole; the record
//! keeps only a hash of that text, never an environment variable's value,
//! which may be a secret), and the
//! identity ([`Stamp`]) of each file it depends on — the compiler binary
//! itself (symbolic links resolved: an `update-alternatives` or a new
//! toolkit is another file), a Python's site-packages folder (a `pip
//! install` changes it). Anything else is probed again, and `BEGEN_EXPLAIN`
//! says why.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Reporter;
use super::stamp::Stamp;

const FILE: &str = "probes.json";

/// The record on disk: one entry per probe.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Record {
    /// begen's version: another begen probes again.
    begen: String,
    entries: BTreeMap<String, Entry>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Entry {
    /// [`digest`] of the probe's inputs.
    inputs: String,
    files: Vec<(PathBuf, Stamp)>,
    value: serde_json::Value,
}

/// The probe answers of one work directory, loaded once per build and
/// saved at its end when one changed.
#[derive(Debug)]
pub(crate) struct Probes {
    path: Option<PathBuf>,
    record: RefCell<Record>,
    dirty: RefCell<bool>,
    /// Why each probe ran (for `BEGEN_EXPLAIN`).
    notes: RefCell<Vec<String>>,
}

impl Probes {
    /// The answers kept in `work` (none when it has no readable record).
    pub(crate) fn load(work: &Path) -> Probes {
        let path = work.join(FILE);
        // The version and the shape of the answers: a record written by a
        // begen whose answers lack a field this one reads is not reused.
        let begen = concat!(env!("CARGO_PKG_VERSION"), "+answers.2").to_string();
        // Only a regular file is read: a FIFO or a device there could block
        // every build, a link could lead anywhere.
        let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        let record = regular
            .then(|| std::fs::read(&path).ok())
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok())
            .filter(|r| r.begen == begen)
            .unwrap_or(Record { begen, entries: BTreeMap::new() });
        Probes { path: Some(path), record: RefCell::new(record), dirty: RefCell::new(false), notes: Default::default() }
    }

    /// No record: every probe runs.
    pub(crate) fn none() -> Probes {
        Probes { path: None, record: Default::default(), dirty: RefCell::new(false), notes: Default::default() }
    }

    /// The answer of probe `name`, reused when its inputs and files are as
    /// recorded, else computed by `run` (which returns the answer and the
    /// files it depends on; `None` when it must not be kept, such as a
    /// failure worth retrying).
    pub(crate) fn get_or<T: Serialize + DeserializeOwned>(
        &self,
        name: &str,
        inputs: &str,
        run: impl FnOnce() -> (T, Option<Vec<PathBuf>>),
    ) -> T {
        if self.path.is_none() {
            return run().0;
        }
        let inputs = digest(inputs);
        let why = match self.record.borrow().entries.get(name) {
            None => "no answer on record".to_string(),
            Some(e) if e.inputs != inputs => "its inputs (program, settings or environment) changed".to_string(),
            Some(e) => match e.files.iter().find(|(path, stamp)| Stamp::of(path).as_ref() != Some(stamp)) {
                Some((path, _)) => format!("`{}` changed", path.display()),
                None => match serde_json::from_value(e.value.clone()) {
                    Ok(value) => return value,
                    Err(_) => "its answer on record is unreadable".to_string(),
                },
            },
        };
        self.notes.borrow_mut().push(format!("probing {name}: {why}"));
        let (value, files) = run();
        let Some(files) = files else {
            return value;
        };
        let files = files
            .into_iter()
            .filter_map(|f| {
                let real = std::fs::canonicalize(&f).unwrap_or(f);
                let stamp = Stamp::of(&real)?;
                Some((real, stamp))
            })
            .collect();
        if let Ok(json) = serde_json::to_value(&value) {
            let entry = Entry { inputs, files, value: json };
            self.record.borrow_mut().entries.insert(name.to_string(), entry);
            *self.dirty.borrow_mut() = true;
        }
        value
    }

    /// Why each probe ran this build.
    pub(crate) fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut self.notes.borrow_mut())
    }

    /// Once the probes are done: writes the record back ([`Probes::save`])
    /// and, with `explain` (`BEGEN_EXPLAIN`), says why each probe ran.
    pub(crate) fn finish(&self, explain: bool, reporter: &mut dyn Reporter) {
        self.save();
        if explain {
            for note in self.take_notes() {
                reporter.progress(&note);
            }
        }
    }

    /// Writes the record back when an answer changed (a failure to write
    /// only costs the probes next time).
    pub(crate) fn save(&self) {
        let Some(path) = &self.path else { return };
        if !*self.dirty.borrow() {
            return;
        }
        let (Some(work), Some(file)) = (path.parent(), path.file_name()) else { return };
        if let Ok(text) = serde_json::to_string_pretty(&*self.record.borrow()) {
            let _ = super::files::write_work_file(work, Path::new(file), text.as_bytes());
        }
    }
}

/// What the record keeps of a probe's inputs: a 128-bit hash (two SipHash
/// passes, keyed apart), enough to tell inputs apart and nothing to read
/// them back from.
fn digest(inputs: &str) -> String {
    use std::hash::{Hash, Hasher};
    let half = |key: u8| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        inputs.hash(&mut h);
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_reused_until_its_inputs_or_files_change() {
        let dir = std::env::temp_dir().join(format!("begen-probes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let tool = dir.join("tool");
        std::fs::write(&tool, "v1").unwrap();
        let runs = RefCell::new(0);
        let probe = |probes: &Probes, inputs: &str| {
            probes.get_or("tool", inputs, || {
                *runs.borrow_mut() += 1;
                (std::fs::read_to_string(&tool).unwrap(), Some(vec![tool.clone()]))
            })
        };
        let probes = Probes::load(&dir);
        assert_eq!(probe(&probes, "a"), "v1");
        assert_eq!(probes.take_notes(), ["probing tool: no answer on record"]);
        probes.save();
        let probes = Probes::load(&dir);
        assert_eq!(probe(&probes, "a"), "v1");
        assert_eq!(*runs.borrow(), 1, "reused from the record");
        assert_eq!(probe(&probes, "b"), "v1");
        assert_eq!(*runs.borrow(), 2, "other inputs");
        std::fs::write(&tool, "v2!").unwrap();
        assert_eq!(probe(&probes, "b"), "v2!");
        assert_eq!(*runs.borrow(), 3, "the file changed");
        assert!(probes.take_notes().last().unwrap().contains("changed"));
        // No record kept: always runs.
        assert_eq!(probe(&Probes::none(), "b"), "v2!");
        assert_eq!(*runs.borrow(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_record_keeps_no_value_of_the_environment_and_is_the_owners_alone() {
        let dir = std::env::temp_dir().join(format!("begen-probes-secret-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Every kind of secret a build's environment carries.
        let secrets = [
            ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            ("GITHUB_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwx"),
            ("HF_TOKEN", "hf_abcdefghijklmnopqrstuvwxyz012345"),
            ("PIP_INDEX_URL", "https://user:hunter2-password@pypi.example.com/simple"),
            ("DATABASE_URL", "postgres://admin:s3cr3t-db-pass@db/prod"),
        ];
        let env_with = |token: &str| {
            let mut env = crate::env::Env::new();
            for (name, value) in secrets {
                env = env.with(name, value);
            }
            env.with("GITHUB_TOKEN", token)
        };
        let env = env_with(secrets[1].1);
        let probes = Probes::load(&dir);
        let discovery = crate::build::toolchain::Discovery::with_probes(&env, &probes);
        let answer: String = discovery.remembered("tool", "tool /usr/bin/tool", || ("answer".into(), Some(vec![])));
        assert_eq!(answer, "answer");
        probes.save();
        let text = std::fs::read_to_string(dir.join(FILE)).unwrap();
        for (name, value) in secrets {
            assert!(!text.contains(value) && !text.contains(name), "{name} is in the record:\n{text}");
        }
        assert!(!text.contains("/usr/bin/tool"), "inputs are kept as a hash");
        // Still reused while the environment is the same, not once it changes.
        let again = Probes::load(&dir);
        let discovery = crate::build::toolchain::Discovery::with_probes(&env, &again);
        let _: String = discovery.remembered("tool", "tool /usr/bin/tool", || panic!("probed again"));
        let other = env_with("ghp_another");
        let discovery = crate::build::toolchain::Discovery::with_probes(&other, &again);
        let answer: String = discovery.remembered("tool", "tool /usr/bin/tool", || ("new".into(), None));
        assert_eq!(answer, "new");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "probes.json is the owner's only: {mode:o}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A FIFO, a link or a folder at `probes.json` is no record: loading it
    /// neither blocks nor follows it, and saving replaces the link itself.
    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_link_at_the_record_neither_hangs_nor_is_written_through() {
        let dir = std::env::temp_dir().join(format!("begen-probes-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let made = std::process::Command::new("mkfifo").arg(dir.join(FILE)).status();
        if made.is_ok_and(|s| s.success()) {
            let start = std::time::Instant::now();
            let probes = Probes::load(&dir);
            // A hang catcher only: opening the FIFO would block for ever.
            assert!(start.elapsed() < std::time::Duration::from_secs(120));
            let _: u32 = probes.get_or("p", "x", || (1, Some(vec![])));
            probes.save();
            assert!(std::fs::symlink_metadata(dir.join(FILE)).unwrap().is_file(), "replaced by a file");
        }
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::fs::remove_file(dir.join(FILE)).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(FILE)).unwrap();
        let probes = Probes::load(&dir);
        let _: u32 = probes.get_or("p", "x", || (1, Some(vec![])));
        probes.save();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(dir.join(FILE)).unwrap().is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
