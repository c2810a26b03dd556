//! Index-backed tools: semantic_search and sync_index. Every reply states
//! how ready the index is.

use std::fmt::Write;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CodeIntel, Shared, blocking, failure, success};
use crate::index::{self, Readiness, SyncReport};
use crate::rank::{self, QueryPlan, ScoreParts};
use crate::relevance::CALIBRATED;
use crate::session::ToolClass;
use crate::store::{ForestHit, MapHit, Store, sql_str};

/// The Lance SQL filter for a scope (`path`: repo-relative file or
/// directory, `language`); `None` when neither is given.
///
/// # Errors
/// A path outside the repository.
fn chunk_filter(shared: &Shared, scope: &ChunkScope) -> Result<Option<String>, String> {
    let mut filters = Vec::new();
    if let Some(path) = scope.path.as_deref().filter(|s| !s.is_empty()) {
        let abs = shared.repo.resolve(path).map_err(|e| e.to_string())?;
        let rel = shared.repo.rel(&abs);
        if abs.is_dir() {
            if !rel.is_empty() {
                filters.push(format!(
                    "starts_with(file, {})",
                    sql_str(&format!("{rel}/"))
                ));
            }
        } else {
            filters.push(format!("file = {}", sql_str(&rel)));
        }
    }
    if let Some(lang) = &scope.language {
        filters.push(format!("language = {}", sql_str(&lang.to_lowercase())));
    }
    Ok((!filters.is_empty()).then(|| filters.join(" AND ")))
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
    /// Lance SQL filter of the scope.
    filter: Option<String>,
    store: Arc<Store>,
    /// The query's embedding (E5 `query:` prefix).
    vector: Vec<f32>,
    /// Readiness as of the moment of the search: a sync that completes while
    /// it runs must not make partial results look complete.
    readiness: Readiness,
}

