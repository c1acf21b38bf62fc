//! The layering of `src/` (docs/design.md "Layers") where Cargo cannot keep it, read from the
//! source text: no import cycle between top-level modules or between the files of one
//! directory; `http/` reaches data only through `catalog/`; `catalog/` builds models and knows
//! neither `render/` nor `http/`; `render/` only writes bytes from the domain; the pure layers
//! do no I/O; and `Cache-Control` has one writer. The lower layers are crates (`crates/`: the
//! domain, `model` here, the source, the store, the provider and the archive), so one of them
//! reaching a layer above it is a compile error; they are read for the other rules.
//! The checker itself is tested on small trees that break each rule.
//!
//! Files are read whole, their unit tests too: a test's fixtures keep to the layers as well.
//! Comments are skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A source file: its module path (`["http", "front"]`; a `mod.rs` is its directory's module).
struct SourceFile {
    module: Vec<String>,
    is_dir_module: bool,
    code: String,
}

fn source_files() -> Vec<SourceFile> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = Vec::new();
    // The lower layers are crates (`crates/NAME`, Cargo keeps each from reaching a layer
    // above it); each is read here as the module the service re-exports it as (the domain as
    // `model/`), its `crate::` paths written as the service sees them, for the rules Cargo
    // cannot keep (I/O in the domain, one `Cache-Control` writer, cycles within a directory).
    let mut roots = vec![(manifest.join("src"), String::new())];
    for entry in std::fs::read_dir(manifest.join("crates")).expect("crates dir").flatten() {
        let module = match entry.file_name().to_string_lossy().as_ref() {
            "domain" => "model".to_string(),
            // The service's and the web layer's modules are top-level modules of the service.
            "service" | "web" => String::new(),
            name => name.to_string(),
        };
        roots.push((entry.path().join("src"), module));
    }
    for (root, module) in roots {
        let mut stack: Vec<PathBuf> = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("source dir").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().and_then(|e| e.to_str()) == Some("rs") {
                    let rel =
                        path.strip_prefix(&root).expect("under its root").to_string_lossy().into_owned();
                    let text = std::fs::read_to_string(&path).expect("read source");
                    if module.is_empty() {
                        texts.push((rel, crates_as_modules(&text)));
                    } else {
                        let rel = if rel == "lib.rs" { "mod.rs".to_string() } else { rel };
                        texts.push((format!("{module}/{rel}"), as_the_service_reads(&text, &module)));
                    }
                }
            }
        }
    }
    tree(&texts)
}

/// A lower crate's text with its paths as the service's tree names them: its own items
/// (`crate::x`) become `crate::{module}::x`, then [`crates_as_modules`].
fn as_the_service_reads(text: &str, module: &str) -> String {
    crates_as_modules(&text.replace("crate::", &format!("crate::{module}::")))
}

/// Workspace crates named by their own names (`wafuel_store::x`) as the modules of the tree
/// the rules are written for: the domain as `model` (its clock as `time`), the service's and
/// the web layer's modules at the top, every other crate as the module of its name.
fn crates_as_modules(text: &str) -> String {
    const CRATES: [(&str, &str); 10] = [
        ("wafuel_domain::time::", "crate::time::"),
        ("wafuel_domain::", "crate::model::"),
        ("wafuel_service::", "crate::"),
        ("wafuel_web::", "crate::"),
        ("wafuel_store::", "crate::store::"),
        ("wafuel_source::", "crate::source::"),
        ("wafuel_places::", "crate::places::"),
        ("wafuel_archive::", "crate::archive::"),
        ("wafuel_query::", "crate::query::"),
        ("wafuel_sim::", "crate::sim::"),
    ];
    CRATES.iter().fold(text.to_string(), |out, (from, to)| out.replace(from, to))
}

