//! The MCP server: the only module that knows MCP and JSON-RPC. One file per
//! tool group; results are structured content plus readable text.

mod budget;
mod code_tools;
mod error;
mod graph_tools;
mod index_tools;
mod query_text;
mod session_tools;
pub mod transport;
mod wire;

#[cfg(test)]
mod tests;

pub use error::ToolError;
pub(crate) use graph_tools::related_line;
pub(crate) use query_text::{QUERY_MAX_TOKENS, query_reply};
pub(crate) use wire::{Call, Reply, Shown, ToolParams};

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, ServerHandler};
use serde::Serialize;

use crate::config::Config;
use crate::embed::{E5_DIM, Embedder};
use crate::index::{self, Progress};
use crate::learn::SessionStore;
use crate::repo::Repo;
use crate::search::symbols::SymbolCache;
use crate::session::{self, Evidence};
use crate::store::Store;

/// Seconds a caller should wait when the model is still loading (e5 fp32
/// loads in 2.7–3.6 s on a 2-core machine; docs/measurements.md § Speed, memory and quality).
const MODEL_RETRY_AFTER_SECONDS: u64 = 5;

/// Load state of the embedding model.
pub enum ModelState {
    Loading(Instant),
    Ready(Arc<dyn Embedder>),
    Failed(String),
}

/// The optional session a read-only tool is gated by (flattened into its
/// parameters).
#[derive(Debug, Default, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SessionGate {
    /// From start_session: gates the call, records evidence.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// State shared by every tool call.
pub struct Shared {
    pub repo: Repo,
    pub config: Config,
    pub symbols: SymbolCache,
    pub progress: Progress,
    /// The code graph and co-change history, rebuilt when the index changed.
    pub graph: index::GraphCache,
    pub model: RwLock<ModelState>,
    pub sessions: SessionStore,
    /// The `query` pipeline and its caches.
    pub ranker: crate::rank::Ranker,
    /// The session this server started last (the client's current one).
    pub current_session: std::sync::Mutex<Option<String>>,
    store: tokio::sync::Mutex<Option<Arc<Store>>>,
}

impl Shared {
    /// The store, opened on first use. A failure is not cached, so an index
    /// rebuilt meanwhile (`code-intel index --force`) is picked up; with
    /// `rebuild`, an unreadable index is deleted and created anew.
    ///
    /// # Errors
    /// The index cannot be opened (message names the fix).
    pub async fn store(&self, rebuild: bool) -> Result<Arc<Store>, ToolError> {
        let mut slot = self.store.lock().await;
        if let Some(s) = slot.as_ref() {
            return Ok(Arc::clone(s));
        }
        let store =
            Store::open_or_rebuild(&self.repo.state_dir().join("lance"), E5_DIM, rebuild).await?;
        let store = Arc::new(store);
        *slot = Some(Arc::clone(&store));
        Ok(store)
    }

    /// How ready the index is now (live progress, cached state summary).
    pub fn readiness(&self) -> index::Readiness {
        index::readiness(&self.repo, &self.progress, &self.config)
    }

    /// The embedder, or why it is not available.
    pub fn embedder(&self) -> Result<Arc<dyn Embedder>, ToolError> {
        match &*self.model.read().unwrap_or_else(|e| e.into_inner()) {
            ModelState::Ready(e) => Ok(Arc::clone(e)),
            ModelState::Loading(since) => Err(ToolError::NotReady {
                message: format!(
                    "the embedding model is still loading ({:.0} s so far); text and symbol tools work now",
                    since.elapsed().as_secs_f64()
                ),
                retry_after_seconds: MODEL_RETRY_AFTER_SECONDS,
            }),
            ModelState::Failed(msg) => Err(ToolError::Unavailable(msg.clone())),
        }
    }
}

/// The code-intel MCP server for one repository.
#[derive(Clone)]
pub struct CodeIntel {
    shared: Arc<Shared>,
    tool_router: ToolRouter<CodeIntel>,
}