/// Scope filter, store, query embedding and readiness; `Err` holds the
/// reply to return (bad path, model still loading, unreadable index).
async fn search_inputs(
    shared: &Shared,
    query: &str,
    scope: &ChunkScope,
) -> Result<SearchInputs, Result<CallToolResult, ErrorData>> {
    let filter = chunk_filter(shared, scope).map_err(failure)?;
    let embedder = shared.embedder().map_err(|r| Ok(*r))?;
    let store = shared.store(false).await.map_err(failure)?;
    let query = query.to_string();
    let vector = blocking(move || embedder.embed_query(&query))
        .await
        .map_err(Err)?
        .map_err(failure)?;
    let readiness = index::readiness(&shared.repo, &shared.progress, &shared.config);
    Ok(SearchInputs {
        filter,
        store,
        vector,
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
    /// Only chunks of this language (python, php, javascript, typescript, vue, blade, css, scss, html, go, java, rust, json, text).
    #[serde(default)]
    pub language: Option<String>,
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
    /// Session to gate this call and record it as evidence (from start_session); omit for an ungated call.
    #[serde(default)]
    pub session_id: Option<String>,
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
    /// Results returned at most, 1-50. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
    #[serde(flatten)]
    pub scope: ChunkScope,
    /// Session to gate this call (it counts as a forest search: allowed in SEMANTIC) and record it as evidence; omit for the ungated one-shot context before a session.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// One hybrid-ranked chunk with why it ranked.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RankedChunk {
    #[serde(flatten)]
    pub chunk: ForestHit,
    /// The score parts; `why.score` is the hybrid score the list is sorted by.
    pub why: ScoreParts,
}

/// Result of `query`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct QueryResult {
    /// What the router saw and which tools it recommends.
    pub plan: QueryPlan,
    /// Chunks, best first, by the hybrid score (SPEC §4).
    pub results: Vec<RankedChunk>,
    pub index: Readiness,
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
    ) -> Result<CallToolResult, ErrorData> {
        let session = p.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = if p.collection == Collection::Map {
            ToolClass::Map
        } else {
            ToolClass::Forest
        };
        self.shared
            .gated(session, "semantic_search", class, params, async move {
                if p.query.trim().is_empty() {
                    return failure("query is empty: describe the code you are looking for");
                }
                if !(1..=100).contains(&p.limit) {
                    return failure("limit must be 1-100");
                }
                let SearchInputs {
                    filter,
                    store,
                    vector,
                    readiness,
                } = match search_inputs(&self.shared, &p.query, &p.scope).await {
                    Ok(i) => i,
                    Err(r) => return r,
                };
                // Map first (SPEC §5): an agreement above the calibrated
                // threshold short-circuits `auto`; forest is not searched then.
                let map_results = if p.collection == Collection::Forest {
                    Vec::new()
                } else {
                    match store.search_map(&vector, p.limit).await {
                        Ok(r) => r,
                        Err(e) => return failure(e),
                    }
                };
                let short_circuit = p.collection == Collection::Auto
                    && map_results
                        .first()
                        .is_some_and(|h| h.score >= CALIBRATED.map_short_circuit);
                let results = if p.collection == Collection::Map || short_circuit {
                    Vec::new()
                } else {
                    match store
                        .search_forest(&vector, p.limit, filter.as_deref())
                        .await
                    {
                        Ok(r) => r,
                        Err(e) => return failure(e),
                    }
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
                        "[{:.3}] {}:{}-{} {} {}  {}",
                        h.score,
                        h.file,
                        h.start_line,
                        h.end_line,
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

    /// One-shot context for a request: the router's plan (identifiers, keywords incl. Japanese→English glossary, framework kinds hinted, slots, recommended tools) and hybrid-ranked chunks (vector + keyword + definition + references + framework kind) with file, 1-based lines, symbol, FQCN, framework metadata, related symbols and the score parts. Call it first.
    #[tool(
        annotations(title = "Query (plan + hybrid search)", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<QueryResult>()
    )]
    async fn query(
        &self,
        Parameters(p): Parameters<QueryParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let session = p.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        self.shared
            .gated(session, "query", ToolClass::Forest, params, async move {
                if p.query.trim().is_empty() {
                    return failure("query is empty: describe what you want to change or find");
                }
                if !(1..=50).contains(&p.limit) {
                    return failure("limit must be 1-50");
                }
                let shared = Arc::clone(&self.shared);
                let SearchInputs {
                    filter,
                    store,
                    vector,
                    readiness,
                } = match search_inputs(&shared, &p.query, &p.scope).await {
                    Ok(i) => i,
                    Err(r) => return r,
                };
                let plan = rank::plan(&p.query);
                let (sh, pl) = (Arc::clone(&shared), plan.clone());
                let files =
                    match blocking(move || rank::keyword_files(&sh.repo, &sh.config, &pl)).await? {
                        Ok(f) => f,
                        Err(e) => return failure(e),
                    };
                let candidates =
                    match rank::candidates(&store, &vector, &files, p.limit, filter.as_deref())
                        .await
                    {
                        Ok(c) => c,
                        Err(e) => return failure(e),
                    };
                let names: std::collections::HashSet<String> =
                    candidates.iter().map(|c| c.name.clone()).collect();
                let sh = Arc::clone(&shared);
                let refs = match blocking(move || {
                    rank::reference_counts(&sh.repo, &sh.config, &sh.symbols, &names)
                })
                .await?
                {
                    Ok(r) => r,
                    Err(e) => return failure(e),
                };
                let mut ranked =
                    rank::rank(&plan, candidates, &refs, &shared.config.hybrid_weights);
                ranked.truncate(p.limit);
                let results: Vec<RankedChunk> = ranked
                    .into_iter()
                    .map(|(chunk, why)| RankedChunk { chunk, why })
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
                let top: Vec<String> = results
                    .iter()
                    .take(3)
                    .map(|r| format!("{}:{}", r.chunk.file, r.chunk.start_line))
                    .collect();
                let _ = shared.sessions.log(
                    "decisions",
                    &serde_json::json!({
                        "tool": "query",
                        "timestamp": crate::index::now_secs(),
                        "query": p.query,
                        "session_id": p.session_id,
                        "keywords": plan.keywords,
                        "kind_hints": plan.kind_hints,
                        "missing_slots": missing,
                        "tools_planned": plan.recommended_tools,
                        "top": top,
                    }),
                );
                let mut s = format!("{}\n", readiness.message);
                let _ = writeln!(
                    s,
                    "plan: keywords [{}]{}{}; next: {} ({})",
                    plan.keywords.join(", "),
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
                    plan.reasoning
                );
                if results.is_empty() {
                    let _ = writeln!(s, "{}", no_results(&readiness));
                }
                for r in &results {
                    let (h, w) = (&r.chunk, &r.why);
                    let _ = writeln!(
                        s,
                        "[{:.3}] {}:{}-{} {} {}  (cosine {:.3}, keywords {} [{}]{}{}, refs {})",
                        w.score,
                        h.file,
                        h.start_line,
                        h.end_line,
                        h.kind,
                        h.fqcn.as_deref().unwrap_or(&h.name),
                        w.cosine,
                        w.keyword_hits,
                        w.matched_keywords.join(", "),
                        if w.definition { ", definition" } else { "" },
                        if w.kind_hinted { ", kind" } else { "" },
                        w.references
                    );
                    if !h.related.is_empty() {
                        let _ = writeln!(s, "    related: {}", h.related.join(", "));
                    }
                }
                success(
                    &QueryResult {
                        plan,
                        results,
                        index: readiness,
                    },
                    s,
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
    ) -> Result<CallToolResult, ErrorData> {
        let shared = &self.shared;
        let embedder = match shared.embedder() {
            Ok(e) => e,
            Err(r) => return Ok(*r),
        };
        let store = match shared.store(p.force).await {
            Ok(s) => s,
            Err(e) => return failure(e),
        };
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
                failure(format!("a sync is already running: {}", readiness.message))
            }
            Err(e) => failure(e),
        }
    }
}
