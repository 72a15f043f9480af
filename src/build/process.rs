//! Running a tool begen does not control (a compiler, `$BEGEN_PYTHON`,
//! nvcc's `--version`) bounded in time and in the bytes it may write: a
//! program that never exits is stopped, with everything it started; one
//! that writes without end is stopped once it has written `limit` bytes
//! ([`run_bounded`]), or read to its end keeping only its first and last
//! bytes ([`run_kept`]). The time limit holds while its output is read: a
//! process it left behind holding its output open (a daemon started from a
//! wrapper script) is not waited for past a short grace.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a program that finished wrote.
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

/// Why a program gave no [`Finished`].
pub(crate) enum Stopped {
    /// It could not be started.
    Spawn(std::io::Error),
    /// Waiting for it failed.
    Wait(std::io::Error),
    /// It ran past the time limit; what it wrote until then (stdout, stderr).
    Timeout(Vec<u8>, Vec<u8>),
    /// It wrote more than the byte limit to stdout or stderr.
    TooMuch,
}

/// How long the rest of a program's output is waited for once it has
/// exited (or was stopped): a process it left behind may hold the pipe
/// open for ever.
const GRACE: Duration = Duration::from_secs(1);

/// Runs `cmd` (stdin empty, stdout and stderr captured) in its own process
/// group, for at most `timeout`, reading at most `limit` bytes of each
/// output. `Ok` once it exits, whatever its status.
pub(crate) fn run_bounded(cmd: &mut Command, timeout: Duration, limit: u64) -> Result<Finished, Stopped> {
    run(cmd, timeout, Some(limit), usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX))
}

/// Runs `cmd` like [`run_bounded`], reading all it writes but keeping only
/// about `keep` bytes of each output: the first half and the last half,
/// with a line saying how much was left out between them.
pub(crate) fn run_kept(cmd: &mut Command, timeout: Duration, keep: usize) -> Result<Finished, Stopped> {
    run(cmd, timeout, None, keep)
}

/// One output as it is read: its first bytes, its last ones, how many in all.
#[derive(Default)]
struct Sink {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    done: bool,
}

impl Sink {
    fn push(&mut self, bytes: &[u8], keep: usize) {
        self.total += bytes.len() as u64;
        let half = keep / 2;
        let room = half.saturating_sub(self.head.len());
        let (first, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(first);
        self.tail.extend_from_slice(rest);
        // Trimmed in steps, so each byte is moved a bounded number of times.
        let tail_keep = keep - half;
        if self.tail.len() > tail_keep.saturating_mul(2).max(1 << 16) {
            let cut = self.tail.len() - tail_keep;
            self.tail.drain(..cut);
        }
    }

    fn take(&mut self, keep: usize) -> Vec<u8> {
        let tail_keep = keep - keep / 2;
        if self.tail.len() > tail_keep {
            let cut = self.tail.len() - tail_keep;
            self.tail.drain(..cut);
        }
        let mut text = std::mem::take(&mut self.head);
        let kept = (text.len() + self.tail.len()) as u64;
        if kept < self.total {
            text.extend_from_slice(format!("\n[... {} bytes of output left out ...]\n", self.total - kept).as_bytes());
        }
        text.extend_from_slice(&self.tail);
        text
    }
}

type Shared = Arc<(Mutex<[Sink; 2]>, Condvar)>;

fn run(cmd: &mut Command, timeout: Duration, limit: Option<u64>, keep: usize) -> Result<Finished, Stopped> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group, so a timeout stops the program and every
    // process it started (a compiler driver's cc1plus, cicc, ptxas) together.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd.spawn().map_err(Stopped::Spawn)?;
    let shared: Shared = Arc::new((Mutex::new([Sink::default(), Sink::default()]), Condvar::new()));
    // Drain both pipes while waiting, so a chatty program never blocks.
    // The threads are not joined: one may wait on a pipe that a process
    // left behind holds open; it ends when that process does.
    let drain = |which: usize, pipe: Option<Box<dyn Read + Send>>| {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            if let Some(mut pipe) = pipe {
                loop {
                    match pipe.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            let mut sinks = shared.0.lock().unwrap_or_else(|e| e.into_inner());
                            sinks[which].push(&buf[..n], keep);
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            }
            shared.0.lock().unwrap_or_else(|e| e.into_inner())[which].done = true;
            shared.1.notify_all();
        });
    };
    drain(0, child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    drain(1, child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let too_much = |shared: &Shared| {
        let sinks = shared.0.lock().unwrap_or_else(|e| e.into_inner());
        limit.is_some_and(|limit| sinks.iter().any(|s| s.total > limit))
    };
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout || too_much(&shared) => {
                kill_group(&mut child);
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                kill_group(&mut child);
                return Err(Stopped::Wait(e));
            }
        }
    };
    // The rest of the output: until both pipes end, or the grace is over.
    let until = Instant::now() + GRACE;
    let mut sinks = shared.0.lock().unwrap_or_else(|e| e.into_inner());
    while !sinks.iter().all(|s| s.done) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        sinks = shared.1.wait_timeout(sinks, left).unwrap_or_else(|e| e.into_inner()).0;
    }
    if limit.is_some_and(|limit| sinks.iter().any(|s| s.total > limit)) {
        return Err(Stopped::TooMuch);
    }
    let (stdout, stderr) = (sinks[0].take(keep), sinks[1].take(keep));
    drop(sinks);
    match status {
        Some(status) => Ok(Finished { status, stdout, stderr }),
        None => Err(Stopped::Timeout(stdout, stderr)),
    }
}