impl CodeIntel {
    /// A server for `repo`; the model is not loaded yet (see [`CodeIntel::start_background`]).
    pub fn new(repo: Repo, config: Config) -> CodeIntel {
        CodeIntel {
            shared: Arc::new(Shared {
                sessions: SessionStore::new(&repo.state_dir()),
                ranker: crate::rank::Ranker::default(),
                current_session: std::sync::Mutex::new(None),
                repo,
                config,
                symbols: SymbolCache::default(),
                progress: Progress::default(),
                graph: index::GraphCache::default(),
                model: RwLock::new(ModelState::Loading(Instant::now())),
                store: tokio::sync::Mutex::new(None),
            }),
            tool_router: Self::code_router()
                + Self::index_router()
                + Self::graph_router()
                + Self::session_frame_router()
                + Self::session_evidence_router()
                + Self::session_write_router()
                + Self::session_outcome_router(),
        }
    }

    /// Loads the model off the runtime and, when `sync_on_start` is set and
    /// the last sync is older than `sync_ttl_hours`, runs a sync meanwhile:
    /// its lexical pass needs no model, so `query` ranks every file by its
    /// words while the model loads; the embedding waits for the model.
    pub fn start_background(&self) {
        let shared = Arc::clone(&self.shared);
        let loader = Arc::clone(&self.shared);
        let loaded = tokio::spawn(async move {
            let config = loader.config.clone();
            // Model loading reads ~470 MB and builds an ONNX session: blocking,
            // on a thread of its own whose lowered priority ONNX Runtime's
            // intra-op threads inherit (`embedding_nice`), so background
            // syncs yield to the user's compiler; the runtime's threads keep
            // theirs.
            let nice = config.embedding_nice;
            let state =
                match crate::embed::run_niced(nice, move || crate::embed::load(&config)).await {
                    Ok(Ok(m)) => ModelState::Ready(m),
                    Ok(Err(e)) => ModelState::Failed(e.to_string()),
                    Err(e) => ModelState::Failed(format!("model loader: {e}")),
                };
            if let ModelState::Failed(msg) = &state {
                tracing::warn!("semantic search unavailable: {msg}");
            } else {
                tracing::info!("embedding model ready");
            }
            *loader.model.write().unwrap_or_else(|e| e.into_inner()) = state;
            loader
                .embedder()
                .map_err(|e| index::IndexError::ModelUnavailable(e.to_string()))
        });
        tokio::spawn(async move {
            if !shared.config.sync_on_start || !index::sync_due(&shared.repo, &shared.config) {
                return;
            }
            let embedder = async move {
                loaded
                    .await
                    .map_err(|e| index::IndexError::ModelUnavailable(e.to_string()))?
            };
            match shared.store(false).await {
                Ok(store) => {
                    match index::sync(
                        &shared.repo,
                        &shared.config,
                        &store,
                        embedder,
                        false,
                        shared.config.embedding_nice,
                        &shared.progress,
                    )
                    .await
                    {
                        Ok(r) => tracing::info!(
                            "background sync: +{} ~{} -{} files, {} chunks embedded, {:.1} s",
                            r.added,
                            r.modified,
                            r.deleted,
                            r.chunks_embedded,
                            r.seconds
                        ),
                        Err(e) => tracing::warn!("background sync failed: {e}"),
                    }
                }
                Err(e) => tracing::warn!("background sync skipped: {e}"),
            }
        });
    }
}

/// The `instructions` of `initialize`: when to call what, and how readiness
/// is reported. Kept short: clients put it in every prompt.
const INSTRUCTIONS: &str = "Code intelligence for this repository (Japanese or English requests). Call `query` first with the user's request: the files a change likely touches, best first, with code. Find by name with find_definitions / find_references / search_text / get_symbols; read with read_file (`files` reads several at once) or get_function_at_line. Before editing for a request: open a session (`query` with `intent` and `slots` does it in the same call; or start_session), then with session_id read the files you will change and find_references on what changes, submit_understanding (it says what is missing), then edit (the PreToolUse hook checks each write where installed, else check_write_target before every edit). Paths are repo-relative, lines 1-based. Index readiness is the first line of query / semantic_search replies; sync_index updates it.";

