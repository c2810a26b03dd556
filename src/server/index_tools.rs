//! Index-backed tools: semantic_search and sync_index. Every reply states
//! how ready the index is.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::budget::{Budget, check_max_tokens};
use super::wire::{QueryResult, SemanticResult, SyncResult};
use super::{CodeIntel, Reply, SessionGate, Shared, Shown, ToolError, ToolParams, blocking};
use crate::classify::FileClass;
use crate::index::{self, Readiness};
use crate::learn::{DECISIONS_LOG, DecisionRecord};
use crate::rank::{self, Collection, QueryPlan, RankedFile, SemanticHits};
use crate::session::{CallArgs, Tool, ToolClass};
use crate::store::{Scope, Store};

/// The store scope of a request (`path`: repo-relative file or directory,
/// `language`, `kinds`).
///
/// # Errors
/// A path outside the repository, or an unknown class name.
fn scope_of(shared: &Shared, scope: &ChunkScope) -> Result<Scope, ToolError> {
    let mut out = Scope::default();
    if let Some(path) = scope.path.as_deref().filter(|s| !s.is_empty()) {
        let abs = shared.repo.resolve(path)?;
        let rel = shared.repo.rel(&abs);
        if abs.is_dir() {
            out.dir = Some(rel).filter(|r| !r.is_empty());
        } else {
            out.file = Some(rel);
        }
    }
    out.language = scope.language.as_ref().map(|l| l.to_lowercase());
    for k in &scope.kinds {
        out.classes.push(FileClass::parse(k).ok_or_else(|| {
            ToolError::invalid(format!(
                "unknown kind `{k}`: use one of {}",
                FileClass::ALL.map(FileClass::name).join(", ")
            ))
        })?);
    }
    Ok(out)
}

fn default_limit() -> usize {
    10
}

/// What a search over the index needs, gathered the same way by
/// `semantic_search` and `query`.
struct SearchInputs {
    scope: Scope,
    store: Arc<Store>,
    embedder: Arc<dyn crate::embed::Embedder>,
    /// Readiness as of the moment of the search: a sync that completes while
    /// it runs must not make partial results look complete.
    readiness: Readiness,
}

/// Scope, store, embedder and readiness.
///
/// # Errors
/// A bad path or kind, the model still loading or unavailable, an
/// unreadable index.
async fn search_inputs(shared: &Shared, scope: &ChunkScope) -> Result<SearchInputs, ToolError> {
    let scope = scope_of(shared, scope)?;
    let embedder = shared.embedder()?;
    let store = shared.store(false).await?;
    let readiness = shared.readiness();
    Ok(SearchInputs {
        scope,
        store,
        embedder,
        readiness,
    })
}

/// The line that says a search found nothing, and why it may have.
fn no_results(readiness: &Readiness) -> &'static str {
    if readiness.state == index::IndexState::Ready {
        "no results"
    } else {
        "no results yet: the index is not complete"
    }
}

/// Which chunks a search may return (`semantic_search`, `query`).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ChunkScope {
    /// Only under this repo-relative directory or file.
    #[serde(default)]
    pub path: Option<String>,
    /// Only this language (php, python, …; `text`: line-window chunks).
    #[serde(default)]
    pub language: Option<String>,
    /// Only these file classes (source, test, docs, config, l10n, …).
    #[serde(default)]
    pub kinds: Vec<String>,
}

/// Parameters of `semantic_search`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SemanticSearchParams {
    /// What the code does, Japanese or English, e.g. 「ログイン処理」.
    pub query: String,
    /// forest (code), map (past agreements) or auto (both; default).
    #[serde(default)]
    pub collection: Collection,
    /// 1-100. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(flatten)]
    pub scope: ChunkScope,
    /// Reply budget in tokens, 100-20000 (default 1500).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `sync_index`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SyncIndexParams {
    /// Re-embed every file, not only changed ones. Default false.
    #[serde(default)]
    pub force: bool,
}

/// Parameters of `query`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct QueryParams {
    /// The request, Japanese or English, e.g. 「商品のフォームに在庫数フィールドを追加」.
    pub query: String,
    /// Files, 1-50. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Chunks per file, 1-5. Default 2.
    #[serde(default = "default_chunks_per_file")]
    pub chunks_per_file: usize,
    /// Reply budget in tokens, 100-20000 (default 1200).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub scope: ChunkScope,
    #[serde(flatten)]
    pub gate: SessionGate,
}

