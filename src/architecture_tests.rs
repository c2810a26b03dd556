//! Architecture tests: the library's modules depend on each other in one
//! direction only, in the order ARCHITECTURE.md documents ([`LAYERS`]). A
//! `use crate::x` (or `crate::x::…` path) from a module to one at its own
//! level or above fails the test, and so does any cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The library's top-level modules, lowest first: each may use only
/// modules listed before it (ARCHITECTURE.md § Code map).
const LAYERS: &[&str] = &[
    "util",
    "classify",
    "lang",
    "config",
    "repo",
    "session",
    "search",
    "chunk",
    "framework",
    "lexical",
    "graph",
    "http",
    "model",
    "runtime",
    "embed",
    "store",
    "relevance",
    "index",
    "rank",
    "learn",
    "client",
    "server",
];

/// The top-level module a source file belongs to (`src/rank/plan.rs` →
/// `rank`), `None` for `lib.rs` and these tests.
fn module_of(rel: &Path) -> Option<String> {
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (!matches!(name.as_str(), "lib" | "main" | "cli" | "architecture_tests")).then_some(name)
}

/// Module → modules it names through `crate::…`, from the sources under
/// `src` (test modules included: a test that reaches up is still an edge).
fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    let re = regex::Regex::new(r"crate::([a-z_]+)").unwrap();
    let grouped = regex::Regex::new(r"use crate::\{([^}]*)\}").unwrap();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let Some(from) = module_of(rel) else { continue };
        // Comments may name other modules; only code is an edge.
        let text: String = std::fs::read_to_string(&f)
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut to: BTreeSet<String> = re.captures_iter(&text).map(|c| c[1].to_string()).collect();
        for g in grouped.captures_iter(&text) {
            for part in g[1].split(',') {
                let name = part.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() {
                    to.insert(name.to_string());
                }
            }
        }
        to.remove(&from);
        out.entry(from).or_default().extend(to);
    }
    out
}

/// Edges that go against [`LAYERS`] (to a module at the same level or
/// above, or to one the list does not know).
fn violations(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let level = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut bad = Vec::new();
    for (from, tos) in edges {
        let Some(f) = level(from) else {
            bad.push(format!("module `{from}` is not in LAYERS"));
            continue;
        };
        for to in tos {
            match level(to) {
                Some(t) if t < f => {}
                Some(_) => bad.push(format!("`{from}` uses `{to}`, which is not below it")),
                None => bad.push(format!("`{from}` uses `{to}`, which is not in LAYERS")),
            }
        }
    }
    bad
}

/// A cycle among the edges, if any (depth-first search).
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut c = stack[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

/// Crates that only some files may name (ARCHITECTURE.md § Invariants):
/// (pattern, the path prefixes under `src/` allowed to use it).
const CRATE_BOUNDARIES: &[(&str, &[&str])] = &[
    // Only `server` knows MCP; the CLI starts the server.
    (r"\brmcp::", &["server/", "cli/serve.rs"]),
    // Only `store` knows Arrow and Lance.
    (
        r"\b(arrow_array|arrow_schema|arrow|lancedb|lance)::",
        &["store/"],
    ),
    // JSON Schema is the wire's business: `server/` derives it, and so do
    // only the modules whose domain types `server/wire.rs` embeds as they
    // are (a ranked file, a reference, a session's hypotheses…). Mirroring
    // those 41 types in `server/` would copy every field once more; the
    // schema snapshot (`server::wire::tests`) shows any change they make to
    // the wire instead. A module not listed here that derives it fails.
    (
        r"\b(schemars|JsonSchema)\b",
        &[
            "server/",
            "classify/mod.rs",
            "config.rs",
            "graph/mod.rs",
            "graph/related.rs",
            "index/mod.rs",
            "index/state.rs",
            "learn/",
            "rank/fusion.rs",
            "rank/mod.rs",
            "rank/plan.rs",
            "rank/semantic.rs",
            "relevance.rs",
            "search/references/mod.rs",
            "search/text.rs",
            "session/model/",
            "store/forest.rs",
            "store/map.rs",
        ],
    ),
];

/// Every Rust file under `src`, as (path relative to `src` with `/`, its
/// code without `//` comment lines).
fn sources(src: &Path) -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    files
        .into_iter()
        .map(|f| {
            let rel = f
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let code = std::fs::read_to_string(&f)
                .unwrap()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            (rel, code)
        })
        .collect()
}

/// Files that name a crate outside the places [`CRATE_BOUNDARIES`] allow.
fn boundary_violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (pattern, allowed) in CRATE_BOUNDARIES {
        let re = regex::Regex::new(pattern).unwrap();
        for (rel, code) in files {
            if rel == "architecture_tests.rs" || allowed.iter().any(|a| rel.starts_with(a)) {
                continue;
            }
            if let Some(m) = re.find(code) {
                bad.push(format!(
                    "{rel} uses `{}` (allowed only in {allowed:?})",
                    m.as_str()
                ));
            }
        }
    }
    bad
}

