//! Session tools (docs/sessions.md): start, frame, status, understanding,
//! relevance, hypotheses and their verification, the write gate, recovery
//! and the learning loop. Handlers parse parameters, gather facts about the
//! code, apply one [`session::Event`] through the state machine under the
//! session's lock, and format the result; refusals are tool errors with
//! `recovery_options`.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CodeIntel, Shared, ToolError, blocking, success};
use crate::index;
use crate::learn::LearnedPair;
use crate::relevance::{self, CALIBRATED};
use crate::search::symbols::{Definition, qualifier_matches, split_qualified};
use crate::session::{
    self, Event, Hypothesis, HypothesisState, Intent, Phase, RelevanceCheck, Requirement,
    SemanticReason, Session, Slot, SlotName, Understanding, Verification,
};
use crate::util::now_secs;

/// Parameters of `start_session`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct StartSessionParams {
    /// IMPLEMENT (new behaviour), MODIFY (change/fix), INVESTIGATE or QUESTION (read only; never write).
    pub intent: Intent,
    /// The user's request, verbatim (any language).
    pub query: String,
    /// Optional: the query frame at once (as set_query_frame).
    #[serde(default)]
    pub slots: Option<SlotsInput>,
}

/// Parameters naming a session (flattened into every session tool's).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SessionParams {
    /// The id returned by start_session.
    pub session_id: String,
}

/// The four slots; each optional.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SlotsInput {
    /// Feature or component, e.g. {"value": "login", "quote": "ログイン機能"}.
    #[serde(default)]
    pub target_feature: Option<Slot>,
    /// When it happens.
    #[serde(default)]
    pub trigger_condition: Option<Slot>,
    /// What goes wrong now.
    #[serde(default)]
    pub observed_issue: Option<Slot>,
    /// What the user wants done.
    #[serde(default)]
    pub desired_action: Option<Slot>,
}

/// Parameters of `set_query_frame`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SetQueryFrameParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// Slots of the request; each `quote` verbatim from it.
    pub slots: SlotsInput,
}

/// Parameters of `submit_understanding`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SubmitUnderstandingParams {
    #[serde(flatten)]
    pub session: SessionParams,
    #[serde(flatten)]
    pub understanding: Understanding,
    /// To enter SEMANTIC when exact tools found nothing: missing requirement → reason (docs/sessions.md).
    #[serde(default)]
    pub semantic_reasons: BTreeMap<Requirement, SemanticReason>,
}

/// Parameters of `validate_symbol_relevance`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ValidateRelevanceParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// The natural-language term from the request, e.g. ログイン.
    pub nl_term: String,
    /// Symbols the agent maps it to.
    pub symbols: Vec<String>,
    /// file:line where the term and symbol meet. Required.
    pub code_evidence: String,
}

/// One hypothesis from forest search.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct HypothesisInput {
    /// Symbol name as find_definitions knows it.
    pub symbol: String,
    /// Repo-relative file of the symbol.
    pub file: String,
    /// Slot or requirement it fills.
    pub slot_source: String,
    /// Why the search result supports it.
    pub reason: String,
}

/// Parameters of `submit_semantic`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SubmitSemanticParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// Candidates from forest search.
    pub hypotheses: Vec<HypothesisInput>,
}

/// One verification result.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct VerificationInput {
    /// The hypothesis symbol.
    pub symbol: String,
    /// true: confirmed by the code; false: rejected.
    pub confirmed: bool,
    /// Code evidence (file:line and what it shows); required to confirm.
    #[serde(default)]
    pub evidence: String,
}

/// Parameters of `submit_verification`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SubmitVerificationParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// One per hypothesis symbol.
    pub results: Vec<VerificationInput>,
}

/// Parameters of `check_write_target`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CheckWriteParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// Repo-relative file about to be edited or created.
    pub file_path: String,
    /// Creating a new file. Default false.
    #[serde(default)]
    pub allow_new_files: bool,
}

/// Parameters of `add_explored_files`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AddExploredParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// Files to read now (content returned).
    pub files: Vec<String>,
    /// Why the change needs them (kept in the session's evidence). Required.
    pub reason: String,
    /// Reply budget, tokens (estimated), 100-20000. Default 3000.
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