fn default_chunks_per_file() -> usize {
    2
}

impl ToolParams for SemanticSearchParams {
    const TOOL: Tool = Tool::SemanticSearch;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    /// Map only is allowed where forest is not (docs/sessions.md § Gate).
    fn class(&self) -> ToolClass {
        if self.collection == Collection::Map {
            ToolClass::Map
        } else {
            ToolClass::Forest
        }
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            query: Some(self.query.clone()),
            path: self.scope.path.clone(),
            ..CallArgs::default()
        }
    }
}

impl ToolParams for QueryParams {
    const TOOL: Tool = Tool::Query;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn class(&self) -> ToolClass {
        ToolClass::Forest
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            query: Some(self.query.clone()),
            path: self.scope.path.clone(),
            ..CallArgs::default()
        }
    }
}

impl CodeIntel {
    /// `semantic_search`'s reply: map agreements and code chunks (locations
    /// only: the code is not returned, so nothing counts as read).
    pub(in crate::server) async fn semantic_search_reply(
        &self,
        p: SemanticSearchParams,
    ) -> Result<Reply<SemanticResult>, ToolError> {
        let max_tokens = check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
        if p.query.trim().is_empty() {
            return Err(ToolError::invalid(
                "query is empty: describe the code you are looking for",
            ));
        }
        if !(1..=100).contains(&p.limit) {
            return Err(ToolError::invalid("limit must be 1-100"));
        }
        let SearchInputs {
            scope,
            store,
            embedder,
            readiness,
        } = search_inputs(&self.shared, &p.scope).await?;
        let SemanticHits {
            mut results,
            mut map_results,
            short_circuit,
        } = rank::semantic_search(&store, embedder, &p.query, p.collection, p.limit, &scope)
            .await?;
        let mut b = Budget::new(max_tokens);
        b.force(&format!("{}\n", readiness.message));
        if results.is_empty() && map_results.is_empty() {
            b.force(&format!("{}\n", no_results(&readiness)));
        }
        let shown = b.push_each(&map_results, |h| {
            format!(
                "[map {:.3}] {} → {} {}\n",
                h.score, h.query, h.symbols, h.files
            )
        });
        map_results.truncate(shown);
        let shown = b.push_each(&results, |h| {
            format!(
                "[{:.3}] {}:{}-{} [{}] {} {}  {}\n",
                h.score,
                h.file,
                h.start_line,
                h.end_line,
                h.class.name(),
                h.kind,
                h.fqcn.as_deref().unwrap_or(&h.name),
                h.signature.lines().next().unwrap_or("")
            )
        });
        results.truncate(shown);
        // The text shows no code: neither does the structured result
        // (read it with read_file or get_function_at_line).
        let mut seen = Shown::default();
        for h in &mut results {
            h.content.clear();
            seen.name(&h.file);
        }
        let text =
            b.finish("… cut to fit max_tokens: lower limit, narrow with path, or raise max_tokens");
        let value = SemanticResult {
            results,
            map_results,
            short_circuit,
            index: readiness,
        };
        Ok(Reply::new(value, text).with_shown(seen))
    }

    /// `query`'s reply: the plan and the ranked files within `max_tokens`;
    /// the lines of code it shows count as read.
    pub(in crate::server) async fn query_reply(
        &self,
        p: QueryParams,
    ) -> Result<Reply<QueryResult>, ToolError> {
        let max_tokens =
            check_max_tokens(p.max_tokens, QUERY_MAX_TOKENS).map_err(ToolError::invalid)?;
        if p.query.trim().is_empty() {
            return Err(ToolError::invalid(
                "query is empty: describe what you want to change or find",
            ));
        }
        if !(1..=50).contains(&p.limit) || !(1..=5).contains(&p.chunks_per_file) {
            return Err(ToolError::invalid(
                "limit must be 1-50 and chunks_per_file 1-5",
            ));
        }
        let shared = &self.shared;
        let SearchInputs {
            scope,
            store,
            embedder,
            readiness,
        } = search_inputs(shared, &p.scope).await?;
        let req = rank::Request {
            query: p.query.clone(),
            limit: p.limit,
            chunks_per_file: p.chunks_per_file,
            scope,
        };
        let g = Arc::clone(shared);
        let graph = blocking(move || g.graph.get(&g.repo)).await?;
        let ranking = shared
            .ranker
            .run(
                &store,
                embedder,
                &shared.config.hybrid_weights,
                &req,
                Some(&graph),
                false,
            )
            .await?;
        let record = DecisionRecord::query(&p.query, p.gate.session_id.clone(), &ranking);
        if let Err(e) = shared.sessions.log(DECISIONS_LOG, &record) {
            tracing::warn!("cannot log the decision: {e}");
        }
        let also_check = also_check(&graph, &ranking.files);
        let mut result = QueryResult {
            plan: ranking.plan,
            files: ranking.files,
            also_check,
            requested_kinds: ranking.requested_classes,
            index: readiness,
            timings: ranking.timings,
        };
        let (text, shown) = query_text(&mut result, max_tokens);
        Ok(Reply::new(result, text).with_shown(shown))
    }
}

