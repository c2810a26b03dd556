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
            "learn.rs",
            "learn/log.rs",
            "rank/fusion.rs",
            "rank/mod.rs",
            "rank/plan.rs",
            "rank/semantic.rs",
            "relevance.rs",
            "search/references/mod.rs",
            "search/text.rs",
            "session/model.rs",
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
