//! Loads `begen.yaml` (optional) and checks what serde cannot: platform and
//! vmap_method values. Every problem is a diagnostic with a line.

use std::path::Path;

use crate::check::Loc;
use crate::config::Config;
use crate::diag::{messages as msg, Diagnostic};
use crate::model::VmapMethod;

pub const FILE: &str = "begen.yaml";

/// The config text with a way to find the line of a key.
#[derive(Debug, Clone, Default)]
pub struct ConfigText {
    pub text: String,
    pub path: std::path::PathBuf,
}

impl ConfigText {
    /// The location of `word` as a key (`word:`) or, failing that, as a
    /// plain word (a list item), on the first line at or after `after_line`
    /// that has it; line 1 when there is none.
    pub fn loc(&self, word: &str, after_line: usize) -> Loc {
        let lines: Vec<&str> = self.text.lines().collect();
        let find = |want_key: bool| {
            lines.iter().enumerate().skip(after_line.saturating_sub(1)).find_map(|(i, l)| {
                word_at(l, word, want_key).map(|col| (i + 1, col + 1))
            })
        };
        let found = find(true).or_else(|| find(false));
        let (line, column) = found.unwrap_or((1, 1));
        let len = if found.is_some() { word.len() } else { 0 };
        Loc { file: FILE.into(), path: self.path.clone(), line, column, len }
    }
}

/// The byte column of `word` in `line` standing alone (bounded by YAML
/// punctuation or quotes); with `key`, only where a `:` follows.
fn word_at(line: &str, word: &str, key: bool) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    let bound = |c: Option<char>| c.is_none_or(|c| c.is_whitespace() || "{}[],:\"'#".contains(c));
    line.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = line[..i].chars().next_back();
        let rest = &line[i + word.len()..];
        if !bound(before) || !bound(rest.chars().next()) {
            return false;
        }
        !key || rest.trim_start_matches(['"', '\'']).trim_start().starts_with(':')
    })
}

/// Reads `root/begen.yaml` if it exists. Returns the config (default on
/// any error), its text (for locating keys), and diagnostics.
pub fn load(root: &Path) -> (Config, Option<ConfigText>, Vec<Diagnostic>) {
    let path = root.join(FILE);
    if !path.is_file() {
        return (Config::default(), None, Vec::new());
    }
    let text = match std::fs::read(&path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            let d = Diagnostic::error(FILE, &path, msg::unreadable(&e.to_string()));
            return (Config::default(), None, vec![d]);
        }
    };
    let ct = ConfigText { text, path: path.clone() };
    if ct.text.trim().is_empty() {
        return (Config::default(), Some(ct), Vec::new());
    }
    match serde_yaml_ng::from_str::<Config>(&ct.text) {
        Ok(config) => {
            let diags = check_values(&config, &ct);
            (config, Some(ct), diags)
        }
        Err(e) => {
            let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
            let text = e.to_string();
            // The location is shown apart; drop serde's " at line N column M".
            let text = text.find(" at line ").map_or(text.as_str(), |k| &text[..k]);
            let d = Diagnostic::error(FILE, &path, msg::yaml_error(text)).at(line, column, 0);
            (Config::default(), Some(ct), vec![d])
        }
    }
}

fn check_values(config: &Config, ct: &ConfigText) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    if let Some(p) = &config.platform
        && !matches!(p.as_str(), "cpu" | "cuda" | "auto") {
            diags.push(ct.loc("platform", 1).error(msg::bad_platform(p)));
        }
    for (name, f) in &config.functions {
        if let Some(v) = &f.vmap_method
            && VmapMethod::parse(v).is_none() {
                let fn_line = ct.loc(name, 1).line;
                diags.push(ct.loc("vmap_method", fn_line).error(msg::bad_vmap_method(v)));
            }
    }
    diags
}