#[tool_router(router = index_router, vis = "pub(super)")]
impl CodeIntel {
    /// Code by meaning (multilingual-e5-small over AST and framework chunks), Japanese or English: file, 1-based lines, symbol, score. No code: read it with read_file.
    #[tool(annotations(
        title = "Semantic search",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn semantic_search(
        &self,
        Parameters(p): Parameters<SemanticSearchParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared
            .gated(p.call(), self.semantic_search_reply(p))
            .await
    }

    /// Call first: the files a request most likely touches, best first (BM25 + e5 + names + framework facts, fitted), with class, why, and the best chunks' code and framework facts. Japanese or English.
    #[tool(annotations(
        title = "Query (plan + hybrid search)",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn query(
        &self,
        Parameters(p): Parameters<QueryParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared.gated(p.call(), self.query_reply(p)).await
    }

    /// Brings the index up to date (only changed chunks are re-embedded); reports counts and seconds.
    #[tool(annotations(
        title = "Sync index",
        read_only_hint = false,
        destructive_hint = false,
        idempotent_hint = true,
        open_world_hint = false
    ))]
    async fn sync_index(
        &self,
        Parameters(p): Parameters<SyncIndexParams>,
    ) -> Result<CallToolResult, ToolError> {
        let shared = &self.shared;
        let embedder = shared.embedder()?;
        let store = shared.store(p.force).await?;
        match index::sync(
            &shared.repo,
            &shared.config,
            &store,
            &embedder,
            p.force,
            shared.config.embedding_nice,
            &shared.progress,
        )
        .await
        {
            Ok(report) => {
                let readiness = shared.readiness();
                let text = format!("synced: {report}; {}", readiness.message);
                Reply::new(
                    SyncResult {
                        report,
                        index: readiness,
                    },
                    text,
                )
                .into_result()
            }
            Err(crate::index::IndexError::Busy) => Err(ToolError::failed(format!(
                "a sync is already running: {}",
                shared.readiness().message
            ))),
            Err(e) => Err(e.into()),
        }
    }
}

/// Default budget of a `query` reply, in estimated tokens: room for the plan,
/// ten files with why they ranked and the code of the best three. Chosen on
/// bench/agent_tasks.py, where an orienting `query` plus the reads of a task
/// must stay within 2,500 tokens per task.
const QUERY_MAX_TOKENS: usize = 1200;

/// Files of a `query` reply that show code; the others are listed by name.
const QUERY_CODE_FILES: usize = 3;

