//! The write gate and recovery: check_write_target, add_explored_files,
//! revert_to_exploration.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::{AddExploredParams, CheckWriteParams, RevertParams, view_reply, view_text};
use crate::server::wire::{ExploredReply, SessionView, WriteAllowed};
use crate::server::{CodeIntel, NoFacts, Reply, Shown, ToolError, blocking};
use crate::session::{self, CallArgs, Event, Tool};
use crate::util::now_secs;

#[tool_router(router = session_write_router, vis = "pub(in crate::server)")]
impl CodeIntel {
    /// May this file be written? In READY IMPLEMENT/MODIFY sessions: files read in the session, new files beside one or on a framework/PSR-4 path; refusals carry recovery_options.
    #[tool(annotations(
        title = "Check write target",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn check_write_target(
        &self,
        Parameters(p): Parameters<CheckWriteParams>,
    ) -> Result<CallToolResult, ToolError> {
        let repo = &self.shared.repo;
        // The file may not exist yet, nor its directories: its nearest
        // existing ancestor must be inside the repository (as for the hook).
        let (rel, exists) = repo.resolve_for_write(&p.file_path)?;
        let target =
            crate::framework::conventions::write_target(repo, &rel, exists, p.allow_new_files);
        let convention = target.convention.clone();
        self.shared.transition(
            &p.session.session_id,
            Event::WriteChecked { target },
            &NoFacts,
        )?;
        let text = match &convention {
            Some(c) => format!("allowed: {rel} (new file; follows {c})"),
            None => format!("allowed: {rel}"),
        };
        let out = WriteAllowed {
            file: rel,
            convention,
        };
        Reply::new(out, text).into_result()
    }

    /// Recovery: reads files (content returned) and records them as read, with a reason.
    #[tool(annotations(
        title = "Add explored files",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn add_explored_files(
        &self,
        Parameters(p): Parameters<AddExploredParams>,
    ) -> Result<CallToolResult, ToolError> {
        if p.reason.trim().is_empty() {
            return Err(ToolError::invalid(
                "reason is required: say why the change needs these files",
            ));
        }
        if p.files.is_empty() || p.files.len() > 20 {
            return Err(ToolError::invalid("files must name 1-20 files"));
        }
        let max_tokens = crate::server::budget::check_max_tokens(p.max_tokens, 3000)
            .map_err(ToolError::invalid)?;
        let id = p.session.session_id;
        self.shared.sessions.get(&id)?;
        // Read them now: the content is returned, so the read is real.
        let shared = Arc::clone(&self.shared);
        let files = p.files.clone();
        let per_file = (max_tokens / files.len()).max(100);
        let reads = blocking(move || {
            files
                .iter()
                .map(|f| {
                    crate::server::code_tools::read_lines(
                        &shared,
                        f,
                        None,
                        None,
                        per_file,
                        &Default::default(),
                    )
                })
                .collect::<Result<Vec<_>, ToolError>>()
        })
        .await??;
        let mut shown = Shown::default();
        for (l, _) in &reads {
            // Added on purpose, with a reason: read whatever its length.
            shown.read_unit(&l.file, l.start_line, l.end_line);
        }
        let rels = shown.read_files();
        let evidence = session::Evidence {
            tool: Tool::AddExploredFiles,
            params: CallArgs {
                files: rels.clone(),
                reason: Some(p.reason.clone()),
                ..CallArgs::default()
            },
            summary: format!("{} file(s) read: {}", rels.len(), p.reason),
            files: rels.clone(),
            read: rels.clone(),
            read_lines: shown.spans(),
            total: None,
            uses: None,
            at: now_secs(),
            phase: session::Phase::Exploration,
        };
        let (_, s) = self
            .shared
            .transition(&id, Event::ExploredAdded { evidence }, &NoFacts)?;
        let mut text = format!(
            "read and added {rels:?}; {}\n",
            view_text(&SessionView::of(&s))
        );
        for (_, t) in &reads {
            text.push_str(t);
        }
        let out = ExploredReply {
            files: reads.into_iter().map(|(l, _)| l).collect(),
            phase: s.phase,
            next: session::next_step(&s),
        };
        Reply::new(out, text).into_result()
    }

    /// Recovery: back to EXPLORATION, keeping (default) or clearing what was found.
    #[tool(annotations(
        title = "Revert to exploration",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn revert_to_exploration(
        &self,
        Parameters(p): Parameters<RevertParams>,
    ) -> Result<CallToolResult, ToolError> {
        let event = Event::Reverted {
            keep_results: p.keep_results,
        };
        let (_, s) = self
            .shared
            .transition(&p.session.session_id, event, &NoFacts)?;
        view_reply(&s).into_result()
    }
}