impl CodeIntel {
    /// Phase of the session this server started last, when the tool list is
    /// phase-scoped.
    fn scoped_phase(&self) -> Option<session::Phase> {
        if !self.shared.config.phase_scoped_tools {
            return None;
        }
        let id = self
            .shared
            .current_session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        self.shared.sessions.get(&id).ok().map(|s| s.phase)
    }
}

impl ServerHandler for CodeIntel {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        let caps = rmcp::model::ServerCapabilities::builder().enable_tools();
        let caps = if self.shared.config.phase_scoped_tools {
            caps.enable_tool_list_changed().build()
        } else {
            caps.build()
        };
        rmcp::model::ServerConfig::new(caps)
            .with_server_info(rmcp::model::Implementation::new(
                "code-intel",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS.to_string())
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let before = self.scoped_phase();
        let peer = context.peer.clone();
        let tool = request.name.to_string();
        if let (Some(t), Some(args)) = (self.tool_router.get(&tool), request.arguments.as_ref())
            && let Some(e) = unknown_arguments(&tool, &t.input_schema, args)
        {
            return Ok(e.into_result().into());
        }
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        // A panic inside a handler becomes an error reply, and no call but
        // a sync runs past the deadline: the client always gets an answer.
        let call = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
            self.tool_router.call(tcc),
        ));
        let deadline = Duration::from_secs(if tool == session::Tool::SyncIndex.name() {
            u64::MAX / 4
        } else {
            self.shared.config.tool_timeout_seconds
        });
        let result = match tokio::time::timeout(deadline, call).await {
            Ok(Ok(r)) => r,
            Ok(Err(panic)) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_string()))
                    .unwrap_or_default();
                let msg: String = msg.chars().take(200).collect();
                tracing::error!("{tool} panicked: {msg}");
                Ok(ToolError::failed(format!("internal error in {tool}: {msg}"))
                    .into_result()
                    .into())
            }
            Err(_) => Ok(ToolError::failed(format!(
                "{tool} did not finish within {} s (tool_timeout_seconds); narrow the request (path, glob, limit) and try again",
                deadline.as_secs()
            ))
            .into_result()
            .into()),
        };
        let after = self.scoped_phase();
        if after.is_some()
            && after != before
            && let Err(e) = peer.notify_tool_list_changed().await
        {
            tracing::warn!("cannot send tools/list_changed: {e}");
        }
        result
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        let mut tools = self.tool_router.list_all();
        for t in &mut tools {
            let mut schema = serde_json::Value::Object((*t.input_schema).clone());
            slim_schema(&mut schema);
            document_caps(&mut schema);
            if let serde_json::Value::Object(m) = schema {
                t.input_schema = Arc::new(m);
            }
        }
        if let Some(phase) = self.scoped_phase() {
            tools.retain(|t| {
                session::Tool::parse(&t.name).is_none_or(|t| session::tool_offered(phase, t))
            });
        }
        Ok(rmcp::model::ListToolsResult {
            result_type: Some(rmcp::model::ResultType::COMPLETE),
            tools,
            meta: None,
            next_cursor: None,
            ttl_ms: None,
            cache_scope: None,
        })
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }
}

impl Shared {
    /// For a call with a `session_id`: the gate's refusal (recorded in the
    /// session), or `Ok` when the call may go ahead. Calls without a session
    /// are ungated.
    ///
    /// # Errors
    /// [`ToolError::Refused`], or an unknown session.
    pub(crate) fn gate(&self, call: &Call) -> Result<(), ToolError> {
        let Some(id) = call.session_id.as_deref() else {
            return Ok(());
        };
        let phase = self.sessions.get(id)?.phase;
        let Err(refusal) = session::gate(phase, call.class) else {
            return Ok(());
        };
        let note = format!("{} refused in {phase:?}: {}", call.tool, refusal.reason);
        self.transition(id, session::Event::Refused { note }, &NoFacts)?;
        Err(ToolError::Refused {
            phase: Some(phase),
            reason: refusal.reason,
            recovery_options: refusal.recovery_options,
        })
    }