/// The text of a `query` reply within `max_tokens`: the plan, the best
/// [`QUERY_CODE_FILES`] files with why they ranked, their chunks' lines,
/// framework facts, related symbols and code, then one line per other file.
/// `o` keeps what the text shows: files that do not fit are dropped, chunks
/// whose code is not shown lose their content; the [`Shown`] names the
/// files kept and the lines of code returned (only those count as read).
fn query_text(o: &mut QueryResult, max_tokens: usize) -> (String, Shown) {
    let plan = &o.plan;
    let readiness = &o.index;
    // The "also check" lines are short and the point of the reply for a
    // change that spans files: their room is kept before the rest is laid out.
    let also: Vec<String> = o
        .also_check
        .iter()
        .enumerate()
        .map(|(i, r)| also_line(i, r))
        .collect();
    let also_cost: usize = also
        .iter()
        .map(|l| super::budget::estimate_tokens(l))
        .sum::<usize>()
        + if also.is_empty() { 0 } else { 12 };
    let mut b = Budget::new(max_tokens.saturating_sub(also_cost).max(100));
    b.force(&format!("{}\n", readiness.message));
    b.force(&plan_line(plan));
    if o.files.is_empty() {
        b.force(&format!("{}\n", no_results(readiness)));
    }
    let layout = Layout::new(&o.files, b.left());
    let mut seen = Shown::default();
    for (i, f) in o.files.iter_mut().enumerate().take(layout.keep) {
        seen.name(&f.file);
        if i >= layout.full {
            b.push(&compact_line(i, f));
            // The structured reply says what the line says: the best
            // chunk's place, no code, facts or signature.
            f.chunks.truncate(1);
            for c in &mut f.chunks {
                c.content.clear();
                c.signature.clear();
                c.meta.clear();
                c.related.clear();
            }
            continue;
        }
        let h = file_lines(i, f);
        b.push(&h[0]);
        for (c, line) in f.chunks.iter_mut().zip(&h[1..]) {
            b.push(line);
            let mut shown = String::new();
            let mut lines = 0;
            let mut left = layout.per_chunk;
            for l in c.content.lines() {
                let l = format!("     | {l}\n");
                let cost = super::budget::estimate_tokens(&l);
                if cost > left || !b.push(&l) {
                    b.push("     | …\n");
                    break;
                }
                left -= cost;
                shown.push_str(&l[7..]);
                lines += 1;
            }
            if !shown.is_empty() {
                let start = c.start_line as usize;
                seen.read(&f.file, start, start + lines - 1);
            }
            c.content = shown;
        }
    }
    if layout.keep < o.files.len() {
        b.truncated = true;
        o.files.truncate(layout.keep);
    }
    if !also.is_empty() {
        b.force("also check (code graph and co-change of the top files):\n");
        for l in &also {
            b.force(l);
        }
    }
    for r in &o.also_check {
        seen.name(&r.file);
    }
    let text = b.finish(
        "… cut to fit max_tokens: read_file the files above, lower limit, or raise max_tokens",
    );
    (text, seen)
}

/// How a `query` reply spends its budget (estimated tokens): every ranked
/// file gets one line first (up to half the room: naming the whole change
/// set matters more than code), then the best [`QUERY_CODE_FILES`] files
/// get their full entry (chunks, facts) while the lines stay within two
/// thirds of the room, and their code shares what is left.
struct Layout {
    /// Files listed (in rank order).
    keep: usize,
    /// Of those, the first `full` show their chunks and code.
    full: usize,
    /// Code tokens per shown chunk.
    per_chunk: usize,
}

impl Layout {
    fn new(files: &[RankedFile], room: usize) -> Layout {
        let cost = |lines: &[String]| -> usize {
            lines
                .iter()
                .map(|l| super::budget::estimate_tokens(l))
                .sum()
        };
        let mut used = 0;
        let mut keep = 0;
        for (i, f) in files.iter().enumerate() {
            let c = super::budget::estimate_tokens(&compact_line(i, f));
            if used + c > room / 2 {
                break;
            }
            used += c;
            keep += 1;
        }
        let mut full = 0;
        for (i, f) in files.iter().enumerate().take(keep.min(QUERY_CODE_FILES)) {
            let extra = cost(&file_lines(i, f))
                .saturating_sub(super::budget::estimate_tokens(&compact_line(i, f)));
            if used + extra > room * 2 / 3 {
                break;
            }
            used += extra;
            full += 1;
        }
        let chunks: usize = files.iter().take(full).map(|f| f.chunks.len()).sum();
        Layout {
            keep,
            full,
            per_chunk: room.saturating_sub(used) / chunks.max(1),
        }
    }
}

/// One "also check" entry of a `query` reply: the file, its class, the
/// kinds of edges that tie it to the top files (`class ←`: it uses one of
/// them) and its co-change confidence; `related_files` gives the lines.
fn also_line(i: usize, r: &crate::graph::Related) -> String {
    let mut why: Vec<String> = Vec::new();
    for e in &r.edges {
        let kind: String = e.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        if !why.contains(&kind) {
            why.push(kind);
        }
    }
    if let Some(c) = r.cochange {
        why.push(format!("co-changed {:.0}%", c * 100.0));
    }
    format!(
        "  {}. {} [{}]: {}\n",
        i + 1,
        r.file,
        r.class.name(),
        why.join(", ")
    )
}

/// Files of a `query` reply's "also check" list at most.
const ALSO_CHECK_FILES: usize = 5;
/// Top files of a `query` reply whose graph neighbours and co-change
/// partners are listed under "also check".
const ALSO_CHECK_SEEDS: usize = 3;
/// A related file is listed under "also check" from this score (one edge
/// of a strong kind, or co-change confidence of a third).
const ALSO_CHECK_MIN_SCORE: f32 = 0.6;

