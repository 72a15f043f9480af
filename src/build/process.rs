//! Running a tool begen does not control (a compiler, `$BEGEN_PYTHON`,
//! nvcc's `--version`) bounded in time and in the bytes it may write: a
//! program that never exits is stopped, with everything it started, and one
//! that writes without end is stopped once it has written `limit` bytes.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Runs `cmd` (stdin empty, stdout and stderr captured) in its own process
/// group, for at most `timeout`, reading at most `limit` bytes of each
/// output. `Ok` once it exits, whatever its status.
pub(crate) fn run_bounded(cmd: &mut Command, timeout: Duration, limit: u64) -> Result<Finished, Stopped> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group, so a timeout stops the program and every
    // process it started (a compiler driver's cc1plus, cicc, ptxas) together.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let mut child = cmd.spawn().map_err(Stopped::Spawn)?;
    let too_much = Arc::new(AtomicBool::new(false));
    // Drain both pipes while waiting, so a chatty program never blocks.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let too_much = Arc::clone(&too_much);
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(pipe) = pipe {
                // One byte past the limit tells "exactly the limit" from "more".
                let _ = pipe.take(limit.saturating_add(1)).read_to_end(&mut text);
            }
            if text.len() as u64 > limit {
                too_much.store(true, Ordering::Relaxed);
            }
            text
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() >= timeout || too_much.load(Ordering::Relaxed) => {
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
    let (stdout, stderr) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
    if too_much.load(Ordering::Relaxed) {
        return Err(Stopped::TooMuch);
    }
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
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    }

    #[test]
    fn a_program_that_writes_without_end_is_stopped() {
        let start = Instant::now();
        let r = run_bounded(&mut sh("exec yes"), Duration::from_secs(60), 1 << 16);
        assert!(matches!(r, Err(Stopped::TooMuch)));
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
        // Exactly the limit is still an answer.
        let r = run_bounded(&mut sh("printf 1234"), Duration::from_secs(60), 4);
        assert!(matches!(r, Ok(f) if f.stdout == b"1234" && f.status.success()));
        assert!(matches!(
            run_bounded(&mut Command::new("/nonexistent/begen"), Duration::from_secs(1), 1),
            Err(Stopped::Spawn(_))
        ));
    }
}
