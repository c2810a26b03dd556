//! The learning loop: record_outcome, get_session_analysis,
//! get_improvement_insights.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::{RecordOutcomeParams, SessionParams};
use crate::graph::cochange::CoChange;
use crate::learn::{LearnedPair, OUTCOMES_LOG, OutcomeRecord};
use crate::server::wire::{OutcomeReply, SessionAnalysis, SessionView};
use crate::server::{CodeIntel, NoFacts, Reply, ToolError, blocking};
use crate::session::{self, Event, SessionOutcome};
use crate::util::now_secs;

#[tool_router(router = session_outcome_router, vis = "pub(in crate::server)")]
impl CodeIntel {
    /// How the work ended: success saves an agreement (map) and learned term→symbol pairs; failure/partial is logged.
    #[tool(annotations(
        title = "Record outcome",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn record_outcome(
        &self,
        Parameters(p): Parameters<RecordOutcomeParams>,
    ) -> Result<CallToolResult, ToolError> {
        let s = self.shared.sessions.get(&p.session.session_id)?;
        let mut out = OutcomeReply {
            session_id: s.id.clone(),
            outcome: p.outcome,
            agreement: None,
            map_added: None,
            map_error: None,
            learned_pairs: None,
        };
        if p.outcome == SessionOutcome::Success {
            let a = s.agreement();
            let path = self
                .shared
                .sessions
                .write_agreement(&s, &a.symbols, &a.files)?;
            out.agreement = Some(self.shared.repo.rel(&path));
            // The map row makes the agreement findable at once.
            let map_added: Result<(), ToolError> = async {
                let embedder = self.shared.embedder()?;
                let store = self.shared.store(false).await?;
                let q = s.query.clone();
                let v = blocking(move || embedder.embed_query(&q)).await??;
                store
                    .add_agreement(&s.id, &s.query, &a.symbols, &a.files, &v)
                    .await?;
                Ok(())
            }
            .await;
            out.map_added = Some(map_added.is_ok());
            out.map_error = map_added.err().map(|e| e.message().to_string());
            let shared = Arc::clone(&self.shared);
            let done = s.clone();
            let kept = blocking(move || {
                let facts = shared.facts();
                let pairs: Vec<LearnedPair> = session::learned_symbols(&done, &a, &facts)
                    .into_iter()
                    .map(|symbol| LearnedPair {
                        term: a.term.clone(),
                        symbol,
                        session_id: done.id.clone(),
                        learned_at: now_secs(),
                    })
                    .collect();
                shared.sessions.add_learned_pairs(pairs, |p| {
                    session::CodeFacts::symbol_exists(&facts, &p.symbol)
                })
            })
            .await?;
            out.learned_pairs = Some(kept.ok());
            // The files this change wrote count as one co-change
            // transaction of the repository's history.
            let written: Vec<String> = s
                .writes_allowed
                .iter()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let dir = self.shared.repo.state_dir();
            let added = blocking(move || {
                CoChange::update(&dir, |h| {
                    h.add(&written, now_secs() as i64);
                    Ok(((), true))
                })
            })
            .await?;
            if let Err(e) = added {
                tracing::warn!("cannot add the outcome to the co-change history: {e}");
            }
        }
        let record = OutcomeRecord {
            at: now_secs(),
            session_id: s.id.clone(),
            outcome: p.outcome,
            intent: s.intent,
            risk: s.risk,
            phase: s.phase,
            tools_used: s.tools_used.clone(),
            refusals: s.refusals.len(),
            failure_point: p.failure_point,
            analysis: p.analysis,
        };
        self.shared.sessions.log(OUTCOMES_LOG, &record)?;
        self.shared.transition(
            &s.id,
            Event::OutcomeRecorded { outcome: p.outcome },
            &NoFacts,
        )?;
        let text = format!(
            "outcome recorded: {}",
            serde_json::to_string(&out).unwrap_or_default()
        );
        Reply::new(out, text).into_result()
    }

    /// One session in detail: evidence per tool, refusals, hypotheses, outcome.
    #[tool(annotations(
        title = "Session analysis",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn get_session_analysis(
        &self,
        Parameters(p): Parameters<SessionParams>,
    ) -> Result<CallToolResult, ToolError> {
        let s = self.shared.sessions.get(&p.session_id)?;
        let mut calls_per_tool = BTreeMap::new();
        for e in &s.evidence {
            *calls_per_tool.entry(e.tool).or_default() += 1;
        }
        let text = format!(
            "{} tool calls, {} refusals, outcome {}",
            s.evidence.len(),
            s.refusals.len(),
            s.outcome.map_or("none yet", SessionOutcome::name)
        );
        let out = SessionAnalysis {
            session: SessionView::of(&s),
            calls_per_tool,
            relevance_checks: s.relevance.clone(),
            writes_allowed: s.writes_allowed.clone(),
            outcome: s.outcome,
            duration_seconds: s.updated_at.saturating_sub(s.created_at),
        };
        Reply::new(out, text).into_result()
    }

    /// Failure correlations over recorded outcomes: by tool, risk level and failure point.
    #[tool(annotations(
        title = "Improvement insights",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn get_improvement_insights(&self) -> Result<CallToolResult, ToolError> {
        let insights = crate::learn::insights(&self.shared.sessions.read_log(OUTCOMES_LOG));
        let text = insights.summary();
        Reply::new(insights, text).into_result()
    }
}
