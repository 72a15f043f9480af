//! The build plan of a library (see [`crate::model::plan`]): the caller's
//! settings, the environment, begen.yaml and begen's defaults merged, in
//! that order of precedence, here and nowhere else.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::Config;
use crate::env::Env;
use crate::model::generated::DEFAULT_TARGETS;
use crate::model::plan::{ArchRequest, ArchSource, BackendPlan, CcBase, Launcher, LinkPlan, Outputs, Plan};
use crate::model::{Platform, PlatformChoice, SourceFile};
use crate::settings::RunInput;
use crate::settings::Settings;

/// The plan of library `name`, whose checked sources are `sources`.
pub(in crate::check) fn resolve(
    req: &RunInput,
    name: &str,
    choice: PlatformChoice,
    sources: &[SourceFile],
    jax_min: Option<String>,
    binaries: bool,
) -> Plan {
    let (s, c, env) = (req.settings, req.config, req.env);
    let has_cuda = sources.iter().any(|s| s.platform == Platform::Cuda);
    let cuda = match choice {
        PlatformChoice::Cuda => true,
        PlatformChoice::Auto => has_cuda,
        PlatformChoice::Cpu => false,
    };
    let mut backends = vec![backend(s, c, Platform::Cpu, env)];
    if cuda {
        backends.push(backend(s, c, Platform::Cuda, env));
    }
    let config_dirs = c.include_dirs.iter().map(|d| req.root.join(d));
    let includes =
        s.includes.iter().map(|d| caller_path(d)).chain(config_dirs).chain([req.root.to_path_buf()]).collect();
    Plan {
        outputs: Outputs::of(name),
        out: s.out_dir().to_path_buf(),
        work_dir: s.work_dir.clone(),
        includes,
        prefix_maps: file_prefix_maps(req.root),
        targets: if s.targets.is_empty() { DEFAULT_TARGETS.to_vec() } else { s.targets.clone() },
        jax_min,
        backends,
        launcher: launcher(s, c, env),
        link: link(req, binaries),
        jobs: s.jobs.unwrap_or_else(|| {
            env.var("NUM_JOBS")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        }),
        timeout: compile_timeout(env),
        verbose: s.verbose,
        cc_metadata: s.cc_metadata,
    }
}

/// A path the caller gave (`-I DIR`), absolute: a relative one is read
/// from the caller's folder (compilers run in the work directory, where it
/// would name another folder).
pub(crate) fn caller_path(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The plan of the backend for `platform`: the caller's cc configuration,
/// begen.yaml's flags then the caller's and, for CUDA, the architectures
/// asked for. `begen doctor` asks for one too.
pub(crate) fn backend(s: &Settings, c: &Config, platform: Platform, env: &Env) -> BackendPlan {
    match platform {
        Platform::Cpu => BackendPlan {
            platform,
            cc: CcBase(s.host_cc.clone()),
            flags: c.cxx_flags.iter().chain(&s.cxx_flags).cloned().collect(),
            arch: None,
        },
        Platform::Cuda => BackendPlan {
            platform,
            cc: CcBase(s.cuda_cc.clone()),
            flags: c.cuda.flags.iter().chain(&s.cuda_flags).cloned().collect(),
            arch: arch_request(&s.arch, env, &c.cuda.arch),
        },
    }
}

/// The architectures asked for: the caller's, else `BEGEN_CUDA_ARCH`, else
/// begen.yaml's `cuda.arch`; none: the build looks at the machine.
fn arch_request(option: &[String], env: &Env, config: &[String]) -> Option<ArchRequest> {
    if !option.is_empty() {
        return Some(ArchRequest { items: option.to_vec(), source: ArchSource::Option });
    }
    if let Some(value) = env.var("BEGEN_CUDA_ARCH") {
        return Some(ArchRequest { items: vec![value], source: ArchSource::Env });
    }
    (!config.is_empty()).then(|| ArchRequest { items: config.to_vec(), source: ArchSource::Config })
}

/// The compiler launcher: the caller's (build.rs's `.compiler_launcher`),
/// else `BEGEN_COMPILER_LAUNCHER`, else begen.yaml's `compiler_launcher`;
/// a blank one is none.
fn launcher(s: &Settings, c: &Config, env: &Env) -> Option<Launcher> {
    let (program, from) = match (&s.compiler_launcher, env.var("BEGEN_COMPILER_LAUNCHER"), &c.compiler_launcher) {
        (Some(p), _, _) => (p.clone(), "the build script's `.compiler_launcher`"),
        (None, Some(p), _) => (p, "BEGEN_COMPILER_LAUNCHER"),
        (None, None, Some(p)) => (p.clone(), "begen.yaml's `compiler_launcher`"),
        (None, None, None) => return None,
    };
    let program = program.trim();
    (!program.is_empty()).then(|| Launcher { program: program.to_string(), from })
}

/// Libraries, their directories and linker arguments: begen.yaml's and the
/// caller's, plus `-ldl` where binary kernels open the CUDA driver with
/// dlopen (in libc from glibc 2.34, in libdl before).
fn link(req: &RunInput, dlopen: bool) -> LinkPlan {
    let (s, c) = (req.settings, &req.config.link);
    LinkPlan {
        libs: c.libs.iter().chain(&s.link_libs).cloned().collect(),
        dirs: s.link_dirs.iter().cloned().chain(c.dirs.iter().map(|d| req.root.join(d))).collect(),
        args: c.args.iter().chain(&s.link_args).cloned().chain(dlopen.then(|| "-ldl".to_string())).collect(),
        preload: c.libs.clone(),
    }
}

/// A compile that hangs is stopped: `BEGEN_COMPILE_TIMEOUT` seconds, else
/// 30 minutes.
fn compile_timeout(env: &Env) -> Duration {
    let seconds = env.var("BEGEN_COMPILE_TIMEOUT").and_then(|s| s.parse::<u64>().ok()).unwrap_or(1800);
    Duration::from_secs(seconds.max(1))
}

/// `-ffile-prefix-map` flags that write the kernel directory `root` (as
/// given and, where it differs, as the file system resolves it) as nothing,
/// so `__FILE__` of `root/sub/k.cpp` is `sub/k.cpp` and the library holds
/// no path of the machine it was built on. Roots whose path has a `=` or a
/// comma (which would end the option or nvcc's `-Xcompiler` argument) are
/// left unmapped.
fn file_prefix_maps(root: &Path) -> Vec<String> {
    let mut roots: Vec<PathBuf> = vec![root.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(root)
        && real != root
    {
        roots.push(real);
    }
    roots
        .iter()
        .map(|r| r.display().to_string())
        .filter(|r| !r.contains(['=', ',']) && !r.is_empty())
        .map(|r| format!("-ffile-prefix-map={}/=", r.trim_end_matches('/')))
        .collect()
}

#[cfg(test)]
mod caller_tests {
    #[test]
    fn a_relative_include_is_the_callers() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(super::caller_path(std::path::Path::new("inc")), cwd.join("inc"));
        assert_eq!(super::caller_path(std::path::Path::new("/abs/inc")), std::path::Path::new("/abs/inc"));
    }
}
