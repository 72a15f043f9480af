//! Where the running `begen` was installed from, for `begen doctor`: a pip
//! wheel, `cargo install`, or a Cargo target directory. Each leaves its own
//! record beside the binary, so the answer needs no guessing from names.

use std::path::{Path, PathBuf};

/// How a `begen` binary came to be where it is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// pip (or uv) installed begen's wheel (the distribution `begen-jax`):
    /// its `.dist-info` records this binary.
    Pip { dist_info: PathBuf },
    /// `cargo install`: the binary is in the `bin/` of a Cargo install root,
    /// which holds `.crates.toml` / `.crates2.json`.
    CargoInstall { root: PathBuf },
    /// `cargo build` / `cargo run`: the binary is in a profile folder of a
    /// Cargo target directory (which holds Cargo's `.fingerprint/`).
    CargoBuild { profile: String, target: PathBuf },
    /// None of the above (a copied binary, a system package).
    Unknown,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Pip { dist_info } => write!(f, "pip, the begen-jax wheel ({})", dist_info.display()),
            Origin::CargoInstall { root } => write!(f, "cargo install (root {})", root.display()),
            Origin::CargoBuild { profile, target } => {
                write!(f, "a cargo build ({profile} profile of {})", target.display())
            }
            Origin::Unknown => write!(f, "unknown (no pip or cargo record beside the binary)"),
        }
    }
}

/// Finds how the binary at `exe` was installed.
///
/// A wheel installs the binary into `<prefix>/bin` and its metadata into
/// `<prefix>/lib/pythonX.Y/site-packages/begen_jax-<version>.dist-info`, whose
/// `RECORD` names the binary as `../../../bin/begen` (a venv, `--user` and a
/// system prefix all have this shape).
pub(crate) fn origin(exe: &Path) -> Origin {
    let (Some(dir), Some(file)) = (exe.parent(), exe.file_name()) else {
        return Origin::Unknown;
    };
    let prefix = dir.parent();
    if let Some(prefix) = prefix
        && dir.file_name().is_some_and(|n| n == "bin")
    {
        let entry = format!("../../../bin/{},", file.to_string_lossy());
        for lib in ["lib", "lib64"] {
            for site in read_dir_sorted(&prefix.join(lib)) {
                for dist_info in read_dir_sorted(&site.join("site-packages")) {
                    let name = dist_info.file_name().unwrap_or_default().to_string_lossy().into_owned();
                    if name.starts_with("begen_jax-")
                        && name.ends_with(".dist-info")
                        && std::fs::read_to_string(dist_info.join("RECORD"))
                            .is_ok_and(|record| record.lines().any(|l| l.starts_with(&entry)))
                    {
                        return Origin::Pip { dist_info };
                    }
                }
            }
        }
        if prefix.join(".crates.toml").is_file() || prefix.join(".crates2.json").is_file() {
            return Origin::CargoInstall { root: prefix.to_path_buf() };
        }
    }
    if let Some(target) = prefix
        && dir.join(".fingerprint").is_dir()
    {
        let profile = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        return Origin::CargoBuild { profile, target: target.to_path_buf() };
    }
    Origin::Unknown
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    };
    entries.sort();
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("begen-install-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        root
    }

    #[test]
    fn a_wheel_records_its_binary() {
        let root = tree(
            "pip",
            &[
                ("venv/bin/begen", ""),
                (
                    "venv/lib/python3.11/site-packages/begen_jax-0.1.0.dist-info/RECORD",
                    "../../../bin/begen,sha256=x,1\n",
                ),
            ],
        );
        let dist_info = root.join("venv/lib/python3.11/site-packages/begen_jax-0.1.0.dist-info");
        assert_eq!(origin(&root.join("venv/bin/begen")), Origin::Pip { dist_info });
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn another_packages_begen_dist_info_is_not_enough() {
        // PyPI's begen (another project) even where it installs a `begen`,
        // and a begen-jax that does not install this binary.
        let root = tree(
            "other",
            &[
                ("p/bin/begen", ""),
                ("p/lib/python3.11/site-packages/begen-0.5.dist-info/RECORD", "../../../bin/begen,,\n"),
                ("p/lib/python3.11/site-packages/begen_jax-0.1.0.dist-info/RECORD", "begen/__init__.py,,\n"),
            ],
        );
        assert_eq!(origin(&root.join("p/bin/begen")), Origin::Unknown);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn cargo_install_and_cargo_build() {
        let root = tree(
            "cargo",
            &[
                ("home/bin/begen", ""),
                ("home/.crates.toml", ""),
                ("t/release/.fingerprint/x", ""),
                ("t/release/begen", ""),
            ],
        );
        assert_eq!(origin(&root.join("home/bin/begen")), Origin::CargoInstall { root: root.join("home") });
        assert_eq!(
            origin(&root.join("t/release/begen")),
            Origin::CargoBuild { profile: "release".into(), target: root.join("t") }
        );
        assert_eq!(origin(&root.join("elsewhere/begen")), Origin::Unknown);
        let _ = std::fs::remove_dir_all(root);
    }
}
