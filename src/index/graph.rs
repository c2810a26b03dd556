//! The code graph of the index: the facts of every indexed file resolved
//! into edges, with the co-change history; rebuilt only when
//! `sync_state.json` or `cochange.json` changed since it was built.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use super::SyncState;
use crate::graph::cochange::CoChange;
use crate::graph::{FileFacts, Graph};
use crate::repo::Repo;
use crate::util::FileStamp;

/// The graph and history of one repository, as of its stamps.
#[derive(Debug, Default)]
pub struct CodeGraph {
    pub graph: Graph,
    pub history: CoChange,
}

impl CodeGraph {
    /// Builds the graph from the stored state and history of `repo`.
    pub fn load(repo: &Repo) -> CodeGraph {
        let state = SyncState::load(repo);
        let facts: BTreeMap<String, FileFacts> = state
            .files
            .iter()
            .map(|(f, s)| (f.clone(), s.facts.clone()))
            .collect();
        let files: BTreeSet<String> = state
            .files
            .keys()
            .chain(state.skipped.keys())
            .cloned()
            .collect();
        CodeGraph {
            graph: Graph::build(&facts, &files),
            history: CoChange::load(&repo.state_dir()),
        }
    }
}

type Stamps = (Option<FileStamp>, Option<FileStamp>);

/// The last [`CodeGraph`] built, with the stamps of the files it was built
/// from.
#[derive(Debug, Default)]
pub struct GraphCache {
    cached: Mutex<Option<(Stamps, Arc<CodeGraph>)>>,
}

impl GraphCache {
    /// The repository's graph, rebuilt when its files changed.
    pub fn get(&self, repo: &Repo) -> Arc<CodeGraph> {
        let stamps = (
            FileStamp::of(&SyncState::path(repo)),
            FileStamp::of(&repo.state_dir().join("cochange.json")),
        );
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, g)) = cached.as_ref()
            && *s == stamps
        {
            return Arc::clone(g);
        }
        let g = Arc::new(CodeGraph::load(repo));
        *cached = Some((stamps, Arc::clone(&g)));
        g
    }
}

/// The files a change starts from: `files` (repo-relative, confined to the
/// repository) and the files defining `symbol` (plain or qualified),
/// sorted and unique.
///
/// # Errors
/// A path outside the repository, withheld or a directory; a symbol
/// without a definition (message says how to check).
pub fn seeds(
    repo: &Repo,
    config: &crate::config::Config,
    symbols: &crate::search::symbols::SymbolCache,
    files: &[String],
    symbol: Option<&str>,
) -> Result<Vec<String>, String> {
    let mut seeds = Vec::new();
    for f in files {
        let abs = repo.resolve(f).map_err(|e| e.to_string())?;
        if abs.is_dir() {
            return Err(format!("`{f}` is a directory: give files"));
        }
        seeds.push(repo.rel(&abs));
    }
    if let Some(symbol) = symbol.filter(|s| !s.trim().is_empty()) {
        let (qualifier, name) = crate::search::symbols::split_qualified(symbol);
        let root = repo.root().to_path_buf();
        let parsed = symbols
            .scan(repo, config, &root, None)
            .map_err(|e| e.to_string())?;
        let before = seeds.len();
        seeds.extend(
            parsed
                .iter()
                .filter(|(f, s)| {
                    s.definitions.iter().any(|d| {
                        d.name == name
                            && qualifier.as_deref().is_none_or(|q| {
                                crate::search::symbols::qualifier_matches_in(q, f, d)
                            })
                    })
                })
                .map(|(f, _)| f.clone()),
        );
        if seeds.len() == before {
            return Err(format!(
                "no definition of `{symbol}`: check the name with find_definitions"
            ));
        }
    }
    seeds.sort();
    seeds.dedup();
    Ok(seeds)
}

/// The requests (a script's `http.post(…)`, a view's form or link) that
/// reach the controller action `name` of `class` (a short or qualified
/// name; `namespace` as `find_references` reads it from the symbol) through
/// its route: repo-relative file and 1-based line each
/// ([`crate::graph::Graph::requests_of`]).
pub fn action_requests(
    graph: &CodeGraph,
    class: &str,
    namespace: Option<&str>,
    name: &str,
) -> Vec<(String, u64)> {
    let fq = match namespace {
        Some(ns) => format!("{ns}\\{class}"),
        None => class.to_string(),
    };
    graph
        .graph
        .requests_of(&fq, name)
        .into_iter()
        .map(|r| (r.file.clone(), u64::from(r.line)))
        .collect()
}