#[test]
fn crates_stay_behind_their_boundaries() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&src);
    assert!(
        files.iter().any(|(f, _)| f == "server/mod.rs"),
        "no sources found"
    );
    let bad = boundary_violations(&files);
    assert!(
        bad.is_empty(),
        "crate boundaries crossed:\n{}",
        bad.join("\n")
    );
    // A violation added on purpose is caught (and one in place is not).
    let planted = [
        (
            "rank/mod.rs".to_string(),
            "use rmcp::model::Tool;".to_string(),
        ),
        (
            "index.rs".to_string(),
            "let b = arrow_array::RecordBatch::new_empty(s);".to_string(),
        ),
        (
            "store/mod.rs".to_string(),
            "use lancedb::Table;".to_string(),
        ),
        (
            "cli/serve.rs".to_string(),
            "rmcp::serve_server(s, t)".to_string(),
        ),
        (
            "search/symbols/mod.rs".to_string(),
            "#[derive(Serialize, JsonSchema)]".to_string(),
        ),
        (
            "rank/mod.rs".to_string(),
            "#[derive(Serialize, JsonSchema)]".to_string(),
        ),
    ];
    assert_eq!(
        boundary_violations(&planted).len(),
        3,
        "{:?}",
        boundary_violations(&planted)
    );
}

/// Every layer has its paragraph in ARCHITECTURE.md's code map.
#[test]
fn every_layer_is_documented() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md"))
            .unwrap();
    let map = doc
        .split("## Code map")
        .nth(1)
        .expect("ARCHITECTURE.md has a Code map section");
    let missing: Vec<&str> = LAYERS
        .iter()
        .copied()
        .filter(|l| !map.contains(&format!("- **`{l}`**")))
        .collect();
    assert!(
        missing.is_empty(),
        "layers without a paragraph in ARCHITECTURE.md § Code map: {missing:?}"
    );
}

#[test]
fn dependencies_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let e = edges(&src);
    assert!(e.contains_key("server") && e.contains_key("rank"), "{e:?}");
    assert_eq!(cycle(&e), None, "import cycle");
    let bad = violations(&e);
    assert!(bad.is_empty(), "edges against LAYERS:\n{}", bad.join("\n"));
}

/// The checks themselves catch a back edge and a cycle.
#[test]
fn a_back_edge_is_caught() {
    let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    e.entry("store".into()).or_default().insert("chunk".into());
    assert!(violations(&e).is_empty());
    e.entry("chunk".into()).or_default().insert("store".into());
    assert_eq!(violations(&e).len(), 1);
    assert_eq!(
        cycle(&e),
        Some(vec!["chunk".to_string(), "store".into(), "chunk".into()])
    );
}

/// The module path of a source file (`session/model/mod.rs` →
/// `session::model`, `rank/fuse.rs` → `rank::fuse`; `lib.rs` → ``).
fn module_path(rel: &str) -> String {
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    if stem == "lib" || stem == "main" {
        return String::new();
    }
    stem.replace('/', "::")
}

/// File → files it names (`crate::a::b`, `super::x`, `self::y`, grouped
/// `use super::{x, y::Z}` too), resolved to the longest module path that
/// exists; an edge to the file's own module, an ancestor or a descendant
/// (a parent declares its children, a child uses what its parent
/// re-exports) is left out. Test files and test modules are left out.
fn file_edges(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<String> = files.iter().map(|(r, _)| module_path(r)).collect();
    let single = regex::Regex::new(r"\b(crate|super|self)((?:::[a-z_][a-z0-9_]*)+)").unwrap();
    let grouped =
        regex::Regex::new(r"\b(crate|super|self)((?:::[a-z_][a-z0-9_]*)*)::\{([^}]*)\}").unwrap();
    let related = |a: &str, b: &str| {
        a == b
            || a.starts_with(&format!("{b}::"))
            || b.starts_with(&format!("{a}::"))
            || b.is_empty()
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, code) in files {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        if name == "tests.rs" || rel.contains("/tests/") || rel == "architecture_tests.rs" {
            continue;
        }
        // A test module may reach anywhere: only the code it tests counts.
        let code = code.split("#[cfg(test)]").next().unwrap_or(code);
        let from = module_path(rel);
        let own: Vec<&str> = from.split("::").filter(|s| !s.is_empty()).collect();
        let resolve = |root: &str, segments: Vec<&str>| -> Option<String> {
            let mut path: Vec<&str> = match root {
                "crate" => Vec::new(),
                "self" => own.clone(),
                _ => own[..own.len().saturating_sub(1)].to_vec(),
            };
            let mut best = None;
            for s in segments {
                if s == "super" {
                    path.pop();
                    continue;
                }
                path.push(s);
                let p = path.join("::");
                if modules.contains(&p) {
                    best = Some(p);
                }
            }
            best
        };
        let mut to = BTreeSet::new();
        for c in single.captures_iter(code) {
            let segments: Vec<&str> = c[2].split("::").filter(|s| !s.is_empty()).collect();
            to.extend(resolve(&c[1], segments));
        }
        for c in grouped.captures_iter(code) {
            for part in c[3].split(',') {
                let head: Vec<&str> =
                    c[2].split("::")
                        .filter(|s| !s.is_empty())
                        .chain(part.trim().split("::").take_while(|s| {
                            s.chars().next().is_some_and(|ch| ch.is_ascii_lowercase())
                        }))
                        .collect();
                to.extend(resolve(&c[1], head));
            }
        }
        to.retain(|t| !related(&from, t));
        out.entry(from).or_default().extend(to);
    }
    out
}

