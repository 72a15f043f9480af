//! What a file is, cheaply: its `stat` identity ([`Stamp`]: size,
//! modification and change times, inode), and its contents' hash when the
//! identity cannot decide.
//!
//! A build decides "unchanged" from the identity alone only when every part
//! of it is the same. The change time (`ctime`) is the part no tool can put
//! back: `cp -p`, `rsync -t` and `tar -x` restore a modification time, but
//! the copy still gets a new change time (and often a new inode), so an
//! edit of the same size with its old modification time is seen, and then
//! the contents decide (a file only touched is not rebuilt). The one case
//! `stat` cannot see is a second edit of the same size within the file
//! system's timestamp granularity of the first: a file changed that
//! recently when it was recorded is marked *racy* and always hashed.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// A file's identity from `stat` (following symbolic links).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Stamp {
    pub(crate) size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub(crate) mtime: i128,
    /// Change time (status change), nanoseconds since the epoch; 0 where the
    /// platform has none.
    pub(crate) ctime: i128,
    pub(crate) ino: u64,
}

/// How long after its last change a file counts as possibly changed again
/// unseen: above the timestamp granularity of common file systems (a
/// kernel tick, 1 to 10 ms; FAT's 2 s is not covered).
const RACY: Duration = Duration::from_millis(50);

impl Stamp {
    /// The identity of `path`, `None` when it cannot be read.
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        let ns = |t: SystemTime| match t.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        };
        let mtime = m.modified().map(ns).unwrap_or_default();
        #[cfg(unix)]
        let (ctime, ino) = {
            use std::os::unix::fs::MetadataExt;
            (i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()), m.ino())
        };
        #[cfg(not(unix))]
        let (ctime, ino) = (0, 0);
        Some(Stamp { size: m.len(), mtime, ctime, ino })
    }

    /// Whether the file changed so shortly before `now` that a further edit
    /// could leave every part of its identity as it is.
    pub(crate) fn is_racy(&self, now: SystemTime) -> bool {
        let now = now.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        self.mtime.max(self.ctime) + RACY.as_nanos() as i128 >= now
    }

    /// `mtime:ctime:ino` (the size is kept apart), as the records write it.
    pub(crate) fn times(&self) -> String {
        format!("{}:{}:{}", self.mtime, self.ctime, self.ino)
    }

    /// Reads [`Stamp::times`] back with the size; `None` for anything else
    /// (a record of an older begen, which kept the modification time only).
    pub(crate) fn parse(times: &str, size: &str) -> Option<Stamp> {
        let mut parts = times.split(':');
        let stamp = Stamp {
            mtime: parts.next()?.parse().ok()?,
            ctime: parts.next()?.parse().ok()?,
            ino: parts.next()?.parse().ok()?,
            size: size.parse().ok()?,
        };
        parts.next().is_none().then_some(stamp)
    }
}

/// A hash of a file's bytes (to tell a changed file from one whose time
/// only moved, or an older copy put back with its old time). Regular files
/// only: reading a FIFO or a device (`/dev/stdin`) could block, or never end.
pub(crate) fn content_hash(path: &Path) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Some(h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_and_old_records_do_not_parse() {
        let s = Stamp { size: 12, mtime: 1_700_000_000_123_456_789, ctime: 1_700_000_001_000_000_000, ino: 42 };
        assert_eq!(Stamp::parse(&s.times(), "12"), Some(s));
        assert_eq!(Stamp::parse("1700000000123456789", "12"), None, "an older begen's record");
        assert_eq!(Stamp::parse("1:2:3:4", "12"), None);
    }

    #[test]
    fn a_copy_with_its_time_put_back_has_another_identity() {
        let dir = std::env::temp_dir().join(format!("begen-stamp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("k.cc");
        std::fs::write(&path, "int x = 1;\n").unwrap();
        let before = Stamp::of(&path).unwrap();
        let old = std::fs::metadata(&path).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&path, "int x = 2;\n").unwrap();
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        let after = Stamp::of(&path).unwrap();
        assert_eq!((after.size, after.mtime), (before.size, before.mtime), "size and mtime restored");
        if cfg!(unix) {
            assert_ne!(after, before, "the change time moved");
        }
        assert!(after.is_racy(SystemTime::now()));
        assert!(!after.is_racy(SystemTime::now() + Duration::from_secs(1)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
