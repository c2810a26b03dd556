//! Evidence toward READY: submit_understanding, validate_symbol_relevance,
//! submit_semantic, submit_verification.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::{
    SubmitSemanticParams, SubmitUnderstandingParams, SubmitVerificationParams,
    ValidateRelevanceParams, assessment_text, confine_files, requirements_text, view_text,
};
use crate::learn::LearnedPair;
use crate::relevance::{self, CALIBRATED};
use crate::server::wire::{RelevanceReply, SessionView, UnderstandingReply};
use crate::server::{CodeIntel, NoFacts, Reply, ToolError, blocking};
use crate::session::{
    self, Event, Hypothesis, HypothesisState, RelevanceCheck, Tier, Verification,
};

#[tool_router(router = session_evidence_router, vis = "pub(in crate::server)")]
impl CodeIntel {
    /// Submits the findings, checked against the code and session; risk from what they touch. READY when the evidence suffices, else what is missing.
    #[tool(annotations(
        title = "Submit understanding",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn submit_understanding(
        &self,
        Parameters(p): Parameters<SubmitUnderstandingParams>,
    ) -> Result<CallToolResult, ToolError> {
        let mut understanding = p.understanding;
        let repo = &self.shared.repo;
        confine_files(repo, &mut understanding.files_analyzed)?;
        confine_files(repo, &mut understanding.files_to_edit)?;
        for pattern in &mut understanding.existing_patterns {
            confine_files(repo, &mut pattern.files)?;
        }
        let event = Event::UnderstandingSubmitted {
            understanding,
            semantic_reasons: p.semantic_reasons,
        };
        let (step, s) = self
            .shared
            .transition_on_pool(&p.session.session_id, event)
            .await?;
        let a = step.assessment.unwrap_or_else(|| session::Assessment {
            rejected_claims: Vec::new(),
            missing: BTreeMap::new(),
            confidence: 0.0,
            unchecked: Vec::new(),
            created: Vec::new(),
        });
        // READY says how this repository checks writes (the hook or not).
        let hook = (s.phase == session::Phase::Ready)
            .then(|| crate::client::hook_installed(self.shared.repo.root()));
        // Only rejected claims hold READY back: say what to do about them.
        let next = if s.phase == session::Phase::Exploration
            && a.missing.is_empty()
            && !a.rejected_claims.is_empty()
        {
            "correct or drop the rejected claims below (a symbol the change creates counts when its class's file is in files_to_edit), then submit_understanding again".to_string()
        } else {
            session::next_step_with_hook(&s, hook)
        };
        let text = format!(
            "{} (phase {}); risk {}{}; {}; confidence {:.2}{}\nnext: {}",
            step.note,
            s.phase,
            s.risk,
            if s.risk_reasons.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.risk_reasons.join("; "))
            },
            requirements_text(&s.requirements, &a, s.phase == session::Phase::Ready),
            a.confidence,
            assessment_text(&a),
            next
        );
        let out = UnderstandingReply {
            phase: s.phase,
            confidence: a.confidence,
            missing: a.missing,
            rejected_claims: a.rejected_claims,
            unchecked: a.unchecked,
            created: a.created,
            risk_level: s.risk,
            risk_reasons: s.risk_reasons.clone(),
            requirements: s.requirements.clone(),
            note: step.note,
            next,
        };
        Reply::new(out, text).into_result()
    }

    /// Does a natural-language term map to these symbols? Calibrated tiers: FACT, grey (risk HIGH) or rejected; learned pairs shown.
    #[tool(annotations(
        title = "Validate symbol relevance",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn validate_symbol_relevance(
        &self,
        Parameters(p): Parameters<ValidateRelevanceParams>,
    ) -> Result<CallToolResult, ToolError> {
        if p.code_evidence.trim().is_empty() {
            return Err(ToolError::invalid(
                "code_evidence is required: say where in the code (file:line) the term and the symbol meet",
            ));
        }
        if p.symbols.is_empty() {
            return Err(ToolError::invalid("symbols is empty"));
        }
        let id = p.session.session_id.clone();
        self.shared.sessions.get(&id)?;
        let embedder = self.shared.embedder()?;
        // A symbol with no definition is rejected whatever its score.
        let shared = Arc::clone(&self.shared);
        let wanted = p.symbols.clone();
        let undefined: BTreeSet<String> = blocking(move || {
            let facts = shared.facts();
            wanted
                .into_iter()
                .filter(|s| !session::CodeFacts::symbol_exists(&facts, s))
                .collect()
        })
        .await?;
        let pairs: Vec<(String, String)> = p
            .symbols
            .iter()
            .map(|s| (p.nl_term.clone(), relevance::symbol_text(s)))
            .collect();
        let scores = blocking(move || relevance::score_pairs(embedder.as_ref(), &pairs)).await??;
        let checks: Vec<RelevanceCheck> = p
            .symbols
            .iter()
            .zip(&scores)
            .map(|(sym, &score)| RelevanceCheck {
                nl_term: p.nl_term.clone(),
                symbol: sym.clone(),
                score,
                tier: relevance::tier(&CALIBRATED, score, undefined.contains(sym)),
            })
            .collect();
        let grey = checks.iter().any(|c| c.tier == Tier::Grey);
        let rejected = checks.iter().filter(|c| c.tier == Tier::Reject).count();
        let learned: Vec<LearnedPair> = self
            .shared
            .sessions
            .learned_pairs()
            .into_iter()
            .filter(|l| session::normalize(&l.term) == session::normalize(&p.nl_term))
            .collect();
        let (_, s) = self.shared.transition(
            &id,
            Event::RelevanceChecked {
                checks: checks.clone(),
            },
            &NoFacts,
        )?;
        let guidance = (rejected > 0).then(|| format!(
            "{rejected} symbol(s) do not match `{}`: look again with find_definitions / search_text for the term's meaning, or semantic_search(map)",
            p.nl_term
        ));
        let mut text = checks
            .iter()
            .map(|c| format!("{} ↔ {}: {:.3} {}", c.nl_term, c.symbol, c.score, c.tier))
            .collect::<Vec<_>>()
            .join("\n");
        if grey {
            text.push_str("\na grey-zone match raised the session's risk to HIGH");
        }
        if let Some(g) = &guidance {
            text.push('\n');
            text.push_str(g);
        }
        if !learned.is_empty() {
            let pairs: Vec<&str> = learned.iter().map(|l| l.symbol.as_str()).collect();
            text.push_str(&format!(
                "\nlearned before for this term: {}",
                pairs.join(", ")
            ));
        }
        let out = RelevanceReply {
            results: checks,
            thresholds: CALIBRATED,
            risk_level: s.risk,
            risk_forced_high: grey,
            learned_pairs: learned,
            undefined_symbols: undefined,
            guidance,
        };
        Reply::new(out, text).into_result()
    }

    /// In SEMANTIC: submits forest-search hits as hypotheses; the session moves to VERIFICATION.
    #[tool(annotations(
        title = "Submit semantic hypotheses",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn submit_semantic(
        &self,
        Parameters(p): Parameters<SubmitSemanticParams>,
    ) -> Result<CallToolResult, ToolError> {
        let mut hypotheses = p.hypotheses;
        for h in &mut hypotheses {
            if !h.file.is_empty() {
                confine_files(&self.shared.repo, std::slice::from_mut(&mut h.file))?;
            }
        }
        let hypotheses = hypotheses
            .into_iter()
            .map(|h| Hypothesis {
                symbol: h.symbol,
                file: h.file,
                slot_source: h.slot_source,
                reason: h.reason,
                state: HypothesisState::Hypothesis,
                evidence: None,
            })
            .collect();
        let (step, s) = self
            .shared
            .transition_on_pool(
                &p.session.session_id,
                Event::SemanticSubmitted { hypotheses },
            )
            .await?;
        let v = SessionView::of(&s);
        let text = format!("{}. {}", step.note, view_text(&v));
        Reply::new(v, text).into_result()
    }

    /// In VERIFICATION: confirm (with code evidence) or reject each hypothesis; then READY if the requirements are met, else EXPLORATION.
    #[tool(annotations(
        title = "Submit verification",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn submit_verification(
        &self,
        Parameters(p): Parameters<SubmitVerificationParams>,
    ) -> Result<CallToolResult, ToolError> {
        let results = p
            .results
            .into_iter()
            .map(|r| Verification {
                symbol: r.symbol,
                confirmed: r.confirmed,
                evidence: r.evidence,
            })
            .collect();
        let (step, s) = self
            .shared
            .transition_on_pool(
                &p.session.session_id,
                Event::VerificationSubmitted { results },
            )
            .await?;
        let v = SessionView::of(&s);
        let text = format!("{}. {}", step.note, view_text(&v));
        Reply::new(v, text).into_result()
    }
}
