//! The XLA FFI headers of one jaxlib release, for `--jax-min` (`jax_min:`):
//! a library compiled against them loads on that jaxlib and every newer
//! one. They live in a per-user cache, `$XDG_CACHE_HOME/begen/jaxlib-V/include`
//! (else `~/.cache/...`), filled once from that jaxlib's wheel: `$BEGEN_PYTHON
//! -m pip download` fetches it (pip checks the sha256 the index gives) and
//! only `jaxlib/include/xla/ffi/**` is kept. Nothing is committed anywhere;
//! a machine without network gets the headers put into that directory by hand.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::process::{self, Stopped};
use crate::env::Env;
use crate::error::{Error, Result};
use crate::model::is_release_number;

/// The header whose presence makes a directory the XLA FFI include root.
const HEADER: &str = "xla/ffi/api/ffi.h";

/// How long the download may take (`BEGEN_DOWNLOAD_TIMEOUT` overrides, in
/// seconds): a jaxlib wheel is some 80 MB.
const DOWNLOAD_TIMEOUT_S: u64 = 900;

/// Downloads `jaxlib==argv[1]`'s wheel into `argv[2]` (a fresh folder) and
/// extracts its XLA FFI headers into `argv[2]/include`. Arguments, never
/// text pasted into the script.
const FETCH_SCRIPT: &str = "\
import pathlib, subprocess, sys, zipfile
version, work = sys.argv[1], pathlib.Path(sys.argv[2])
subprocess.run([sys.executable, '-m', 'pip', 'download', '--quiet', '--disable-pip-version-check',
                '--no-deps', '--only-binary=:all:', '--dest', str(work / 'wheel'), 'jaxlib==' + version],
               check=True, stdout=sys.stderr)
wheels = sorted((work / 'wheel').glob('jaxlib-*.whl'))
if not wheels:
    sys.exit('pip downloaded no jaxlib wheel')
prefix = 'jaxlib/include/'
count = 0
with zipfile.ZipFile(wheels[0]) as z:
    for name in z.namelist():
        rel = name[len(prefix):]
        parts = rel.split('/')
        if not name.startswith(prefix + 'xla/ffi/') or name.endswith('/') or '..' in parts:
            continue
        target = work / 'include' / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(z.read(name))
        count += 1
if count == 0:
    sys.exit('the wheel holds no jaxlib/include/xla/ffi headers')
print(count)
";

/// `$XDG_CACHE_HOME/begen/jaxlib-V`, else `$HOME/.cache/begen/jaxlib-V`.
pub(crate) fn cache_dir(env: &Env, version: &str) -> Option<PathBuf> {
    Some(env.user_cache()?.join(format!("jaxlib-{version}")))
}

/// The cached include directory of jaxlib `version`, if it is there.
pub(crate) fn cached(env: &Env, version: &str) -> Option<PathBuf> {
    let include = cache_dir(env, version)?.join("include");
    include.join(HEADER).is_file().then_some(include)
}