/// Source files from (path under `src/`, text) pairs; `lib.rs` and `main.rs` are the root.
fn tree<S: AsRef<str>>(texts: &[(S, S)]) -> Vec<SourceFile> {
    let mut out = Vec::new();
    for (rel, text) in texts {
        let rel = Path::new(rel.as_ref());
        let mut module: Vec<String> =
            rel.with_extension("").iter().map(|c| c.to_string_lossy().into_owned()).collect();
        let is_dir_module = module.last().is_some_and(|m| m == "mod");
        if is_dir_module {
            module.pop();
        }
        if module == ["lib"] || module == ["main"] {
            continue;
        }
        let code: String = text
            .as_ref()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        out.push(SourceFile { module, is_dir_module, code });
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

/// Modules that only compute: they read no clock, file, socket, database or process.
const PURE: [&str; 5] = ["model", "query", "time", "render", "cache_policy"];

/// What a pure module may use, besides the standard library and its crates.
fn pure_may_use(module: &str) -> &'static [&'static str] {
    match module {
        "model" => &[],
        "query" => &["model", "time"],
        "render" => &["model", "time"],
        "cache_policy" => &["time"],
        _ => &[],
    }
}

/// Text that means I/O (or the wall clock) in a module's code.
const IO_MARKERS: [&str; 11] = [
    "tokio::",
    "sqlx::",
    "reqwest::",
    "hyper::",
    "std::fs",
    "std::net",
    "std::process",
    "std::env",
    "::now()",
    "File::",
    "TcpStream",
];

/// Every broken rule of the layering, as a sentence.
fn violations(files: &[SourceFile]) -> Vec<String> {
    let top = top_level_graph(files);
    let uses = |module: &str, other: &str| top.get(module).is_some_and(|u| u.contains(other));
    let mut out = Vec::new();
    if let Some(cycle) = find_cycle(&top) {
        out.push(format!("import cycle between top-level modules: {}", cycle.join(" → ")));
    }
    for (dir, graph) in sibling_graphs(files) {
        if let Some(cycle) = find_cycle(&graph) {
            out.push(format!("import cycle between the files of src/{dir}: {}", cycle.join(" → ")));
        }
    }
    for below in ["snapshot", "source", "store", "places", "jobs", "sim"] {
        if uses("http", below) {
            out.push(format!("http/ reaches {below}/ (it asks catalog/ for everything)"));
        }
    }
    for other in ["render", "http"] {
        if uses("catalog", other) {
            out.push(format!("catalog/ reaches {other}/ (it builds models, not bytes or answers)"));
        }
    }
    for module in PURE {
        for used in top.get(module).into_iter().flatten() {
            if !pure_may_use(module).contains(&used.as_str()) {
                out.push(format!("{module} reaches {used}/ (it may use only {:?})", pure_may_use(module)));
            }
        }
    }
    for file in files.iter().filter(|f| PURE.contains(&f.module[0].as_str())) {
        for marker in IO_MARKERS.iter().filter(|m| file.code.contains(**m)) {
            out.push(format!("{} does I/O ({marker})", file.module.join("::")));
        }
    }
    for file in files.iter().filter(|f| f.module != ["cache_policy"] && f.code.contains("CACHE_CONTROL")) {
        out.push(format!(
            "{} writes Cache-Control (only cache_policy::CachePolicy::write does)",
            file.module.join("::")
        ));
    }
    out
}

#[test]
fn layers_keep_to_their_work() {
    let files = source_files();
    assert!(files.iter().any(|f| f.module == ["http", "endpoint"]), "the tree was read");
    assert!(files.iter().any(|f| f.module == ["store", "history"]), "and the crates under it");
    assert_eq!(violations(&files), Vec::<String>::new());
}

/// The checker finds each broken rule in a small tree that breaks it, and nothing in the
/// same tree kept in order.
#[test]
fn the_checker_fails_on_a_tree_that_breaks_each_rule() {
    let clean: Vec<(&str, &str)> = vec![
        ("http/mod.rs", "use crate::catalog::Catalog;"),
        ("http/front.rs", "use super::answer::respond;"),
        ("http/answer.rs", "use crate::cache_policy::CachePolicy;"),
        ("catalog/mod.rs", "use crate::snapshot::PriceService; use crate::model::documents::PriceDoc;"),
        ("render/mod.rs", "use crate::model::documents::PriceDoc; use crate::time::period_texts;"),
        ("snapshot/mod.rs", "use crate::store::Store; use crate::source::SourceError;"),
        ("model/mod.rs", "use crate::model::sync::Memo;"),
        ("query/mod.rs", "use crate::model::codes::product;"),
        ("time.rs", "pub fn perth() {}"),
        ("cache_policy.rs", "headers.insert(header::CACHE_CONTROL, value);"),
    ];
    assert_eq!(violations(&tree(&clean)), Vec::<String>::new(), "the clean tree");
    let breaks: [(&str, &str, &str); 13] = [
        ("http/rendered.rs", "use crate::snapshot::shared_until;", "http/ reaches snapshot/"),
        ("http/errors.rs", "use crate::source::SourceError;", "http/ reaches source/"),
        ("http/state.rs", "let s: crate::store::Store;", "http/ reaches store/"),
        ("http/x.rs", "use crate::{places::A, jobs::B, sim::C};", "http/ reaches sim/"),
        ("catalog/documents.rs", "use crate::render::stations::station_rows;", "catalog/ reaches render/"),
        ("catalog/events.rs", "use crate::http::AppState;", "catalog/ reaches http/"),
        ("render/jsonapi.rs", "use crate::query::Selection;", "render reaches query/"),
        ("model/key.rs", "let t = std::fs::read(path);", "model::key does I/O (std::fs"),
        ("query/stations.rs", "let now = jiff::Timestamp::now();", "query::stations does I/O (::now()"),
        ("time.rs", "use crate::store::Store;", "time reaches store/"),
        ("http/events.rs", "h.insert(header::CACHE_CONTROL, v);", "http::events writes Cache-Control"),
        ("store/mod.rs", "use crate::catalog::Catalog;", "import cycle between top-level modules"),
        ("http/answer.rs", "use super::front::X;", "import cycle between the files of src/http"),
    ];
    for (path, code, expected) in breaks {
        let mut files = clean.clone();
        files.push((path, code));
        if path == "store/mod.rs" {
            // A cycle needs the other direction too: catalog → store → catalog.
            files.push(("catalog/market.rs", "use crate::store::history::Rows;"));
        }
        let found = violations(&tree(&files));
        assert!(found.iter().any(|v| v.contains(expected)), "{path}: expected {expected:?}, found {found:?}");
    }
}

/// Every hand-written Rust file of the service and its crates, as (path, text).
fn rust_sources() -> Vec<(PathBuf, String)> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stack = vec![manifest.join("src")];
    for entry in std::fs::read_dir(manifest.join("crates")).expect("crates dir").flatten() {
        stack.push(entry.path().join("src"));
    }
    let mut out = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("source dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("read source");
                out.push((path, text));
            }
        }
    }
    out
}