    /// Applies one event to a session under its lock, with `facts` about
    /// the code (blocking file I/O: one small file; events whose facts parse
    /// the repository go through `transition_on_pool`).
    ///
    /// # Errors
    /// Unknown or unreadable session, a refusal or invalid event.
    pub(crate) fn transition(
        &self,
        id: &str,
        event: session::Event,
        facts: &dyn session::CodeFacts,
    ) -> Result<(session::Step, session::Session), ToolError> {
        let (step, s) = self
            .sessions
            .update(id, |s| session::transition(s, event, facts))?;
        Ok((step?, s))
    }

    /// Runs a read-only tool under the gate: a refused call returns the
    /// refusal; an allowed one runs `body` and, with a session, is recorded
    /// as evidence from what its [`Reply`] showed.
    pub(crate) async fn gated<T: Serialize>(
        &self,
        call: Call,
        body: impl std::future::Future<Output = Result<Reply<T>, ToolError>>,
    ) -> Result<CallToolResult, ToolError> {
        self.gate(&call)?;
        let reply = body.await?;
        self.record(call, &reply);
        reply.into_result()
    }

    /// Records a successful call as evidence of its session: the tool, the
    /// arguments the rules use, the first line of its text, the files it
    /// named, the files and lines it returned (read: the only existing files
    /// that become writable) and its total. The phase is stamped by
    /// [`session::transition`].
    fn record<T: Serialize>(&self, call: Call, reply: &Reply<T>) {
        let Some(id) = call.session_id else {
            // The orientation query, before a session: kept for the session
            // started next on the same request.
            if call.tool == session::Tool::Query
                && let Some(query) = call.args.query
            {
                let o = crate::learn::Orientation {
                    at: crate::util::now_secs(),
                    query,
                    files: reply.shown.named.iter().cloned().collect(),
                    read: reply.shown.read_files(),
                    read_lines: reply.shown.spans(),
                };
                if let Err(e) = self.sessions.remember_orientation(&o) {
                    tracing::warn!("cannot keep the orientation query: {e}");
                }
            }
            return;
        };
        let evidence = Evidence {
            tool: call.tool,
            params: call.args,
            summary: reply.summary(),
            files: reply.shown.named.iter().cloned().collect(),
            read: reply.shown.read_files(),
            read_lines: reply.shown.spans(),
            total: reply.shown.total,
            uses: reply.shown.uses,
            at: crate::util::now_secs(),
            phase: session::Phase::Exploration,
        };
        if let Err(e) = self.transition(&id, session::Event::ToolRecorded { evidence }, &NoFacts) {
            tracing::warn!("cannot record evidence: {e:?}");
        }
    }
}

/// For events that need no facts about the code.
pub(crate) struct NoFacts;