/// What the change set likely needs besides the ranked files: code-graph
/// neighbours and co-change partners of the top files that the ranking
/// left out.
fn also_check(graph: &crate::index::CodeGraph, files: &[RankedFile]) -> Vec<crate::graph::Related> {
    let seeds: Vec<String> = files
        .iter()
        .take(ALSO_CHECK_SEEDS)
        .map(|f| f.file.clone())
        .collect();
    let listed: std::collections::HashSet<&str> = files.iter().map(|f| f.file.as_str()).collect();
    crate::graph::related(&graph.graph, Some(&graph.history), &seeds, 50)
        .into_iter()
        .filter(|r| !listed.contains(r.file.as_str()) && r.score >= ALSO_CHECK_MIN_SCORE)
        .take(ALSO_CHECK_FILES)
        .collect()
}

/// The plan in one line: keywords, Japanese terms with their English
/// words, identifiers, framework kinds.
fn plan_line(plan: &QueryPlan) -> String {
    let translated: Vec<String> = plan
        .translated
        .iter()
        .map(|t| {
            let words: Vec<&str> = t.words.iter().map(|(w, _)| w.as_str()).collect();
            format!("{}→{}", t.term, words.join("/"))
        })
        .collect();
    let part = |label: &str, items: &[String], bracket: bool| {
        if items.is_empty() {
            String::new()
        } else if bracket {
            format!("; {label} [{}]", items.join(", "))
        } else {
            format!("; {label} {}", items.join(", "))
        }
    };
    format!(
        "plan: keywords [{}]{}{}{}\n",
        plan.keywords.join(", "),
        part("translated", &translated, false),
        part("identifiers", &plan.identifiers, true),
        part("kinds", &plan.kind_hints, true),
    )
}

/// The `i`-th file's header line (rank, path, class, why) and one line per
/// chunk (lines, kind, name, signature, framework facts, related symbols).
fn file_lines(i: usize, f: &RankedFile) -> Vec<String> {
    let mut out = vec![format!(
        "{}. {} [{}] ({})\n",
        i + 1,
        f.file,
        f.class.name(),
        reasons(f)
    )];
    for c in &f.chunks {
        let mut line = format!(
            "   {}-{} {} {}  {}\n",
            c.start_line,
            c.end_line,
            c.kind,
            c.fqcn.as_deref().unwrap_or(&c.name),
            c.signature.lines().next().unwrap_or("").trim()
        );
        if !c.meta.is_empty() {
            let facts = serde_json::Value::Object(c.meta.clone()).to_string();
            let facts: String = facts.chars().take(300).collect();
            line.push_str(&format!("     facts: {facts}\n"));
        }
        if !c.related.is_empty() {
            line.push_str(&format!("     related: {}\n", c.related.join(", ")));
        }
        out.push(line);
    }
    out
}

/// The `i`-th file in one line (rank, path, class, its first three reasons,
/// the best chunk's lines and name): files past the code-showing ones, so that
/// a reply within the default budget names every ranked file.
fn compact_line(i: usize, f: &RankedFile) -> String {
    let why = reasons(f);
    let why: Vec<&str> = why.split(", ").take(3).collect();
    let best = f
        .chunks
        .first()
        .map(|c| {
            format!(
                " {}-{} {}",
                c.start_line,
                c.end_line,
                c.fqcn.as_deref().unwrap_or(&c.name)
            )
        })
        .unwrap_or_default();
    format!(
        "{}. {} [{}] ({}){best}\n",
        i + 1,
        f.file,
        f.class.name(),
        why.join(", ")
    )
}

/// Why a file ranked, in words.
fn reasons(f: &RankedFile) -> String {
    let w = &f.why.features;
    let mut reasons = Vec::new();
    for (name, v) in [
        ("keyword", w.keyword),
        ("chunk", w.chunk_keyword),
        ("vector", w.vector),
        ("path", w.path),
        ("definition", w.definition),
        ("graph", w.graph),
        ("co-change", w.cochange),
    ] {
        if v > 0.0 {
            reasons.push(format!("{name} {v:.2}"));
        }
    }
    if w.identifier > 0.0 {
        reasons.push("identifier".into());
    }
    if w.kind > 0.0 {
        reasons.push("kind".into());
    }
    if f.why.class_prior != 0.0 {
        reasons.push(format!("{} prior {:.2}", f.class.name(), f.why.class_prior));
    }
    reasons.join(", ")
}