/// The include directory of jaxlib `version`'s XLA FFI headers: from the
/// cache, else downloaded into it with `python` (once; a concurrent build
/// that got there first is as good).
pub(crate) fn headers(env: &Env, python: &str, version: &str) -> Result<PathBuf> {
    if !is_release_number(version) {
        return Err(Error::toolchain(format!(
            "jax_min `{version}` is not a jax release number (write it like 0.10.2 or 0.12.0.1)"
        )));
    }
    if let Some(include) = cached(env, version) {
        return Ok(include);
    }
    let Some(dir) = cache_dir(env, version) else {
        return Err(Error::toolchain(format!(
            "jax_min {version} needs a cache for jaxlib {version}'s XLA FFI headers, and neither XDG_CACHE_HOME \
             (absolute) nor HOME is set. Set one of them."
        )));
    };
    let work = dir.join(format!("fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| Error::io(&work, e))?;
    let fetched = fetch(env, python, version, &work);
    let include = dir.join("include");
    // A cache left half-written (a copy interrupted, a download killed
    // before the header was in place) is not one: it goes, moved aside
    // first so a concurrent build never sees it half-removed.
    if std::fs::symlink_metadata(&include).is_ok() && !include.join(HEADER).is_file() {
        let aside = dir.join(format!("stale-{}", std::process::id()));
        if std::fs::rename(&include, &aside).is_ok() {
            let _ = std::fs::remove_dir_all(&aside);
        }
    }
    let result = fetched.and_then(|()| match std::fs::rename(work.join("include"), &include) {
        Ok(()) => Ok(include.clone()),
        Err(_) if include.join(HEADER).is_file() => Ok(include.clone()),
        Err(e) => Err(Error::io(&include, e)),
    });
    let _ = std::fs::remove_dir_all(&work);
    result.map_err(|e| {
        Error::toolchain(format!(
            "jax_min {version}: begen could not get jaxlib {version}'s XLA FFI headers ({e}). It runs `{python} -m \
             pip download --no-deps jaxlib=={version}` and keeps `jaxlib/include/xla/ffi/` in `{}`. Fix: make that \
             work (network, a pip index; BEGEN_PYTHON picks the Python, whose version must have a jaxlib {version} \
             wheel), or copy that jaxlib's `jaxlib/include` there yourself.",
            include.display()
        ))
    })
}

/// Runs [`FETCH_SCRIPT`] with `python`, bounded in time and output.
fn fetch(env: &Env, python: &str, version: &str, work: &Path) -> Result<()> {
    let seconds = env.var("BEGEN_DOWNLOAD_TIMEOUT").and_then(|s| s.parse::<u64>().ok()).unwrap_or(DOWNLOAD_TIMEOUT_S);
    let mut cmd = Command::new(python);
    cmd.arg("-c").arg(FETCH_SCRIPT).arg(version).arg(work);
    let finished = process::run_bounded(&mut cmd, Duration::from_secs(seconds.max(1)), 1 << 20).map_err(|s| {
        Error::toolchain(match s {
            Stopped::Spawn(e) => format!("`{python}` could not be run ({e})"),
            Stopped::Wait(e) => format!("waiting for `{python}` failed ({e})"),
            Stopped::Timeout(..) => {
                format!(
                    "the download took more than {seconds} s and was stopped (BEGEN_DOWNLOAD_TIMEOUT sets the limit)"
                )
            }
            Stopped::TooMuch => format!("`{python}` wrote more than 1 MiB and was stopped"),
        })
    })?;
    if finished.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&finished.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no output").trim().to_string();
    Err(Error::toolchain(format!("`{python}` failed: {last}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_is_per_user() {
        let env = Env::new().with("XDG_CACHE_HOME", "/c").with("HOME", "/h");
        assert_eq!(cache_dir(&env, "0.10.2"), Some(PathBuf::from("/c/begen/jaxlib-0.10.2")));
        // A relative XDG_CACHE_HOME is ignored, as the spec says.
        let env = Env::new().with("XDG_CACHE_HOME", "rel").with("HOME", "/h");
        assert_eq!(cache_dir(&env, "0.4"), Some(PathBuf::from("/h/.cache/begen/jaxlib-0.4")));
        let env = Env::new().without("XDG_CACHE_HOME").without("HOME");
        assert_eq!(cache_dir(&env, "0.4"), None);
        let err = headers(&env, "python3", "0.4").unwrap_err().to_string();
        assert!(err.contains("neither XDG_CACHE_HOME"), "{err}");
    }

    #[test]
    fn cached_headers_are_used_without_python() {
        let base = std::env::temp_dir().join(format!("begen-jaxlib-cache-{}", std::process::id()));
        let env = Env::new().with("XDG_CACHE_HOME", base.to_str().unwrap());
        assert_eq!(cached(&env, "0.10.2"), None);
        let api = base.join("begen/jaxlib-0.10.2/include/xla/ffi/api");
        std::fs::create_dir_all(&api).unwrap();
        std::fs::write(api.join("ffi.h"), "").unwrap();
        let include = headers(&env, "/nonexistent/python", "0.10.2").unwrap();
        assert_eq!(include, base.join("begen/jaxlib-0.10.2/include"));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A cache left half-written (its folder there, the header not) is
    /// replaced by the next download, not an error.
    #[cfg(unix)]
    #[test]
    fn a_half_written_cache_recovers() {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir().join(format!("begen-jaxlib-half-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let env = Env::new().with("XDG_CACHE_HOME", base.to_str().unwrap());
        let half = base.join("begen/jaxlib-0.10.2/include/xla/ffi");
        std::fs::create_dir_all(half.join("api")).unwrap();
        std::fs::write(half.join("api/c_api.h"), "partial").unwrap();
        // A "Python" that fetches: `python -c SCRIPT VERSION WORK`.
        let python = base.join("python");
        std::fs::write(
            &python,
            "#!/bin/sh\nmkdir -p \"$4/include/xla/ffi/api\" && echo ok > \"$4/include/xla/ffi/api/ffi.h\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        let include = headers(&env, python.to_str().unwrap(), "0.10.2").unwrap();
        assert_eq!(std::fs::read_to_string(include.join(HEADER)).unwrap(), "ok\n");
        assert!(!include.join("xla/ffi/api/c_api.h").exists(), "the half-written cache went");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_failed_download_says_what_to_do() {
        let base = std::env::temp_dir().join(format!("begen-jaxlib-fail-{}", std::process::id()));
        let env = Env::new().with("XDG_CACHE_HOME", base.to_str().unwrap());
        let err = headers(&env, "/nonexistent/python", "0.10.2").unwrap_err().to_string();
        assert!(err.contains("could not get jaxlib 0.10.2's XLA FFI headers"), "{err}");
        assert!(err.contains("`/nonexistent/python` could not be run"), "{err}");
        assert!(err.contains("copy that jaxlib's `jaxlib/include` there yourself"), "{err}");
        assert!(!base.join("begen/jaxlib-0.10.2/fetch-").exists());
        assert!(!err.contains('\n'));
        let err = headers(&env, "python3", "0.x").unwrap_err().to_string();
        assert!(err.contains("not a jax release number"), "{err}");
        let _ = std::fs::remove_dir_all(&base);
    }
}