impl session::CodeFacts for NoFacts {
    fn definition_files(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    fn file_exists(&self, _: &str) -> bool {
        false
    }
}

/// An argument the tool's input schema does not name, as an error that
/// lists the arguments it takes (and the likely one: `file` for `path`):
/// an ignored argument silently widens a call (`get_symbols` with `file`
/// listed the whole repository for a trial agent; bench/README.md §
/// Honest agent trial). `None` when every argument is known or the schema
/// leaves its properties open.
fn unknown_arguments(
    tool: &str,
    schema: &serde_json::Map<String, serde_json::Value>,
    args: &serde_json::Map<String, serde_json::Value>,
) -> Option<ToolError> {
    if schema.get("additionalProperties") == Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    let known = schema.get("properties")?.as_object()?;
    let unknown: Vec<&String> = args.keys().filter(|k| !known.contains_key(*k)).collect();
    let first = unknown.first()?;
    let names: Vec<&str> = known.keys().map(String::as_str).collect();
    let likely = [
        ("file", "path"),
        ("path", "file"),
        ("files", "file"),
        ("file", "files"),
    ]
    .iter()
    .find(|(given, meant)| first.as_str() == *given && names.contains(meant))
    .map(|(_, meant)| format!(" (did you mean `{meant}`?)"))
    .unwrap_or_default();
    let unknown: Vec<String> = unknown.iter().map(|k| format!("`{k}`")).collect();
    Some(ToolError::invalid(format!(
        "{tool} has no argument {}{likely}; it takes: {}",
        unknown.join(", "),
        names.join(", ")
    )))
}

/// Drops what clients do not use from an input schema, to keep `tools/list`
/// small (it is sent in every conversation): `$schema`; the numeric
/// `format`s schemars writes (`uint`, `uint64`, `float`, …), which are not
/// JSON Schema formats (Claude Code warns `unknown format "uint64"
/// ignored`), with the `minimum: 0` of unsigned integers (handlers check
/// ranges and say which); the `null` alternative and empty defaults of
/// optional fields (an absent field means the same) and defaults the
/// description states; descriptions of `$defs` and of string constants
/// (`oneOf` of `const`s becomes an `enum`; the properties that use them are
/// described).
fn slim_schema(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            m.remove("$schema");
            if m.get("format").and_then(|f| f.as_str()).is_some_and(|f| {
                matches!(
                    f,
                    "uint"
                        | "uint8"
                        | "uint16"
                        | "uint32"
                        | "uint64"
                        | "int"
                        | "int8"
                        | "int16"
                        | "int32"
                        | "int64"
                        | "float"
                        | "double"
                )
            }) {
                m.remove("format");
                if m.get("minimum") == Some(&serde_json::json!(0)) {
                    m.remove("minimum");
                }
            }
            let described_default = m
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.contains("Default") || d.contains("(default"));
            if m.get("default").is_some_and(|d| {
                described_default
                    || d.is_null()
                    || d.as_array().is_some_and(Vec::is_empty)
                    || d.as_object().is_some_and(serde_json::Map::is_empty)
                    || d == &serde_json::json!("")
            }) {
                m.remove("default");
            }
            // `oneOf` of string constants → `enum` (the property says what they mean).
            if let Some(Value::Array(alts)) = m.get("oneOf") {
                let consts: Option<Vec<Value>> =
                    alts.iter().map(|a| a.get("const").cloned()).collect();
                if let Some(consts) = consts {
                    m.remove("oneOf");
                    m.insert("type".into(), Value::from("string"));
                    m.insert("enum".into(), Value::Array(consts));
                }
            }
            // `type: [T, "null"]` → `type: T`.
            if let Some(Value::Array(types)) = m.get("type") {
                let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if kept.len() == 1 {
                    m.insert("type".into(), kept[0].clone());
                }
            }
            // `anyOf: [X, {type: null}]` → X's keys merged in.
            if let Some(Value::Array(alts)) = m.get("anyOf") {
                let kept: Vec<&Value> = alts
                    .iter()
                    .filter(|a| a.get("type") != Some(&serde_json::json!("null")))
                    .collect();
                if kept.len() == 1
                    && let Some(inner) = kept[0].as_object().cloned()
                {
                    m.remove("anyOf");
                    for (k, x) in inner {
                        m.entry(k).or_insert(x);
                    }
                }
            }
            if let Some(Value::Object(defs)) = m.get_mut("$defs") {
                for d in defs.values_mut() {
                    if let Some(o) = d.as_object_mut() {
                        o.remove("description");
                    }
                }
            }
            m.values_mut().for_each(slim_schema);
        }
        Value::Array(a) => a.iter_mut().for_each(slim_schema),
        _ => {}
    }
}

/// Writes the transport guard's caps into a tool's input schema: `maxLength`
/// on its string arguments, `maxItems` on its lists ([`transport::MAX_STRING_CHARS`],
/// [`transport::MAX_LIST_ITEMS`]; the guard enforces them on every nested
/// value too, and answers a call over them with a tool error naming the
/// argument).
fn document_caps(schema: &mut serde_json::Value) {
    let Some(props) = schema
        .get_mut("properties")
        .and_then(serde_json::Value::as_object_mut)
    else {
        return;
    };
    for p in props.values_mut() {
        match p.get("type").and_then(serde_json::Value::as_str) {
            Some("string") => p["maxLength"] = serde_json::json!(transport::MAX_STRING_CHARS),
            Some("array") => p["maxItems"] = serde_json::json!(transport::MAX_LIST_ITEMS),
            _ => {}
        }
    }
}

/// Runs CPU-bound or blocking tool work on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ToolError::failed(format!("tool worker failed: {e}")))
}
