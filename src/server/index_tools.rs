//! Index-backed tools: semantic_search and sync_index. Every reply states
//! how ready the index is.

use std::fmt::Write;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CodeIntel, SessionGate, Shared, ToolError, blocking, success};
use crate::classify::FileClass;
use crate::index::{self, Readiness, SyncReport};
use crate::rank::{self, QueryPlan, RankedFile};
use crate::relevance::CALIBRATED;
use crate::session::ToolClass;
use crate::store::{ForestHit, MapHit, Scope, Store};

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

/// Which table `semantic_search` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Collection {
    /// Code chunks.
    Forest,
    /// Agreements learned from past successful sessions.
    Map,
    /// Both: map hits first, then code chunks (default).
    #[default]
    Auto,
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
    let readiness = index::readiness(&shared.repo, &shared.progress, &shared.config);
    Ok(SearchInputs {
        scope,
        store,
        embedder,
        readiness,
    })
}

/// The line that says a search found nothing, and why it may have.
fn no_results(readiness: &Readiness) -> &'static str {
    if readiness.state == "ready" {
        "no results"
    } else {
        "no results yet: the index is not complete"
    }
}

/// Which chunks a search may return (`semantic_search`, `query`).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ChunkScope {
    /// Only chunks under this repo-relative directory or file.
    #[serde(default)]
    pub path: Option<String>,
    /// Only chunks of this language (php, python, typescript, …; `text` for files chunked in line windows).
    #[serde(default)]
    pub language: Option<String>,
    /// Only files of these classes: source, test, docs, example, config, generated, vendored, lock. Default: all (source ranked first).
    #[serde(default)]
    pub kinds: Vec<String>,
}

/// Parameters of `semantic_search`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SemanticSearchParams {
    /// What the code does, in natural language (Japanese or English), e.g. 「ログイン処理」 or "validate the password on login".
    pub query: String,
    /// `forest` (code chunks), `map` (learned agreements) or `auto` (both; default).
    #[serde(default)]
    pub collection: Collection,
    /// Results returned at most, 1-100. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(flatten)]
    pub scope: ChunkScope,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `sync_index`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SyncIndexParams {
    /// Re-chunk and re-embed every file instead of only changed ones. Default false.
    #[serde(default)]
    pub force: bool,
}

/// Result of `semantic_search`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SemanticResult {
    /// Code chunks, best first; `score` is cosine similarity in [-1, 1].
    pub results: Vec<ForestHit>,
    /// Agreements from `map`, best first (empty until sessions record outcomes).
    pub map_results: Vec<MapHit>,
    /// `auto` stopped at a map agreement scoring at least the calibrated
    /// `map_short_circuit` threshold; forest was not searched.
    pub short_circuit: bool,
    pub index: Readiness,
}

/// Parameters of `query`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct QueryParams {
    /// The request in natural language (Japanese or English), e.g. 「商品のフォームに在庫数フィールドを追加」 or "where are orders stored?".
    pub query: String,
    /// Files returned at most, 1-50. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Best chunks returned per file, 1-5. Default 2.
    #[serde(default = "default_chunks_per_file")]
    pub chunks_per_file: usize,
    #[serde(flatten)]
    pub scope: ChunkScope,
    #[serde(flatten)]
    pub gate: SessionGate,
}

fn default_chunks_per_file() -> usize {
    2
}

/// Result of `query`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct QueryResult {
    /// What the router saw (keywords, Japanese terms and their English words) and which tools it recommends.
    pub plan: QueryPlan,
    /// Files, best first, by the fused score, each with its class, why it ranked and its best chunks.
    pub files: Vec<RankedFile>,
    /// File classes the request asks for (not ranked below source).
    pub requested_kinds: Vec<FileClass>,
    pub index: Readiness,
    /// Milliseconds spent.
    pub timings: rank::Timings,
}

/// Result of `sync_index`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SyncResult {
    pub report: SyncReport,
    pub index: Readiness,
}

