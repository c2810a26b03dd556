//! Index-backed tools: semantic_search and sync_index. Every reply states
//! how ready the index is.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::budget::{Budget, check_max_tokens};
use super::query_text::{QUERY_MAX_TOKENS, no_results, query_reply};
use super::wire::{QueryResult, SemanticResult, SyncResult};
use super::{CodeIntel, Reply, SessionGate, Shared, Shown, ToolError, ToolParams, blocking};
use crate::classify::FileClass;
use crate::index::{self, Readiness};
use crate::learn::{DECISIONS_LOG, DecisionRecord};
use crate::rank::{self, Collection, SemanticHits};
use crate::server::session_tools::SlotsInput;
use crate::session::{CallArgs, Intent, Tool, ToolClass};
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
    /// Files, 1-50. Default 10, up to 20 with also_check.
    #[serde(default)]
    pub limit: Option<usize>,
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
    /// Opens a session on this request, as start_session.
    #[serde(default)]
    pub intent: Option<Intent>,
    /// With intent: the query frame, as start_session's `slots`.
    // Typed when read (an unknown slot is an error naming the four); shown
    // as a plain object so `tools/list` repeats the slot schema of
    // start_session and set_query_frame no third time (test_gate's budget).
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub slots: Option<SlotsInput>,
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
        } = rank::semantic_search(
            &self.shared.ranker,
            &store,
            embedder,
            &p.query,
            p.collection,
            p.limit,
            &scope,
        )
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
        let (limit, fill_to) = rank::limits(p.limit);
        if !(1..=50).contains(&limit) || !(1..=5).contains(&p.chunks_per_file) {
            return Err(ToolError::invalid(
                "limit must be 1-50 and chunks_per_file 1-5",
            ));
        }
        let shared = &self.shared;
        let scope = scope_of(shared, &p.scope)?;
        let store = shared.store(false).await?;
        let mut readiness = shared.readiness();
        // While the model loads (or when it cannot load) the ranking is
        // lexical, and the index line says so, instead of `model_loading`.
        let embedder = match shared.embedder() {
            Ok(e) => Some(e),
            Err(e) => {
                readiness.message.push_str(&format!(
                    "; ranking by words only: {}",
                    e.to_string().split(';').next().unwrap_or_default()
                ));
                None
            }
        };
        let req = rank::QueryRequest {
            query: p.query.clone(),
            limit,
            fill_to,
            chunks_per_file: p.chunks_per_file,
            scope,
            not_embedded: shared.config.index_exclude_classes.clone(),
            root: Some(shared.repo.root().to_path_buf()),
        };
        let g = Arc::clone(shared);
        let graph = blocking(move || g.graph.get(&g.repo)).await?;
        let answer = shared
            .ranker
            .answer(
                &store,
                embedder,
                &shared.config.hybrid_weights,
                &req,
                Some(&graph),
                false,
            )
            .await?;
        let record = DecisionRecord::query(&p.query, p.gate.session_id.clone(), &answer);
        if let Err(e) = shared.sessions.log(DECISIONS_LOG, &record) {
            tracing::warn!("cannot log the decision: {e}");
        }
        let (result, text, shown) = query_reply(answer, readiness, max_tokens);
        Ok(Reply::new(result, text).with_shown(shown))
    }
}

#[tool_router(router = index_router, vis = "pub(super)")]
impl CodeIntel {
    /// Code by meaning (e5 over AST chunks), Japanese or English: file, 1-based lines, symbol, score; no code.
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

    /// Call first: the files a request likely touches, best first, with why and the best chunks' code and facts; `intent` opens the session too.
    #[tool(annotations(
        title = "Query (plan + hybrid search)",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn query(
        &self,
        Parameters(mut p): Parameters<QueryParams>,
    ) -> Result<CallToolResult, ToolError> {
        let Some(intent) = p.intent else {
            if p.slots.is_some() {
                return Err(ToolError::invalid(
                    "slots without intent: give the intent to open a session with this frame, \
                     or pass the slots to start_session",
                ));
            }
            return self.shared.gated(p.call(), self.query_reply(p)).await;
        };
        if p.gate.session_id.is_some() {
            return Err(ToolError::invalid(
                "intent opens a new session: leave session_id out, or leave intent out to \
                 query within that session",
            ));
        }
        // The orientation query first (ungated, kept for the session), then
        // the session on the same request: its code counts as read there.
        let slots = p.slots.take();
        let query = p.query.clone();
        let call = p.call();
        let mut reply = self.query_reply(p).await?;
        self.shared.record(call, &reply);
        let (started, opened) = self.open_session(intent, &query, slots, false).await?;
        reply.text = format!(
            "{opened}\nThe code shown below counts as read in this session.\n\n{}",
            reply.text
        );
        reply.value.session = Some(started);
        reply.into_result()
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
            std::future::ready(Ok(embedder)),
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
