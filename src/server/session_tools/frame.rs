//! Starting a session and its query frame: start_session, set_query_frame,
//! get_session_status.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::{
    SessionParams, SetQueryFrameParams, StartSessionParams, frame_set, frame_text, view_reply,
};
use crate::learn::{DECISIONS_LOG, Decision, DecisionRecord};
use crate::relevance::CALIBRATED;
use crate::server::wire::{FrameReply, SessionStarted};
use crate::server::{CodeIntel, NoFacts, Reply, ToolError, blocking};
use crate::session::{self, EXTRACTION_PROMPT, Event, Intent, Session};
use crate::util::now_secs;

#[tool_router(router = session_frame_router, vis = "pub(in crate::server)")]
impl CodeIntel {
    /// Starts a gated session for a request (`slots` sets the frame): session_id, a matching past agreement. Pass session_id to code tools.
    #[tool(annotations(
        title = "Start session",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn start_session(
        &self,
        Parameters(p): Parameters<StartSessionParams>,
    ) -> Result<CallToolResult, ToolError> {
        if p.query.trim().is_empty() {
            return Err(ToolError::invalid(
                "query is empty: pass the user's request verbatim",
            ));
        }
        let (out, text) = self.open_session(p.intent, &p.query, p.slots, true).await?;
        Reply::new(out, text).into_result()
    }

    /// Opens a session on `query` (not empty): `start_session`'s work, and
    /// `query`'s when it is given an `intent`. The orientation query on the
    /// same request (the call before, or the one this session opens in)
    /// counts as evidence; `list_read` names its lines in the text (a
    /// `query` that opens the session shows them below instead). Returns
    /// the structured reply and its text.
    pub(in crate::server) async fn open_session(
        &self,
        intent: Intent,
        query: &str,
        slots: Option<super::SlotsInput>,
        list_read: bool,
    ) -> Result<(SessionStarted, String), ToolError> {
        let shared = &self.shared;
        let mut s = shared.sessions.create(Session::new(intent, query))?;
        // The orientation query on this request: its code counts as read.
        let oriented = shared.sessions.orientation(query);
        if let Some(o) = &oriented {
            let evidence = session::Evidence {
                tool: session::Tool::Query,
                params: session::CallArgs {
                    query: Some(o.query.clone()),
                    ..session::CallArgs::default()
                },
                summary: "the orientation query (before the session)".into(),
                files: o.files.clone(),
                read: o.read.clone(),
                read_lines: o.read_lines.clone(),
                total: None,
                uses: None,
                at: o.at,
                phase: s.phase,
            };
            s = shared
                .transition(&s.id, Event::ToolRecorded { evidence }, &NoFacts)?
                .1;
        }
        *shared
            .current_session
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(s.id.clone());
        // Map first: a past agreement for a similar request (calibrated threshold).
        let mut map_hint = None;
        let mut map_checked = false;
        if let (Ok(embedder), Ok(store)) = (shared.embedder(), shared.store(false).await) {
            let q = query.to_string();
            if let Ok(Ok(v)) = blocking(move || embedder.embed_query(&q)).await
                && let Ok(hits) = store.search_map(&v, 1).await
            {
                map_checked = true;
                map_hint = hits
                    .into_iter()
                    .find(|h| h.score >= CALIBRATED.map_short_circuit);
            }
        }
        let record = DecisionRecord {
            at: now_secs(),
            session_id: Some(s.id.clone()),
            query: s.query.clone(),
            decision: Decision::StartSession {
                intent: s.intent,
                risk: s.risk,
                map_hint: map_hint.clone(),
                map_checked,
            },
        };
        if let Err(e) = shared.sessions.log(DECISIONS_LOG, &record) {
            tracing::warn!("cannot log the decision: {e}");
        }
        let mut text = format!(
            "session {} started ({}, phase {}).{}",
            s.id,
            s.intent,
            s.phase,
            match &map_hint {
                Some(h) => format!(
                    " Past agreement matches: {}.",
                    serde_json::to_string(h).unwrap_or_default()
                ),
                None => String::new(),
            },
        );
        if let Some(o) = oriented
            .as_ref()
            .filter(|o| list_read && !o.read.is_empty())
        {
            text.push_str(&format!(
                " The lines of code the orientation query showed count as read (a definition \
                 is read when all its lines, or {}, were shown): {}.",
                crate::session::DEFINITION_READ_LINES,
                lines_shown(o)
            ));
        }
        let mut out = SessionStarted {
            session_id: s.id.clone(),
            intent: s.intent,
            phase: s.phase,
            risk_level: s.risk,
            map_hint,
            index: shared.readiness().message,
            extraction_prompt: None,
            frame: None,
            next: String::new(),
        };
        let s = match slots {
            Some(slots) => {
                let (s, notes) = self.apply_frame(&s.id, slots).await?;
                text.push('\n');
                text.push_str(&frame_text(&s, &notes));
                out.frame = Some(frame_set(&s, notes));
                s
            }
            None => {
                if matches!(s.intent, Intent::Implement | Intent::Modify) {
                    text.push(' ');
                    text.push_str(EXTRACTION_PROMPT);
                    out.extraction_prompt = Some(EXTRACTION_PROMPT);
                } else {
                    text.push_str(&format!(" next: {}", session::next_step(&s)));
                }
                s
            }
        };
        out.next = session::next_step(&s);
        Ok((out, text))
    }

    /// Sets the query frame: a slot whose quote is not verbatim in the request is rejected; a value that may not say what its quote says is flagged.
    #[tool(annotations(
        title = "Set query frame",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn set_query_frame(
        &self,
        Parameters(p): Parameters<SetQueryFrameParams>,
    ) -> Result<CallToolResult, ToolError> {
        let (s, notes) = self.apply_frame(&p.session.session_id, p.slots).await?;
        let text = frame_text(&s, &notes);
        let consistency = notes.consistency.clone();
        let out = FrameReply {
            frame: frame_set(&s, notes),
            consistency,
            missing_slots: session::missing_slots(&s.frame),
            risk_level: s.risk,
            next: session::next_step(&s),
        };
        Reply::new(out, text).into_result()
    }

    /// Phase, frame, risk, requirements still missing, evidence and hypotheses of a session.
    #[tool(annotations(
        title = "Session status",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn get_session_status(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<CallToolResult, ToolError> {
        view_reply(&self.shared.sessions.get(&p.session_id)?).into_result()
    }
}

/// The files an orientation read, each with the line ranges it showed
/// (1-based, inclusive; overlapping and adjacent ranges merged, in order):
/// `a.php (lines 5-20, 31-40), b.php`.
fn lines_shown(o: &crate::learn::Orientation) -> String {
    o.read
        .iter()
        .map(|f| {
            let merged =
                crate::session::merged_ranges(&crate::session::ranges_of(&o.read_lines, f));
            if merged.is_empty() {
                return f.clone();
            }
            let spans: Vec<String> = merged.iter().map(|(a, b)| format!("{a}-{b}")).collect();
            format!("{f} (lines {})", spans.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