/// Parameters of `revert_to_exploration`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RevertParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// Keep understanding, hypotheses, read files. Default true.
    #[serde(default = "yes")]
    pub keep_results: bool,
}

fn yes() -> bool {
    true
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Success,
    Failure,
    Partial,
}

/// Parameters of `record_outcome`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RecordOutcomeParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// success, failure or partial.
    pub outcome: Outcome,
    /// What worked or went wrong.
    #[serde(default)]
    pub analysis: String,
    /// For failure/partial: where it went wrong (exploration, wrong_symbol, …).
    #[serde(default)]
    pub failure_point: Option<String>,
}

/// The session as tools report it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionView {
    pub session_id: String,
    pub intent: Intent,
    pub phase: Phase,
    pub risk_level: session::Risk,
    pub frame: BTreeMap<SlotName, Slot>,
    pub missing_slots: Vec<SlotName>,
    pub requirements: session::Requirements,
    pub assessment: Option<session::Assessment>,
    pub tools_used: Vec<String>,
    pub explored_files: Vec<String>,
    pub hypotheses: Vec<HypothesisView>,
    pub evidence_count: usize,
    pub refusals: Vec<String>,
    /// What to do next.
    pub next: String,
}

/// A hypothesis as reported.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HypothesisView {
    pub symbol: String,
    pub file: String,
    pub state: HypothesisState,
}

fn next_step(s: &Session) -> String {
    match s.phase {
        Phase::Exploration
            if !s.frame_set && matches!(s.intent, Intent::Implement | Intent::Modify) =>
        {
            "extract the slots with the extraction_prompt and call set_query_frame".into()
        }
        Phase::Exploration => format!(
            "with session_id: find_definitions, read_file the files to change, {}, then submit_understanding",
            if s.requirements.needs.contains(&Requirement::Patterns) {
                "read an existing implementation of the same kind"
            } else {
                "find_references on what changes"
            }
        ),
        Phase::Semantic => {
            "semantic_search with collection=forest (pass session_id), then submit_semantic".into()
        }
        Phase::Verification => {
            "confirm or reject each hypothesis with code tools, then submit_verification".into()
        }
        Phase::Ready if matches!(s.intent, Intent::Question | Intent::Investigate) => {
            "answer from what the tools returned (this session never writes); record_outcome when done".into()
        }
        Phase::Ready => {
            "call check_write_target before every edit; record_outcome when done".into()
        }
    }
}

fn view(s: &Session) -> SessionView {
    SessionView {
        session_id: s.id.clone(),
        intent: s.intent,
        phase: s.phase,
        risk_level: s.risk,
        frame: s.frame.clone(),
        missing_slots: session::missing_slots(&s.frame),
        requirements: s.requirements.clone(),
        assessment: s.last_assessment.clone(),
        tools_used: s.tools_used.iter().cloned().collect(),
        explored_files: s.explored.iter().cloned().collect(),
        hypotheses: s
            .hypotheses
            .iter()
            .map(|h| HypothesisView {
                symbol: h.symbol.clone(),
                file: h.file.clone(),
                state: h.state,
            })
            .collect(),
        evidence_count: s.evidence.len(),
        refusals: s.refusals.clone(),
        next: next_step(s),
    }
}

/// The session view as a successful tool result.
fn respond_view(s: &Session) -> Result<CallToolResult, ToolError> {
    let v = view(s);
    let text = view_text(&v);
    success(&v, text)
}

fn view_text(v: &SessionView) -> String {
    format!(
        "session {} {:?} phase {:?}, risk {:?}; needs {}; read {} file(s); next: {}",
        v.session_id,
        v.intent,
        v.phase,
        v.risk_level,
        needs_text(&v.requirements),
        v.explored_files.len(),
        v.next
    )
}

