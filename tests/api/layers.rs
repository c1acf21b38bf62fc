//! The layering of `src/` (docs/design.md "Module map"), read from the source text: no
//! import cycle between top-level modules or between the files of one directory, `http/`
//! reaches data only through `catalog/`, and `render/` only writes bytes.
//!
//! Unit tests at the end of a file (`#[cfg(test)]`) may use any module for their fixtures, so
//! a file is read up to its test module. Comments are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file: its module path (`["http", "front"]`; a `mod.rs` is its directory's module).
struct SourceFile {
    module: Vec<String>,
    is_dir_module: bool,
    code: String,
}

fn source_files() -> Vec<SourceFile> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(&root).expect("under src");
            let mut module: Vec<String> =
                rel.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
            let is_dir_module = module.last().is_some_and(|m| m == "mod");
            if is_dir_module {
                module.pop();
            }
            if module == ["lib"] || module == ["main"] {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            let code: String = text
                .lines()
                .take_while(|l| !l.starts_with("#[cfg(test)]"))
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            out.push(SourceFile { module, is_dir_module, code });
        }
    }
    out
}

/// The first segments of every path that follows `prefix` in `code`: `prefix{a, b::c}` and
/// `prefixa::b` give `a`, `b` and `a`.
fn first_segments(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    for (at, _) in code.match_indices(prefix) {
        // `foo_crate::` or `a::crate::` are not this prefix.
        let before = code[..at].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut element_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => element_start = true,
                    c if element_start && !c.is_whitespace() => {
                        element_start = false;
                        let name = ident(&group[i..]);
                        if !name.is_empty() {
                            out.insert(name);
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

/// Module → the modules it uses, for one level of the tree.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn top_level_graph(files: &[SourceFile]) -> Graph {
    let mut graph = Graph::new();
    for file in files {
        let top = &file.module[0];
        let used = graph.entry(top.clone()).or_default();
        for name in first_segments(&file.code, "crate::") {
            if &name != top {
                used.insert(name);
            }
        }
    }
    graph
}

/// The graph between the files of each directory: a file uses a sibling through `super::` (or
/// `crate::<dir>::`). A directory's `mod.rs` is its parent, not a sibling.
fn sibling_graphs(files: &[SourceFile]) -> BTreeMap<String, Graph> {
    let mut by_dir: BTreeMap<String, Graph> = BTreeMap::new();
    let siblings: BTreeMap<String, BTreeSet<String>> =
        files.iter().filter(|f| !f.is_dir_module).fold(BTreeMap::new(), |mut acc, f| {
            let (dir, name) = f.module.split_at(f.module.len() - 1);
            acc.entry(dir.join("::")).or_default().insert(name[0].clone());
            acc
        });
    for file in files.iter().filter(|f| !f.is_dir_module && f.module.len() > 1) {
        let (dir, name) = file.module.split_at(file.module.len() - 1);
        let dir = dir.join("::");
        let known = &siblings[&dir];
        let mut used = first_segments(&file.code, "super::");
        used.extend(first_segments(&file.code, &format!("crate::{dir}::")));
        let graph = by_dir.entry(dir).or_default();
        let edges = graph.entry(name[0].clone()).or_default();
        edges.extend(used.into_iter().filter(|u| known.contains(u) && u != &name[0]));
    }
    by_dir
}

/// A cycle of `graph`, if it has one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_reader_finds_what_a_path_names() {
    let code = "use crate::http::{front::X, answer};\nlet a = crate::store::open();\nuse super::{AppState, preflight};";
    assert_eq!(first_segments(code, "crate::"), BTreeSet::from(["http".into(), "store".into()]));
    assert_eq!(first_segments(code, "crate::http::"), BTreeSet::from(["front".into(), "answer".into()]));
    assert_eq!(first_segments(code, "super::"), BTreeSet::from(["AppState".into(), "preflight".into()]));
    let graph =
        Graph::from([("a".into(), BTreeSet::from(["b".into()])), ("b".into(), BTreeSet::from(["a".into()]))]);
    assert_eq!(find_cycle(&graph), Some(vec!["a".into(), "b".into(), "a".into()]));
}

#[test]
fn no_import_cycles() {
    let files = source_files();
    let top = top_level_graph(&files);
    assert!(top.contains_key("http") && top.contains_key("catalog"), "the tree was read");
    assert_eq!(find_cycle(&top), None, "top-level modules");
    for (dir, graph) in sibling_graphs(&files) {
        assert_eq!(find_cycle(&graph), None, "files of src/{dir}");
    }
}

#[test]
fn layers_keep_to_their_work() {
    let top = top_level_graph(&source_files());
    let uses = |module: &str, other: &str| top.get(module).is_some_and(|u| u.contains(other));
    for data in ["store", "places", "jobs", "sim"] {
        assert!(!uses("http", data), "http/ reaches {data}/ (only catalog/ holds data)");
    }
    for other in ["store", "http", "catalog", "snapshot", "places"] {
        assert!(!uses("render", other), "render/ uses {other}/ (it only writes bytes)");
    }
    assert!(!uses("catalog", "http"), "catalog/ knows nothing of HTTP");
}
