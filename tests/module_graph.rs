//! The module graph of `src/`, computed as docs/architecture.md's shell
//! snippet describes (`use crate::...` outside comments and tests, per
//! top-level module; within `check/` and its folders, `emit/` and `target/`
//! per file), must be exactly the graph that page lists, and must have no
//! cycle.
//!
//! A module's code is its files (`src/X.rs` and everything under `src/X/`)
//! but `tests.rs` files, each cut at its first `#[cfg(test)]` line, without
//! the lines that start with `//`. Within a folder, a file uses a sibling
//! it names as `super::NAME` or `crate::<folder>::NAME` (a subfolder with a
//! `mod.rs` is one node); a name that is no sibling is an item of the
//! folder's `mod.rs` (`mod`). `mod.rs` declares the files, so its own uses
//! of them are not edges: `mod` is where the files' shared items live. The page lists each graph in a `text` block whose first line is
//! `[crate]` or `[<folder>/]`, one `NODE -> USED...` line per node.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file at or under `path`, but `tests.rs`, sorted.
fn rust_files(path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if path.is_file() {
        out.push(path.to_path_buf());
    } else if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                out.extend(rust_files(&e));
            } else if e.extension().is_some_and(|x| x == "rs") && e.file_name().is_some_and(|n| n != "tests.rs") {
                out.push(e);
            }
        }
    }
    out
}

/// A file's code as the snippet reads it: up to its first `#[cfg(test)]`
/// line, without the lines that start with `//`.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        if !line.trim_start().starts_with("//") {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The identifiers right after each `prefix` in `text` (and inside a
/// `prefix{a, b}` group).
fn names_after(text: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(k) = rest.find(prefix) {
        // `xcrate::` is not `crate::`.
        let before = rest[..k].chars().last();
        rest = &rest[k + prefix.len()..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            out.extend(group[..end].split(',').map(|s| ident(s.trim())).filter(|s| !s.is_empty()));
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// The top-level modules' graph.
fn crate_graph() -> Graph {
    let mut modules = BTreeSet::new();
    for e in std::fs::read_dir(src()).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        if (p.is_dir() || p.extension().is_some_and(|x| x == "rs")) && stem != "lib" && stem != "main" {
            modules.insert(stem);
        }
    }
    let mut graph = Graph::new();
    for m in &modules {
        let mut used = BTreeSet::new();
        for f in rust_files(&src().join(format!("{m}.rs"))).into_iter().chain(rust_files(&src().join(m))) {
            used.extend(names_after(&code(&f), "crate::"));
        }
        used.retain(|u| u != m && modules.contains(u));
        graph.insert(m.clone(), used);
    }
    graph
}

/// The graph of the files of `src/<folder>` (`check`, `target/xla_jax`).
fn folder_graph(folder: &str) -> Graph {
    let dir = src().join(folder);
    let mut nodes = BTreeMap::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        let module_dir = p.is_dir() && p.join("mod.rs").is_file();
        if module_dir || (p.extension().is_some_and(|x| x == "rs") && stem != "tests") {
            nodes.insert(stem, p);
        }
    }
    let path = format!("crate::{}::", folder.replace('/', "::"));
    let mut graph = Graph::new();
    for (node, p) in &nodes {
        let mut used = BTreeSet::new();
        for f in rust_files(p) {
            let text = code(&f);
            let mut names = names_after(&text, &path);
            // `super::` names the folder from a file directly in it (not
            // mod.rs, whose `super` is the folder's parent) and from a
            // subfolder's mod.rs.
            let in_dir = f.parent() == Some(dir.as_path()) && node != "mod";
            let sub_root = f.file_name().is_some_and(|n| n == "mod.rs")
                && f.parent().and_then(Path::parent) == Some(dir.as_path());
            if in_dir || sub_root {
                names.extend(names_after(&text, "super::"));
            }
            for n in names {
                let to = if nodes.contains_key(&n) { n } else { "mod".to_string() };
                if to != *node {
                    used.insert(to);
                }
            }
        }
        graph.insert(node.clone(), used);
    }
    graph
}

/// The graphs docs/architecture.md lists, by scope (`crate`, `check/`...).
fn documented() -> BTreeMap<String, Graph> {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md")).unwrap();
    let mut out = BTreeMap::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```text" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let Some(scope) = block.first().and_then(|l| l.trim().strip_prefix('[')).and_then(|l| l.strip_suffix(']'))
        else {
            continue;
        };
        let mut graph = Graph::new();
        for l in &block[1..] {
            let (node, used) =
                l.split_once("->").unwrap_or_else(|| panic!("[{scope}]: `{l}` is not `NODE -> USED...`"));
            graph.insert(node.trim().to_string(), used.split_whitespace().map(String::from).collect());
        }
        out.insert(scope.to_string(), graph);
    }
    out
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(n: &str, g: &Graph, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(k) = path.iter().position(|p| p == n) {
            let mut c = path[k..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

fn render(graph: &Graph) -> String {
    let width = graph.keys().map(String::len).max().unwrap_or(0);
    graph
        .iter()
        .map(|(n, used)| {
            let used: Vec<&str> = used.iter().map(String::as_str).collect();
            format!("{n:width$} -> {}", used.join(" ")).trim_end().to_string() + "\n"
        })
        .collect()
}

fn check(scope: &str, real: Graph, pages: &BTreeMap<String, Graph>) {
    if let Some(c) = cycle(&real) {
        panic!("[{scope}] has a cycle: {}", c.join(" -> "));
    }
    let none = Graph::new();
    let listed = pages.get(scope).unwrap_or(&none);
    assert!(
        &real == listed,
        "docs/architecture.md's [{scope}] graph is not the code's; the code's is:\n[{scope}]\n{}",
        render(&real)
    );
}

#[test]
fn the_module_graph_is_the_one_the_architecture_page_lists_and_has_no_cycle() {
    let pages = documented();
    check("crate", crate_graph(), &pages);
    for folder in ["check", "check/function", "check/library", "check/options", "emit", "target", "target/xla_jax"] {
        check(&format!("{folder}/"), folder_graph(folder), &pages);
    }
}

#[test]
fn a_cycle_is_found_and_an_acyclic_graph_passes() {
    let g = |edges: &[(&str, &str)]| {
        let mut g = Graph::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
            g.entry(b.to_string()).or_default();
        }
        g
    };
    assert_eq!(cycle(&g(&[("a", "b"), ("b", "c")])), None);
    assert_eq!(
        cycle(&g(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(
        names_after("use crate::{x}; xcrate::no crate::model::Y super::{A, b}", "crate::"),
        ["x", "model"].map(String::from).into()
    );
    assert_eq!(
        names_after("super::{DimMap, py_literal}", "super::"),
        ["DimMap", "py_literal"].map(String::from).into()
    );
}