#[tool_router(router = index_router, vis = "pub(super)")]
impl CodeIntel {
    /// Finds code by meaning with multilingual-e5-small embeddings over AST chunks (functions, methods, classes, CSS rules, HTML sections, Laravel migrations / Filament forms, tables and actions, Blade sections). Queries may be Japanese or English. Results carry file, 1-based lines, symbol, FQCN, framework metadata (`meta`), related symbols, score and the index's readiness.
    #[tool(
        annotations(title = "Semantic search", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SemanticResult>()
    )]
    async fn semantic_search(
        &self,
        Parameters(p): Parameters<SemanticSearchParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = if p.collection == Collection::Map {
            ToolClass::Map
        } else {
            ToolClass::Forest
        };
        self.shared
            .gated(session, "semantic_search", class, params, async move {
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
                let query = p.query.clone();
                let vector = blocking(move || embedder.embed_query(&query)).await??;
                // Map first (docs/sessions.md): an agreement above the calibrated
                // threshold short-circuits `auto`; forest is not searched then.
                let map_results = if p.collection == Collection::Forest {
                    Vec::new()
                } else {
                    store.search_map(&vector, p.limit).await?
                };
                let short_circuit = p.collection == Collection::Auto
                    && map_results
                        .first()
                        .is_some_and(|h| h.score >= CALIBRATED.map_short_circuit);
                let results = if p.collection == Collection::Map || short_circuit {
                    Vec::new()
                } else {
                    store.search_forest(&vector, p.limit, &scope).await?
                };
                let mut s = format!("{}\n", readiness.message);
                if results.is_empty() && map_results.is_empty() {
                    let _ = writeln!(s, "{}", no_results(&readiness));
                }
                for h in &map_results {
                    let _ = writeln!(
                        s,
                        "[map {:.3}] {} → {} {}",
                        h.score, h.query, h.symbols, h.files
                    );
                }
                for h in &results {
                    let _ = writeln!(
                        s,
                        "[{:.3}] {}:{}-{} [{}] {} {}  {}",
                        h.score,
                        h.file,
                        h.start_line,
                        h.end_line,
                        h.class.name(),
                        h.kind,
                        h.fqcn.as_deref().unwrap_or(&h.name),
                        h.signature
                    );
                }
                success(
                    &SemanticResult {
                        results,
                        map_results,
                        short_circuit,
                        index: readiness,
                    },
                    s,
                )
            })
            .await
    }

    /// One-shot context for a request, to call first: the files a change most likely touches, best first, each with its class (source, test, docs, config, …), why it ranked (BM25 over paths, names and content, e5 vector, names, framework kind) and its best chunks with code and framework facts; plus the plan (keywords, Japanese terms and their English words, recommended tools). Japanese or English.
    #[tool(
        annotations(title = "Query (plan + hybrid search)", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<QueryResult>()
    )]
    async fn query(
        &self,
        Parameters(p): Parameters<QueryParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        self.shared
            .gated(session, "query", ToolClass::Forest, params, async move {
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
                let shared = Arc::clone(&self.shared);
                let SearchInputs {
                    scope,
                    store,
                    embedder,
                    readiness,
                } = search_inputs(&shared, &p.scope).await?;
                let req = rank::Request {
                    query: p.query.clone(),
                    limit: p.limit,
                    chunks_per_file: p.chunks_per_file,
                    scope,
                };
                let outcome = shared
                    .ranker
                    .run(&store, embedder, &shared.config.hybrid_weights, &req, false)
                    .await?;
                let plan = &outcome.plan;
                let top: Vec<&str> = outcome
                    .files
                    .iter()
                    .take(3)
                    .map(|f| f.file.as_str())
                    .collect();
                let missing: Vec<&str> = [
                    "target_feature",
                    "desired_action",
                    "observed_issue",
                    "trigger_condition",
                ]
                .into_iter()
                .filter(|s| !plan.slots.contains_key(*s))
                .collect();
                let _ = shared.sessions.log(
                    "decisions",
                    &serde_json::json!({
                        "tool": "query",
                        "timestamp": crate::util::now_secs(),
                        "query": p.query,
                        "session_id": p.gate.session_id,
                        "keywords": plan.keywords,
                        "translated": plan.translated,
                        "kind_hints": plan.kind_hints,
                        "missing_slots": missing,
                        "tools_planned": plan.recommended_tools,
                        "top": top,
                        "ms": outcome.timings.total_ms,
                    }),
                );
                let text = query_text(&outcome, &readiness);
                success(
                    &QueryResult {
                        plan: outcome.plan,
                        files: outcome.files,
                        requested_kinds: outcome.requested_classes,
                        index: readiness,
                        timings: outcome.timings,
                    },
                    text,
                )
            })
            .await
    }

    /// Brings the semantic index up to date: re-chunks added and modified files, re-embeds only changed chunks, drops deleted files. Reports counts and seconds.
    #[tool(
        annotations(title = "Sync index", read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SyncResult>()
    )]
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
            &shared.progress,
        )
        .await
        {
            Ok(report) => {
                let readiness = index::readiness(&shared.repo, &shared.progress, &shared.config);
                let text = format!("synced: {report}; {}", readiness.message);
                success(
                    &SyncResult {
                        report,
                        index: readiness,
                    },
                    text,
                )
            }
            Err(crate::index::IndexError::Busy) => {
                let readiness = index::readiness(&shared.repo, &shared.progress, &shared.config);
                Err(ToolError::failed(format!(
                    "a sync is already running: {}",
                    readiness.message
                )))
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The text reply of `query`: readiness, the plan in one line, then per
/// file its class, score, the reasons that count, and its best chunks'
/// locations and signatures.
fn query_text(o: &rank::Outcome, readiness: &Readiness) -> String {
    let plan = &o.plan;
    let mut s = format!("{}\n", readiness.message);
    let translated: Vec<String> = plan
        .translated
        .iter()
        .map(|t| {
            let words: Vec<&str> = t.words.iter().map(|(w, _)| w.as_str()).collect();
            format!("{}→{}", t.term, words.join("/"))
        })
        .collect();
    let _ = writeln!(
        s,
        "plan: keywords [{}]{}{}{}; next: {}",
        plan.keywords.join(", "),
        if translated.is_empty() {
            String::new()
        } else {
            format!("; translated {}", translated.join(", "))
        },
        if plan.identifiers.is_empty() {
            String::new()
        } else {
            format!("; identifiers [{}]", plan.identifiers.join(", "))
        },
        if plan.kind_hints.is_empty() {
            String::new()
        } else {
            format!("; kinds [{}]", plan.kind_hints.join(", "))
        },
        plan.recommended_tools.join(", "),
    );
    if o.files.is_empty() {
        let _ = writeln!(s, "{}", no_results(readiness));
    }
    for (i, f) in o.files.iter().enumerate() {
        let w = &f.why.features;
        let mut reasons = Vec::new();
        for (name, v) in [
            ("keyword", w.keyword),
            ("chunk", w.chunk_keyword),
            ("vector", w.vector),
            ("path", w.path),
            ("definition", w.definition),
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
        let _ = writeln!(
            s,
            "{}. {} [{}] {:.3} ({})",
            i + 1,
            f.file,
            f.class.name(),
            f.score,
            reasons.join(", ")
        );
        for c in &f.chunks {
            let _ = writeln!(
                s,
                "   {}-{} {} {}  {}",
                c.start_line,
                c.end_line,
                c.kind,
                c.fqcn.as_deref().unwrap_or(&c.name),
                c.signature.lines().next().unwrap_or("")
            );
            if !c.related.is_empty() {
                let _ = writeln!(s, "     related: {}", c.related.join(", "));
            }
        }
    }
    s
}