/// The shape the tree keeps so the next engineer can read it: files a reader takes in whole,
/// each crate called by its own name (a path says which crate holds it), the binary's library
/// exposing its own modules only, and the simulated origins built on the domain alone (never
/// on the readers they stand in front of).
#[test]
fn the_tree_keeps_small_files_and_crates_by_their_own_names() {
    let sources = rust_sources();
    assert!(sources.len() > 100, "the tree was read: {} files", sources.len());
    for (path, text) in &sources {
        let lines = text.lines().count();
        assert!(lines <= 800, "{}: {lines} lines (at most 800)", path.display());
        for line in
            text.lines().map(str::trim_start).filter(|l| l.starts_with("use ") || l.starts_with("pub use "))
        {
            let renamed = line.split("wafuel_").skip(1).any(|rest| {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                rest[name.len()..].starts_with(" as ")
            });
            assert!(!renamed, "{}: a crate under another name: {line}", path.display());
        }
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(manifest.join("src/lib.rs")).expect("lib.rs");
    assert!(!lib.contains("pub use wafuel_"), "src/lib.rs re-exports a workspace crate");
    let sim = std::fs::read_to_string(manifest.join("crates/sim/Cargo.toml")).expect("sim manifest");
    let dependencies =
        sim.split("[dependencies]").nth(1).expect("dependencies").split("\n[").next().unwrap_or("");
    let workspace: Vec<&str> =
        dependencies.lines().filter(|l| l.trim_start().starts_with("wafuel-")).map(str::trim).collect();
    assert!(
        workspace.len() == 1 && workspace[0].starts_with("wafuel-domain "),
        "the simulated origins depend on the domain alone: {workspace:?}"
    );
}