/// The requirements in words.
fn needs_text(r: &session::Requirements) -> String {
    if r.needs.is_empty() {
        return "nothing".into();
    }
    r.needs
        .iter()
        .map(|n| {
            let name = n.name().to_string();
            if *n == Requirement::EntryPoints && r.all_entry_points {
                format!("{name} (every entry point)")
            } else {
                name
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What is missing and rejected, one line each, for replies.
fn assessment_text(a: &session::Assessment) -> String {
    let mut out = String::new();
    for (r, what) in &a.missing {
        out.push_str(&format!("\n- missing {}: {what}", r.name()));
    }
    for c in &a.rejected_claims {
        out.push_str(&format!("\n- rejected: {c}"));
    }
    out
}

/// Hints and tools per missing slot (docs/sessions.md § Risk).
fn guidance(slot: SlotName) -> (&'static str, &'static [&'static str]) {
    let (hint, tools): (&str, &[&str]) = match slot {
        SlotName::TargetFeature => (
            "find which feature or component the request is about",
            &[
                "find_definitions",
                "get_symbols",
                "semantic_search (collection=map)",
            ],
        ),
        SlotName::TriggerCondition => (
            "find the input or event that leads to the behaviour",
            &["find_references", "search_text"],
        ),
        SlotName::ObservedIssue => (
            "find where the current behaviour comes from (messages, conditions)",
            &["search_text", "get_function_at_line"],
        ),
        SlotName::DesiredAction => (
            "find how similar changes are done in this codebase",
            &["analyze_structure", "find_references"],
        ),
    };
    (hint, tools)
}

const EXTRACTION_PROMPT: &str = "Extract from the user's request, for each slot, a short `value` (English is fine) and a `quote`: the exact words of the request that support it, copied verbatim (the server rejects quotes that are not in the request). Leave a slot out when the request does not say it. Slots: target_feature (feature or component), trigger_condition (when it happens), observed_issue (what goes wrong now), desired_action (what to do). Then call set_query_frame with {\"session_id\": ..., \"slots\": {\"target_feature\": {\"value\": ..., \"quote\": ...}, ...}}.";

/// What the state machine needs to know about the repository, computed on
/// the blocking pool (the first call parses every file; later ones reuse the
/// symbol cache).
struct RepoFacts {
    /// (repo-relative file, definition).
    defs: Vec<(String, Definition)>,
    names: HashSet<String>,
    repo: crate::repo::Repo,
}

impl session::CodeFacts for RepoFacts {
    /// Files defining `symbol` (plain or qualified: `Class::method`,
    /// `Class.method`, `Ns\Class`).
    fn definition_files(&self, symbol: &str) -> Vec<String> {
        let (qualifier, name) = split_qualified(symbol);
        if qualifier.is_none() && !self.names.contains(&name) {
            return Vec::new();
        }
        let mut files: Vec<String> = self
            .defs
            .iter()
            .filter(|(_, d)| {
                d.name == name && qualifier.as_deref().is_none_or(|q| qualifier_matches(q, d))
            })
            .map(|(f, _)| f.clone())
            .collect();
        files.dedup();
        files
    }

    fn file_exists(&self, rel: &str) -> bool {
        self.repo.resolve(rel).is_ok_and(|p| p.is_file())
    }
}

impl Shared {
    /// Every definition in the repository. CPU-bound: call it through
    /// [`Shared::with_facts`].
    fn facts(&self) -> RepoFacts {
        let root = self.repo.root().to_path_buf();
        let defs: Vec<(String, Definition)> = self
            .symbols
            .scan(&self.repo, &self.config, &root, None)
            .map(|files| {
                files
                    .into_iter()
                    .flat_map(|(f, s)| {
                        s.definitions
                            .iter()
                            .map(|d| (f.clone(), d.clone()))
                            .collect::<Vec<_>>()
                    })
                    .collect()
            })
            .unwrap_or_default();
        RepoFacts {
            names: defs.iter().map(|(_, d)| d.name.clone()).collect(),
            defs,
            repo: self.repo.clone(),
        }
    }

    /// Applies `event` with facts about the code, all on the blocking pool
    /// (parsing, then the session's locked read-modify-write).
    async fn apply_event(
        self: &Arc<Self>,
        id: &str,
        event: Event,
    ) -> Result<(session::Step, Session), ToolError> {
        let (shared, id) = (Arc::clone(self), id.to_string());
        blocking(move || {
            let facts = shared.facts();
            shared.apply_with(&id, event, &facts)
        })
        .await?
    }
}

/// The reply text after a frame was set: what was accepted and rejected
/// (with why), the risk, what READY needs and what to do next.
fn frame_text(
    s: &Session,
    rejected: &[session::SlotRejection],
    consistency: &serde_json::Map<String, serde_json::Value>,
) -> String {
    let mut t = format!(
        "frame: {} slot(s) accepted {:?}; missing {:?}; risk {:?} (from what the change touches, judged at submit_understanding); needs {}",
        s.frame.len(),
        s.frame.keys().collect::<Vec<_>>(),
        session::missing_slots(&s.frame),
        s.risk,
        needs_text(&s.requirements),
    );
    if consistency.is_empty() {
        t.push_str("; value/quote consistency not checked (model not loaded)");
    }
    for r in rejected {
        t.push_str(&format!("\n- rejected {:?}: {}", r.slot, r.reason));
    }
    for m in session::missing_slots(&s.frame) {
        let (hint, tools) = guidance(m);
        t.push_str(&format!(
            "\n- {m:?} not in the request: {hint} ({})",
            tools.join(", ")
        ));
    }
    t.push_str(&format!("\nnext: {}", next_step(s)));
    t
}

impl CodeIntel {
    /// Verifies `slots` against the session's request (quotes verbatim, values
    /// consistent with their quotes when the model is loaded) and applies the
    /// frame. Returns the session, the rejections and the consistency scores
    /// (empty when the model is not loaded).
    ///
    /// # Errors
    /// Unknown session; an unreadable session file.
    async fn apply_frame(
        &self,
        id: &str,
        slots: SlotsInput,
    ) -> Result<
        (
            Session,
            Vec<session::SlotRejection>,
            serde_json::Map<String, serde_json::Value>,
        ),
        ToolError,
    > {
        let slots: Vec<(SlotName, Slot)> = [
            (SlotName::TargetFeature, slots.target_feature),
            (SlotName::TriggerCondition, slots.trigger_condition),
            (SlotName::ObservedIssue, slots.observed_issue),
            (SlotName::DesiredAction, slots.desired_action),
        ]
        .into_iter()
        .filter_map(|(n, s)| s.map(|s| (n, s)))
        .collect();
        let query = self.shared.sessions.get(id)?.query;
        let (mut frame, mut rejected) = session::verify_frame(&query, &slots);
        // Value/quote consistency: a value that means something else than its
        // quote (below the calibrated threshold) is rejected too. Needs the
        // model; without it the check is skipped and said so.
        let mut consistency = serde_json::Map::new();
        if let Ok(embedder) = self.shared.embedder() {
            let names: Vec<SlotName> = frame.keys().copied().collect();
            let pairs: Vec<(String, String)> = frame
                .values()
                .map(|s| (s.value.clone(), s.quote.clone()))
                .collect();
            if let Ok(scores) =
                blocking(move || relevance::score_pairs(embedder.as_ref(), &pairs)).await?
            {
                for (name, score) in names.into_iter().zip(scores) {
                    consistency.insert(format!("{name:?}"), serde_json::json!(score));
                    if score < CALIBRATED.value_quote {
                        frame.remove(&name);
                        rejected.push(session::SlotRejection {
                            slot: name,
                            reason: format!(
                                "the value does not say what its quote says (similarity {score:.3} < {:.3}); write the value as a short translation or paraphrase of the quote",
                                CALIBRATED.value_quote
                            ),
                        });
                    }
                }
            }
        }
        let (_, s) = self.shared.apply(id, Event::FrameSet { frame })?;
        Ok((s, rejected, consistency))
    }
}

#[tool_router(router = session_router, vis = "pub(super)")]
impl CodeIntel {
    /// Starts a gated session for a user request (`slots` sets the frame at once): session_id, extraction prompt, a matching past agreement. Pass session_id to code tools as evidence.
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
        let shared = &self.shared;
        let s = shared.sessions.create(Session::new(p.intent, &p.query))?;
        *shared
            .current_session
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(s.id.clone());
        // Map first: a past agreement for a similar request (calibrated threshold).
        let mut map_hint = serde_json::Value::Null;
        let mut map_checked = false;
        if let (Ok(embedder), Ok(store)) = (shared.embedder(), shared.store(false).await) {
            let q = p.query.clone();
            if let Ok(Ok(v)) = blocking(move || embedder.embed_query(&q)).await
                && let Ok(hits) = store.search_map(&v, 1).await
            {
                map_checked = true;
                if let Some(h) = hits
                    .into_iter()
                    .find(|h| h.score >= CALIBRATED.map_short_circuit)
                {
                    map_hint = serde_json::to_value(&h).unwrap_or_default();
                }
            }
        }
        let readiness = index::readiness(&shared.repo, &shared.progress, &shared.config);
        let _ = shared.sessions.log(
            "decisions",
            &serde_json::json!({
                "at": now_secs(), "session_id": s.id, "tool": "start_session", "intent": s.intent,
                "query": s.query, "risk": s.risk, "map_hint": map_hint, "map_checked": map_checked,
            }),
        );
        let mut out = serde_json::json!({
            "session_id": s.id,
            "intent": s.intent,
            "phase": s.phase,
            "risk_level": s.risk,
            "map_hint": map_hint,
            "index": readiness.message,
        });
        let mut text = format!(
            "session {} started ({:?}, phase {:?}).{}",
            s.id,
            s.intent,
            s.phase,
            if map_hint.is_null() {
                String::new()
            } else {
                format!(" Past agreement matches: {map_hint}.")
            },
        );
        match p.slots {
            Some(slots) => {
                let (s, rejected, consistency) = self.apply_frame(&s.id, slots).await?;
                text.push('\n');
                text.push_str(&frame_text(&s, &rejected, &consistency));
                out["accepted"] = serde_json::json!(s.frame.keys().collect::<Vec<_>>());
                out["rejected"] = serde_json::json!(rejected);
                out["requirements"] = serde_json::json!(s.requirements);
                out["next"] = serde_json::json!(next_step(&s));
            }
            None => {
                if matches!(s.intent, Intent::Implement | Intent::Modify) {
                    text.push(' ');
                    text.push_str(EXTRACTION_PROMPT);
                    out["extraction_prompt"] = serde_json::json!(EXTRACTION_PROMPT);
                } else {
                    text.push_str(&format!(" next: {}", next_step(&s)));
                }
                out["next"] = serde_json::json!(next_step(&s));
            }
        }
        success(&out, text)
    }

    /// Sets the query frame: a slot is rejected unless its quote is verbatim in the request and its value means what the quote says. Returns missing slots, risk, requirements, guidance.
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
        let (s, rejected, consistency) = self.apply_frame(&p.session.session_id, p.slots).await?;
        let missing = session::missing_slots(&s.frame);
        let out = serde_json::json!({
            "accepted": s.frame.keys().collect::<Vec<_>>(),
            "rejected": rejected,
            "consistency": consistency,
            "missing_slots": missing,
            "risk_level": s.risk,
            "requirements": s.requirements,
            "next": next_step(&s),
        });
        let text = frame_text(&s, &rejected, &consistency);
        success(&out, text)
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
        respond_view(&self.shared.sessions.get(&p.session_id)?)
    }

    /// Submits the findings: claims are checked against the code and the session, risk is judged from what the change touches; READY when the evidence is there (else the reply says what is missing), or SEMANTIC with a reason per missing requirement.
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
        let event = Event::UnderstandingSubmitted {
            understanding: p.understanding,
            semantic_reasons: p.semantic_reasons,
        };
        let (step, s) = self
            .shared
            .apply_event(&p.session.session_id, event)
            .await?;
        let a = step.assessment.unwrap_or_else(|| session::Assessment {
            rejected_claims: Vec::new(),
            missing: BTreeMap::new(),
            confidence: 0.0,
        });
        let out = serde_json::json!({
            "phase": s.phase,
            "confidence": a.confidence,
            "missing": a.missing,
            "rejected_claims": a.rejected_claims,
            "risk_level": s.risk,
            "risk_reasons": s.risk_reasons,
            "requirements": s.requirements,
            "note": step.note,
            "next": next_step(&s),
        });
        let text = format!(
            "{} (phase {:?}); risk {:?}{}; needs {}; confidence {:.2}{}\nnext: {}",
            step.note,
            s.phase,
            s.risk,
            if s.risk_reasons.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.risk_reasons.join("; "))
            },
            needs_text(&s.requirements),
            a.confidence,
            assessment_text(&a),
            next_step(&s)
        );
        success(&out, text)
    }

    /// Does a natural-language term map to these symbols? Calibrated tiers: FACT, grey (approved, risk HIGH) or rejected. Shows learned pairs for the term.
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
        let undefined: HashSet<String> = blocking(move || {
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
                tier: if undefined.contains(sym) {
                    "reject".to_string()
                } else {
                    format!("{:?}", CALIBRATED.classify(score)).to_lowercase()
                },
            })
            .collect();
        let grey = checks.iter().any(|c| c.tier == "grey");
        let rejected = checks.iter().filter(|c| c.tier == "reject").count();
        let learned: Vec<LearnedPair> = self
            .shared
            .sessions
            .learned_pairs()
            .into_iter()
            .filter(|l| session::normalize(&l.term) == session::normalize(&p.nl_term))
            .collect();
        let (_, s) = self.shared.apply(
            &id,
            Event::RelevanceChecked {
                checks: checks.clone(),
            },
        )?;
        let out = serde_json::json!({
            "results": checks,
            "thresholds": CALIBRATED,
            "risk_level": s.risk,
            "risk_forced_high": grey,
            "learned_pairs": learned,
            "undefined_symbols": undefined,
            "guidance": if rejected == 0 { serde_json::Value::Null } else {
                serde_json::json!(format!("{rejected} symbol(s) do not match `{}`: look again with find_definitions / search_text for the term's meaning, or semantic_search(map)", p.nl_term))
            },
        });
        let mut text = checks
            .iter()
            .map(|c| format!("{} ↔ {}: {:.3} {}", c.nl_term, c.symbol, c.score, c.tier))
            .collect::<Vec<_>>()
            .join("\n");
        if grey {
            text.push_str("\na grey-zone match raised the session's risk to HIGH");
        }
        if let Some(g) = out["guidance"].as_str() {
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
        success(&out, text)
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
        let hypotheses = p
            .hypotheses
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
            .apply_event(
                &p.session.session_id,
                Event::SemanticSubmitted { hypotheses },
            )
            .await?;
        let v = view(&s);
        let text = format!("{}. {}", step.note, view_text(&v));
        success(&v, text)
    }

    /// In VERIFICATION: confirm (with code evidence) or reject each hypothesis; when all are settled, READY if the requirements are met, else EXPLORATION.
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
            .apply_event(
                &p.session.session_id,
                Event::VerificationSubmitted { results },
            )
            .await?;
        let v = view(&s);
        let text = format!("{}. {}", step.note, view_text(&v));
        success(&v, text)
    }

    /// Before every edit: may this file be written? READY IMPLEMENT/MODIFY sessions only, files read in the session, new files beside a read file or on a framework/PSR-4 path; refusals carry recovery_options.
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
        self.shared
            .apply(&p.session.session_id, Event::WriteChecked { target })?;
        success(
            &serde_json::json!({"allowed": true, "file": rel, "convention": convention}),
            match convention {
                Some(c) if !exists => format!("allowed: {rel} (new file; follows {c})"),
                _ => format!("allowed: {rel}"),
            },
        )
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
        let max_tokens =
            super::budget::check_max_tokens(p.max_tokens, 3000).map_err(ToolError::invalid)?;
        let id = p.session.session_id;
        let phase = self.shared.sessions.get(&id)?.phase;
        // Read them now: the content is returned, so the read is real.
        let shared = Arc::clone(&self.shared);
        let files = p.files.clone();
        let per_file = (max_tokens / files.len()).max(100);
        let reads = blocking(move || {
            files
                .iter()
                .map(|f| super::code_tools::read_lines(&shared, f, None, None, per_file))
                .collect::<Result<Vec<_>, ToolError>>()
        })
        .await??;
        let rels: Vec<String> = reads.iter().map(|(l, _)| l.file.clone()).collect();
        let evidence = session::Evidence {
            tool: "add_explored_files".into(),
            params: serde_json::json!({ "files": rels, "reason": p.reason }),
            summary: format!("{} file(s) read: {}", rels.len(), p.reason),
            files: rels.clone(),
            read: rels.clone(),
            total: None,
            at: now_secs(),
            phase,
        };
        let (_, s) = self.shared.apply(&id, Event::ExploredAdded { evidence })?;
        let mut text = format!("read and added {rels:?}; {}\n", view_text(&view(&s)));
        for (_, t) in &reads {
            text.push_str(t);
        }
        let out = serde_json::json!({
            "files": reads.into_iter().map(|(l, _)| l).collect::<Vec<_>>(),
            "phase": s.phase,
            "next": next_step(&s),
        });
        success(&out, text)
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
        let (_, s) = self.shared.apply(&p.session.session_id, event)?;
        respond_view(&s)
    }

    /// Records how the work ended: success saves an agreement (map) and learned term→symbol pairs; failure/partial is logged for get_improvement_insights.
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
        let u = s.understanding.clone().unwrap_or_default();
        let mut symbols: Vec<String> = u.symbols_identified.clone();
        symbols.extend(
            s.hypotheses
                .iter()
                .filter(|h| h.state == HypothesisState::Fact)
                .map(|h| h.symbol.clone()),
        );
        // FACT hypotheses are already in the understanding after verification:
        // keep the first occurrence of each symbol.
        let mut seen = HashSet::new();
        symbols.retain(|sym| seen.insert(sym.clone()));
        let files: Vec<String> = u
            .files_analyzed
            .iter()
            .chain(&s.writes_allowed)
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut out = serde_json::json!({ "session_id": s.id, "outcome": p.outcome });
        if p.outcome == Outcome::Success {
            let path = self.shared.sessions.write_agreement(&s, &symbols, &files)?;
            out["agreement"] = serde_json::json!(self.shared.repo.rel(&path));
            // The map row makes the agreement findable at once.
            let map_added: Result<(), ToolError> = async {
                let embedder = self.shared.embedder()?;
                let store = self.shared.store(false).await?;
                let q = s.query.clone();
                let v = blocking(move || embedder.embed_query(&q)).await??;
                store
                    .add_agreement(&s.id, &s.query, &symbols, &files, &v)
                    .await?;
                Ok(())
            }
            .await;
            out["map_added"] = serde_json::json!(map_added.is_ok());
            if let Err(e) = map_added {
                out["map_error"] = serde_json::json!(e.message());
            }
            let term = s
                .frame
                .get(&SlotName::TargetFeature)
                .map_or_else(|| s.query.clone(), |t| t.quote.clone());
            let pairs: Vec<LearnedPair> = symbols
                .iter()
                .map(|sym| LearnedPair {
                    term: term.clone(),
                    symbol: sym.clone(),
                    session_id: s.id.clone(),
                    learned_at: now_secs(),
                })
                .collect();
            let shared = Arc::clone(&self.shared);
            let kept = blocking(move || {
                let facts = shared.facts();
                shared.sessions.add_learned_pairs(pairs, |p| {
                    session::CodeFacts::symbol_exists(&facts, &p.symbol)
                })
            })
            .await?;
            out["learned_pairs"] = serde_json::json!(kept.ok());
        }
        let record = serde_json::json!({
            "at": now_secs(), "session_id": s.id, "outcome": p.outcome, "intent": s.intent,
            "risk": s.risk, "phase": s.phase, "tools_used": s.tools_used, "refusals": s.refusals.len(),
            "failure_point": p.failure_point, "analysis": p.analysis,
        });
        self.shared.sessions.log("outcomes", &record)?;
        let outcome = format!("{:?}", p.outcome).to_lowercase();
        self.shared
            .apply(&s.id, Event::OutcomeRecorded { outcome })?;
        let text = format!("outcome recorded: {out}");
        success(&out, text)
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
        let mut per_tool: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &s.evidence {
            *per_tool.entry(e.tool.as_str()).or_default() += 1;
        }
        let out = serde_json::json!({
            "session": view(&s),
            "calls_per_tool": per_tool,
            "relevance_checks": s.relevance,
            "writes_allowed": s.writes_allowed,
            "outcome": s.outcome,
            "duration_seconds": s.updated_at.saturating_sub(s.created_at),
        });
        let text = format!(
            "{} tool calls, {} refusals, outcome {:?}",
            s.evidence.len(),
            s.refusals.len(),
            s.outcome
        );
        success(&out, text)
    }

    /// Failure correlations over all recorded outcomes: by tool used, by risk level and by failure point.
    #[tool(annotations(
        title = "Improvement insights",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn get_improvement_insights(&self) -> Result<CallToolResult, ToolError> {
        let insights = crate::learn::insights(&self.shared.sessions.read_log("outcomes"));
        let text = insights.summary();
        success(&insights, text)
    }
}
