//! The change-set tool: related_files (the files likely to change with a
//! file, a symbol or a set of files: code-graph edges and co-change
//! history, each with its reasons).

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::budget::{Budget, check_max_tokens};
use super::wire::RelatedResult;
use super::{CodeIntel, Reply, SessionGate, Shown, ToolError, ToolParams, blocking};
use crate::graph::{Direction, Related, Site, Tie};
use crate::session::{CallArgs, Tool};

fn default_limit() -> usize {
    10
}

/// Parameters of `related_files`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelatedFilesParams {
    /// Repo-relative files the change starts from (one or several).
    #[serde(default)]
    pub files: Vec<String>,
    /// Or a symbol (`OrderService::place`, `Order`): its definitions' files; a method's callers are added.
    #[serde(default)]
    pub symbol: Option<String>,
    /// Files, 1-50. Default 10.
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Reply budget in tokens, 100-20000 (default 1000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

impl ToolParams for RelatedFilesParams {
    const TOOL: Tool = Tool::RelatedFiles;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            symbol: self.symbol.clone(),
            files: self.files.clone(),
            ..CallArgs::default()
        }
    }
}

/// One line of a related file: rank, path, class, score and reasons.
pub(crate) fn related_line(i: usize, r: &Related) -> String {
    let mut why = r.edges.iter().map(tie_text).collect::<Vec<_>>().join("; ");
    if let (Some(c), Some(n)) = (r.cochange, r.cochange_commits) {
        if !why.is_empty() {
            why.push_str("; ");
        }
        why.push_str(&format!("co-changed {:.0}% ({n:.0} commits)", c * 100.0));
    }
    format!(
        "{}. {} [{}] {:.2}: {why}\n",
        i + 1,
        r.file,
        r.class.name(),
        r.score
    )
}

/// A tie in words: `view ← app/Http/Controllers/X.php:18`,
/// `counterpart → resources/js/AddUserForm.vue`,
/// `sibling (app/Contracts/Storage.php) ← app/Services/S3.php:7`.
pub(crate) fn tie_text(t: &Tie) -> String {
    match &t.sibling_of {
        Some(parent) => format!("sibling ({parent}) ← {}", site_text(&t.site)),
        None => format!("{} {}", tie_kind_text(t), site_text(&t.site)),
    }
}

/// A tie's kind without its site, as "also check" lines show it:
/// `view ←`, `counterpart →`, `sibling (app/Contracts/Storage.php)`.
pub(crate) fn tie_kind_text(t: &Tie) -> String {
    match (&t.sibling_of, t.direction) {
        (Some(parent), _) => format!("sibling ({parent})"),
        (None, Direction::Out) => format!("{} →", t.kind.name()),
        (None, Direction::In) => format!("{} ←", t.kind.name()),
    }
}

/// `file:line`, or the file alone for a tie without a line.
fn site_text(s: &Site) -> String {
    if s.line == 0 {
        s.file.clone()
    } else {
        format!("{}:{}", s.file, s.line)
    }
}

impl CodeIntel {
    /// `related_files`'s reply: ranked files with their reasons (names only).
    pub(super) async fn related_files_reply(
        &self,
        p: RelatedFilesParams,
    ) -> Result<Reply<RelatedResult>, ToolError> {
        let max_tokens = check_max_tokens(p.max_tokens, 1000).map_err(ToolError::invalid)?;
        if !(1..=50).contains(&p.limit) {
            return Err(ToolError::invalid("limit must be 1-50"));
        }
        if p.files.is_empty() && p.symbol.as_deref().is_none_or(|s| s.trim().is_empty()) {
            return Err(ToolError::invalid(
                "give files (repo-relative paths) or a symbol",
            ));
        }
        let shared = Arc::clone(&self.shared);
        let (seeds, graph, mut files) = blocking(move || -> Result<_, ToolError> {
            let seeds = crate::index::seeds(
                &shared.repo,
                &shared.config,
                &shared.symbols,
                &p.files,
                p.symbol.as_deref(),
            )
            .map_err(ToolError::invalid)?;
            let graph = shared.graph.get(&shared.repo);
            let files = crate::index::related_files(
                &shared.repo,
                &shared.config,
                &shared.symbols,
                &graph,
                &seeds,
                p.symbol.as_deref(),
                p.limit,
            );
            Ok((seeds, graph, files))
        })
        .await??;
        let readiness = self.shared.readiness();
        let mut b = Budget::new(max_tokens);
        b.force(&format!(
            "{} file(s) related to {} (code graph: {} edges; history: {} commits)\n",
            files.len(),
            seeds.join(", "),
            graph.graph.len(),
            graph.history.commits
        ));
        if graph.graph.is_empty() {
            b.force(&format!("{}\n", readiness.message));
        }
        let shown = b.push_each(files.iter().enumerate(), |(i, r)| related_line(i, r));
        files.truncate(shown);
        let text = b.finish("… cut to fit max_tokens: lower limit, or raise max_tokens");
        let mut seen = Shown::default();
        for f in seeds.iter().chain(files.iter().map(|r| &r.file)) {
            seen.name(f);
        }
        let value = RelatedResult {
            seeds,
            files,
            graph_edges: graph.graph.len(),
            history_commits: graph.history.commits,
            index: readiness,
        };
        Ok(Reply::new(value, text).with_shown(seen))
    }
}

#[tool_router(router = graph_router, vis = "pub(super)")]
impl CodeIntel {
    /// Files likely to change with the given files or symbol: code-graph edges (imports, uses, views, config, migrations, factories, policies, listeners), a method's callers, co-change; with reasons.
    #[tool(annotations(
        title = "Related files",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn related_files(
        &self,
        Parameters(p): Parameters<RelatedFilesParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared
            .gated(p.call(), self.related_files_reply(p))
            .await
    }
}