/// No two files import each other, directly or around a circle, inside a
/// module either (the layers keep modules apart; this keeps `session/`'s
/// files apart).
#[test]
fn no_circle_between_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let e = file_edges(&sources(&src));
    assert!(
        e.get("session::machine")
            .is_some_and(|t| t.contains("session::gate")),
        "the file graph lost an edge it should see: {:?}",
        e.get("session::machine")
    );
    assert_eq!(cycle(&e), None, "files import each other");
    // A planted circle between sibling files is caught; parent ↔ child is not one.
    let planted = [
        (
            "a/mod.rs".to_string(),
            "mod b; mod c; use self::b::X;".to_string(),
        ),
        (
            "a/b.rs".to_string(),
            "use super::c::Y; use super::Z;".to_string(),
        ),
        ("a/c.rs".to_string(), "use crate::a::{b::X, W};".to_string()),
    ];
    assert_eq!(
        cycle(&file_edges(&planted)),
        Some(vec!["a::b".to_string(), "a::c".into(), "a::b".into()])
    );
}

/// The separators reply text is built with (an edge's `view ←`, a list's
/// `, ` or `; `); code that splits on them parses text another function
/// rendered, where the typed value should have been passed instead.
const REPLY_SEPARATORS: &[&str] = &[
    r#".split(", ")"#,
    r#".split("; ")"#,
    r#".split(" ← ")"#,
    r#".split(" → ")"#,
    ".split_whitespace().take(",
];

/// Lines of non-test code (before a file's `#[cfg(test)]`), in files
/// `skip` leaves in, that contain one of `needles`: `"{rel} {what} `{needle}`"`.
fn non_test_code_with(
    files: &[(String, String)],
    skip: impl Fn(&str) -> bool,
    needles: &[&str],
    what: &str,
) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, code) in files.iter().filter(|(rel, _)| !skip(rel)) {
        let code = code.split("#[cfg(test)]").next().unwrap_or(code);
        for needle in needles {
            if code.contains(needle) {
                bad.push(format!("{rel} {what} `{needle}`"));
            }
        }
    }
    bad
}

/// Non-test code that splits a string on a reply separator.
fn parsed_back(files: &[(String, String)]) -> Vec<String> {
    let skip = |rel: &str| {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        name == "tests.rs" || rel == "architecture_tests.rs"
    };
    non_test_code_with(files, skip, REPLY_SEPARATORS, "splits text on")
}

#[test]
fn no_rendered_text_is_parsed_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = parsed_back(&sources(&src));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let planted = [
        (
            "server/x.rs".to_string(),
            r#"let k = e.split_whitespace().take(2);"#.to_string(),
        ),
        (
            "rank/y.rs".to_string(),
            "fn f() {}\n#[cfg(test)]\nmod tests { fn g() { s.split(\", \"); } }".to_string(),
        ),
    ];
    assert_eq!(
        parsed_back(&planted).len(),
        1,
        "{:?}",
        parsed_back(&planted)
    );
}

/// Ways to read a framework fact by its key name instead of its
/// `chunk::facts::Fact` variant.
const FACT_KEY_READS: &[&str] = &[
    ".meta.get(",
    ".meta[",
    ".meta.contains_key(",
    ".meta.insert(",
];

/// Non-test code outside `chunk/facts.rs` (where keys are read, once) that
/// reads or writes a chunk's facts by key name.
fn facts_by_key(files: &[(String, String)]) -> Vec<String> {
    let skip = |rel: &str| rel == "chunk/facts.rs" || rel == "architecture_tests.rs";
    non_test_code_with(files, skip, FACT_KEY_READS, "uses facts by key:")
}

#[test]
fn facts_are_used_through_their_types() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = facts_by_key(&sources(&src));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let planted = [(
        "lexical.rs".to_string(),
        r#"if let Some(k) = c.meta.get("kind") {}"#.to_string(),
    )];
    assert_eq!(facts_by_key(&planted).len(), 1);
}

/// Lines of a source file before its test module, at most: past it a file
/// is split by what its parts own (each file says what it owns in its
/// `//!` line, STYLE.md § Habits).
const MAX_FILE_LINES: usize = 700;

#[test]
fn no_source_file_is_over_the_line_limit() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = Vec::new();
    for (rel, _) in sources(&src) {
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if name == "tests.rs" || rel == "architecture_tests.rs" {
            continue;
        }
        let text = std::fs::read_to_string(src.join(&rel)).unwrap();
        let lines = text
            .lines()
            .take_while(|l| !l.starts_with("#[cfg(test)]"))
            .count();
        if lines > MAX_FILE_LINES {
            long.push(format!("{rel}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FILE_LINES} lines before the tests: {long:?}"
    );
}
