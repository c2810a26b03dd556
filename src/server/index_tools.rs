//! Index-backed tools: semantic_search and sync_index. Every reply states
//! how ready the index is.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::budget::{Budget, check_max_tokens};
use super::{CodeIntel, Reads, SessionGate, Shared, ToolError, blocking, success};
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
    /// Only under this repo-relative directory or file.
    #[serde(default)]
    pub path: Option<String>,
    /// Only this language (php, python, …; `text`: line-window chunks).
    #[serde(default)]
    pub language: Option<String>,
    /// Only these classes: source, test, docs, example, config, generated, vendored, lock.
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
    /// Reply budget, tokens (estimated), 100-20000. Default 1500.
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
    /// The request, Japanese or English, e.g. 「商品のフォームに在庫数フィールドを追加」.
    pub query: String,
    /// Files, 1-50. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Chunks per file, 1-5. Default 2.
    #[serde(default = "default_chunks_per_file")]
    pub chunks_per_file: usize,
    /// Reply budget, tokens (estimated), 100-20000. Default 1200.
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
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = if p.collection == Collection::Map {
            ToolClass::Map
        } else {
            ToolClass::Forest
        };
        self.shared
            .gated(session, "semantic_search", class, Reads::Nothing, params, async move {
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
                let mut b = Budget::new(max_tokens);
                b.force(&format!("{}\n", readiness.message));
                if results.is_empty() && map_results.is_empty() {
                    b.force(&format!("{}\n", no_results(&readiness)));
                }
                let mut map_results = map_results;
                let mut results = results;
                let shown = b.push_each(&map_results, |h| {
                    format!("[map {:.3}] {} → {} {}\n", h.score, h.query, h.symbols, h.files)
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
                for h in &mut results {
                    h.content.clear();
                }
                let s = b.finish("… cut to fit max_tokens: lower limit, narrow with path, or raise max_tokens");
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
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        self.shared
            .gated(
                session,
                "query",
                ToolClass::Forest,
                Reads::ContentFiles,
                params,
                async move {
                    let max_tokens = check_max_tokens(p.max_tokens, QUERY_MAX_TOKENS)
                        .map_err(ToolError::invalid)?;
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
                    let mut outcome = shared
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
                    let text = query_text(&mut outcome, &readiness, max_tokens);
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
                },
            )
            .await
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
/// Default budget of a `query` reply, in estimated tokens: room for the plan,
/// ten files with why they ranked and the code of the best three. Chosen on
/// bench/agent_tasks.py, where an orienting `query` plus the reads of a task
/// must stay within the 2,500 tokens per task.
const QUERY_MAX_TOKENS: usize = 1200;

/// Files of a `query` reply that show code; the others are listed by name.
const QUERY_CODE_FILES: usize = 3;

/// The text of a `query` reply within `max_tokens`: the plan, then every
/// file with why it ranked and its chunks' lines, framework facts and
/// related symbols, the best [`QUERY_CODE_FILES`] files with their code.
/// `o` keeps what the text shows: files that do not fit are dropped, chunks
/// whose code is not shown lose their content (so only files whose code was
/// returned count as read).
fn query_text(o: &mut rank::Outcome, readiness: &Readiness, max_tokens: usize) -> String {
    let plan = &o.plan;
    let mut b = Budget::new(max_tokens);
    b.force(&format!("{}\n", readiness.message));
    let translated: Vec<String> = plan
        .translated
        .iter()
        .map(|t| {
            let words: Vec<&str> = t.words.iter().map(|(w, _)| w.as_str()).collect();
            format!("{}→{}", t.term, words.join("/"))
        })
        .collect();
    b.force(&format!(
        "plan: keywords [{}]{}{}{}\n",
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
    ));
    if o.files.is_empty() {
        b.force(&format!("{}\n", no_results(readiness)));
    }
    // Pass 1: every file's header and chunk lines (what ranked and where).
    let headers: Vec<Vec<String>> = o
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
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
        })
        .collect();
    let header_cost: Vec<usize> = headers
        .iter()
        .map(|h| h.iter().map(|l| super::budget::estimate_tokens(l)).sum())
        .collect();
    // Keep as many files as their headers fit, leaving room for code.
    let header_room = b.left() * 2 / 3;
    let (mut keep, mut headers_total) = (0, 0);
    for cost in &header_cost {
        if headers_total + cost > header_room {
            break;
        }
        headers_total += cost;
        keep += 1;
    }
    let code_chunks: usize = o
        .files
        .iter()
        .take(keep.min(QUERY_CODE_FILES))
        .map(|f| f.chunks.len())
        .sum();
    let code_budget = b.left().saturating_sub(headers_total);
    let per_chunk = code_budget / code_chunks.max(1);
    for (i, f) in o.files.iter_mut().enumerate().take(keep) {
        let h = &headers[i];
        b.push(&h[0]);
        for (c, line) in f.chunks.iter_mut().zip(&h[1..]) {
            b.push(line);
            let mut shown = String::new();
            if i < QUERY_CODE_FILES {
                let mut left = per_chunk;
                for l in c.content.lines() {
                    let l = format!("     | {l}\n");
                    let cost = super::budget::estimate_tokens(&l);
                    if cost > left || !b.push(&l) {
                        b.push("     | …\n");
                        break;
                    }
                    left -= cost;
                    shown.push_str(&l[7..]);
                }
            }
            c.content = shown;
        }
    }
    if keep < o.files.len() {
        b.truncated = true;
        o.files.truncate(keep);
    }
    b.finish("… cut to fit max_tokens: read_file the files above, lower limit, or raise max_tokens")
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