/// Stops a program and everything it started (its process group, where
/// there are process groups).
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        let group = format!("-{}", child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// What a stopped program may take at most: a hang catcher only (the
    /// limits under test are under 3 s; the bounds are what each returns).
    const HANG: Duration = Duration::from_secs(120);

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[test]
    fn a_program_that_never_exits_is_stopped() {
        let start = Instant::now();
        let r = run_bounded(&mut sh("echo started; exec sleep 30"), Duration::from_millis(300), 1 << 20);
        assert!(matches!(&r, Err(Stopped::Timeout(out, _)) if out == b"started\n"));
        assert!(start.elapsed() < HANG, "{:?}", start.elapsed());
    }

    #[test]
    fn a_program_that_writes_without_end_is_stopped() {
        let start = Instant::now();
        let r = run_bounded(&mut sh("exec yes"), Duration::from_secs(60), 1 << 16);
        assert!(matches!(r, Err(Stopped::TooMuch)));
        assert!(start.elapsed() < HANG, "{:?}", start.elapsed());
        // Exactly the limit is still an answer.
        let r = run_bounded(&mut sh("printf 1234"), Duration::from_secs(60), 4);
        assert!(matches!(r, Ok(f) if f.stdout == b"1234" && f.status.success()));
        assert!(matches!(
            run_bounded(&mut Command::new("/nonexistent/begen"), Duration::from_secs(1), 1),
            Err(Stopped::Spawn(_))
        ));
    }

    #[test]
    fn a_flood_is_read_to_its_end_keeping_its_first_and_last_bytes() {
        let r = run_kept(
            &mut sh("echo first; head -c 50000000 /dev/zero | tr '\\0' x; echo; echo last >&1"),
            Duration::from_secs(60),
            1 << 12,
        );
        let Ok(f) = r else { panic!("not finished") };
        assert!(f.status.success());
        assert!(f.stdout.len() < 1 << 13, "{}", f.stdout.len());
        let text = String::from_utf8_lossy(&f.stdout);
        assert!(text.starts_with("first\n") && text.ends_with("last\n") && text.contains("bytes of output left out"));
        // Without end, stopped at the time limit, whatever it wrote.
        let start = Instant::now();
        let r = run_kept(&mut sh("exec yes"), Duration::from_millis(500), 1 << 12);
        assert!(matches!(&r, Err(Stopped::Timeout(out, _)) if out.len() < 1 << 13));
        assert!(start.elapsed() < HANG, "{:?}", start.elapsed());
    }

    /// A process left behind holding the output open (its own session, so
    /// not stopped with the group) does not hold the caller past the limit.
    #[test]
    fn a_detached_child_holding_the_output_does_not_defeat_the_limit() {
        if Command::new("setsid").arg("--version").output().is_err() {
            return;
        }
        let start = Instant::now();
        let r = run_bounded(&mut sh("setsid sleep 20 & echo answer"), Duration::from_secs(2), 1 << 20);
        assert!(matches!(&r, Ok(f) if f.stdout == b"answer\n"), "exited: its answer");
        assert!(start.elapsed() < HANG, "{:?}", start.elapsed());
        let start = Instant::now();
        let r = run_bounded(&mut sh("setsid sleep 20 & exec sleep 30"), Duration::from_secs(1), 1 << 20);
        assert!(matches!(r, Err(Stopped::Timeout(..))));
        assert!(start.elapsed() < HANG, "{:?}", start.elapsed());
    }
}