/// The uses of the class `class` (a FQCN, or a class name that ends one:
/// [`crate::graph::Graph::class_files`]) by a name other than its own: the
/// views that embed a component by its tag (a Livewire component's
/// `<livewire:home.feed />` / `@livewire('home.feed')`, a Blade
/// component's `<x-user-card />`), and the code that runs an Artisan
/// command by its name (`$this->artisan('links:check')`, a schedule's
/// `->command(…)`), none of which spell the class's name, as (file, 1-based
/// line, `livewire`, `component` or `command`): the first such line of
/// each file (the graph keeps one edge per pair).
pub fn uses_by_name(graph: &CodeGraph, class: &str) -> Vec<(String, u64, &'static str)> {
    use crate::graph::EdgeKind;
    let by_name = |k: EdgeKind| {
        matches!(
            k,
            EdgeKind::Component | EdgeKind::Livewire | EdgeKind::Command
        )
    };
    inn_uses(graph, &graph.graph.class_files(class), by_name)
}

/// The parents, interfaces and traits of `class` (qualified or not) that
/// the repository does not define (a package's, the framework's), sorted:
/// what calls a method the class overrides, and `find_references` does
/// not search. None unless exactly one file defines the class, or when it
/// cannot be read.
pub fn outside_parents(repo: &crate::repo::Repo, graph: &CodeGraph, class: &str) -> Vec<String> {
    let [file] = graph.graph.class_files(class)[..] else {
        return Vec::new();
    };
    let Some(text) = repo
        .resolve(file)
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = crate::graph::facts::extract(file, &text)
        .refs
        .into_iter()
        .filter(|r| {
            r.kind == crate::graph::RefKind::Extends
                && graph.graph.class_files(&r.target).is_empty()
        })
        .map(|r| r.target)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The uses of the file `file` (repo-relative) as the code graph resolves
/// them: a Blade view rendered or included (`view('…')`, `@include`:
/// `view`) or embedded (`<x-…>`: `component`), a config file read
/// (`config('app.name')`: `config`), a translation file (`trans`), a
/// module imported (`import`), …, as (file, 1-based line, the edge's kind):
/// the first such line of each file (the graph keeps one edge per pair).
pub fn file_uses(graph: &CodeGraph, file: &str) -> Vec<(String, u64, &'static str)> {
    inn_uses(graph, &[file], |_| true)
}

/// The files whose edges of a kind `keep` accepts reach one of `targets`,
/// at the edge's line (edges without a line left out), sorted.
fn inn_uses(
    graph: &CodeGraph,
    targets: &[&str],
    keep: impl Fn(crate::graph::EdgeKind) -> bool,
) -> Vec<(String, u64, &'static str)> {
    let mut out: Vec<(String, u64, &'static str)> = targets
        .iter()
        .flat_map(|f| graph.graph.inn(f))
        .filter(|e| e.line > 0 && keep(e.kind))
        .map(|e| (e.from.clone(), u64::from(e.line), e.kind.name()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Files related to `seeds` (see [`crate::graph::related`]), best first, at
/// most `limit`; when `symbol` names a method (`Class::method`), the files of
/// its callers as `find_references` resolves them, and of the requests that
/// reach it as a controller action ([`action_requests`]), are added with a
/// `call ← file:line` reason (the caller beside the callee).
pub fn related_files(
    repo: &Repo,
    config: &crate::config::Config,
    symbols: &crate::search::symbols::SymbolCache,
    graph: &CodeGraph,
    seeds: &[String],
    symbol: Option<&str>,
    limit: usize,
) -> Vec<crate::graph::Related> {
    use crate::search::references;
    let wide = crate::graph::related(&graph.graph, Some(&graph.history), seeds, limit.max(50));
    let member = symbol.and_then(|s| {
        let (name, class) = references::target(s)?;
        Some((name, class?, references::namespace(s)))
    });
    let mut callers: Vec<(String, u64)> = Vec::new();
    if let Some((name, class, ns)) = member {
        if let Ok(list) = references::find(
            repo,
            config,
            symbols,
            &name,
            references::Owner::Member {
                class: &class,
                namespace: ns.as_deref(),
            },
            &references::Within::default(),
            MAX_CALLERS,
        ) {
            callers.extend(list.references.into_iter().map(|r| (r.file, r.line)));
        }
        callers.extend(action_requests(graph, &class, ns.as_deref(), &name));
    }
    crate::graph::with_callers(wide, &callers, seeds, limit)
}

/// Uses of a method read for its callers' files (a method called from
/// hundreds of places is a hub; its first callers are enough to say so).
const MAX_CALLERS: usize = 200;
