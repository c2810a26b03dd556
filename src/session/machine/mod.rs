//! [`transition`]: every change to a session is an [`Event`] applied here,
//! and only here is `phase` assigned. Handlers gather what an event needs
//! (parameters, facts about the code), call it inside the session store's
//! read-modify-write, and report the [`Step`] or the refusal.

use std::collections::BTreeMap;

use super::gate::{WriteTarget, check_write};
use super::model::{
    Agreement, Assessment, Evidence, Hypothesis, HypothesisState, Intent, LineSpan, Phase,
    QueryFrame, Refusal, RelevanceCheck, Requirement, Risk, SemanticReason, Session,
    SessionOutcome, SlotName, Tier, Tool, Understanding,
};
use super::requirements::{BEFORE_SEMANTIC, Facts, assess, reason_fits};

/// What the machine needs to know about the code (the server answers from
/// the repository; tests from a table).
pub trait CodeFacts {
    /// Repo-relative files defining this name (plain or qualified); empty
    /// when there is no definition.
    fn definition_files(&self, symbol: &str) -> Vec<String>;
    /// Where this name (plain or qualified) is defined: file and 1-based
    /// first and last line of each definition; empty when not known, and
    /// then a read of a file holding it counts as reading the definition.
    fn definition_spans(&self, _symbol: &str) -> Vec<LineSpan> {
        Vec::new()
    }
    /// The repo-relative file exists.
    fn file_exists(&self, file: &str) -> bool;
    /// A definition with this name (plain or qualified) exists.
    fn symbol_exists(&self, symbol: &str) -> bool {
        !self.definition_files(symbol).is_empty()
    }
}

/// The symbols a successful session's learned (term, symbol) pairs keep
/// (docs/sessions.md): its entry points, and the agreement's symbols defined in
/// a file the change wrote (its [`Understanding::edits`] when the gate saw
/// no write).
/// Symbols the session only read for context — "tags used across the
/// system" had stored `SimpleListOptions` — stay in the agreement document
/// and the map row, not in the pairs that bias later plans. Order: the
/// agreement's.
pub fn learned_symbols(s: &Session, agreement: &Agreement, facts: &dyn CodeFacts) -> Vec<String> {
    let u = s.understanding.clone().unwrap_or_default();
    let changed: &[String] = if s.writes_allowed.is_empty() {
        u.edits()
    } else {
        &s.writes_allowed
    };
    agreement
        .symbols
        .iter()
        .filter(|sym| {
            u.entry_points.contains(sym)
                || facts
                    .definition_files(sym)
                    .iter()
                    .any(|f| changed.contains(f))
        })
        .cloned()
        .collect()
}

/// One verification result of `submit_verification`.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    pub symbol: String,
    pub confirmed: bool,
    /// Code evidence (file:line and what it shows); required to confirm.
    pub evidence: String,
}

/// Something that happens to a session.
#[derive(Debug, Clone)]
pub enum Event {
    /// `set_query_frame` / `start_session`: verified slots merged into the
    /// frame (replacing the same slot), then `cleared` slots removed.
    FrameSet {
        frame: QueryFrame,
        cleared: Vec<SlotName>,
    },
    /// A code tool ran with the session's id and succeeded.
    ToolRecorded { evidence: Evidence },
    /// The tool gate refused a call (kept for insights).
    Refused { note: String },
    /// `validate_symbol_relevance`: a grey-zone result raises risk to HIGH.
    RelevanceChecked { checks: Vec<RelevanceCheck> },
    /// `submit_understanding`.
    UnderstandingSubmitted {
        understanding: Understanding,
        semantic_reasons: BTreeMap<Requirement, SemanticReason>,
    },
    /// `submit_semantic`: forest hits to verify.
    SemanticSubmitted { hypotheses: Vec<Hypothesis> },
    /// `submit_verification`.
    VerificationSubmitted { results: Vec<Verification> },
    /// `check_write_target` (or the hook): the target as the caller resolved it.
    WriteChecked { target: WriteTarget },
    /// `add_explored_files`, recorded as evidence.
    ExploredAdded { evidence: Evidence },
    /// `revert_to_exploration`.
    Reverted { keep_results: bool },
    /// `record_outcome` (`success`, `failure`, `partial`).
    OutcomeRecorded { outcome: SessionOutcome },
}

/// What a transition tells the agent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    /// One sentence: what happened and what to do next.
    pub note: String,
    /// The assessment of the understanding, when the event made one.
    pub assessment: Option<Assessment>,
}

/// Why an event was not applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejected {
    /// The gate refused it (recorded in the session's refusals).
    Refused(Refusal),
    /// Its arguments are wrong; nothing changed.
    Invalid(String),
}

fn refuse(s: &mut Session, reason: String, options: &[&str]) -> Rejected {
    s.refusals.push(reason.clone());
    Rejected::Refused(Refusal {
        reason,
        recovery_options: options.iter().map(|o| (*o).to_string()).collect(),
    })
}

/// Applies `event` to `s`. The only place a session's phase changes.
///
/// # Errors
/// [`Rejected::Refused`] when the phase or the evidence does not allow the
/// event (the refusal is recorded in `s`); [`Rejected::Invalid`] when its
/// arguments are wrong (`s` is unchanged).
pub fn transition(s: &mut Session, event: Event, facts: &dyn CodeFacts) -> Result<Step, Rejected> {
    match event {
        Event::FrameSet { frame, cleared } => {
            s.frame.extend(frame);
            for name in cleared {
                s.frame.remove(&name);
            }
            s.frame_set = true;
            // What the change is about is known now: its risk, and the
            // requirements that come with it, are said before the agent
            // gathers evidence (judged at submit_understanding only, a
            // password change in the honest agent trial learnt of HIGH's
            // requirements from a refused submission; bench/README.md).
            let (risk, why) = super::risk::frame_risk(&s.frame);
            let raised = risk > s.risk;
            s.raise_risk(risk, why.clone());
            Ok(note(if raised {
                format!("frame set; risk {:?}: {}", s.risk, why.join("; "))
            } else {
                format!(
                    "frame set; risk {:?} until the understanding says what the change touches",
                    s.risk
                )
            }))
        }
        Event::ToolRecorded { mut evidence } => {
            evidence.phase = s.phase;
            s.tools_used.insert(evidence.tool);
            s.files_seen.extend(evidence.files.iter().cloned());
            s.explored.extend(evidence.read.iter().cloned());
            if evidence.tool == Tool::FindReferences
                && let (Some(sym), Some(total)) =
                    (evidence.params.symbol.as_deref(), evidence.total)
            {
                // A view checked by its path is the view by its name, as
                // the understanding names it (`understanding_submitted`).
                let sym =
                    crate::util::blade_view_name(sym).unwrap_or_else(|| sym.trim().to_string());
                if let Some(uses) = evidence.uses {
                    s.reference_uses.insert(sym.clone(), uses);
                }
                s.reference_checks.insert(sym, total);
            }
            if evidence.tool == Tool::SearchText
                && evidence.params.path.as_deref().unwrap_or("").is_empty()
                && let Some(pattern) = evidence.params.pattern.as_deref()
            {
                let literal = evidence.params.literal;
                for name in super::requirements::searched_identifiers(pattern, literal) {
                    s.text_checks
                        .entry(name.to_string())
                        .or_default()
                        .extend(evidence.files.iter().cloned());
                }
            }
            s.evidence.push(evidence);
            Ok(Step::default())
        }
        Event::Refused { note: n } => {
            s.refusals.push(n);
            Ok(Step::default())
        }
        Event::RelevanceChecked { checks } => {
            let grey = checks.iter().any(|c| c.tier == Tier::Grey);
            s.relevance.extend(checks);
            if grey {
                s.grey_zone = true;
                s.raise_risk(
                    Risk::High,
                    vec!["a grey-zone relevance result (validate_symbol_relevance)".into()],
                );
            }
            Ok(note(if grey {
                "a grey-zone match raised the risk to HIGH".into()
            } else {
                String::new()
            }))
        }
        Event::UnderstandingSubmitted {
            understanding,
            semantic_reasons,
        } => understanding_submitted(s, understanding, &semantic_reasons, facts),
        Event::SemanticSubmitted { hypotheses } => semantic_submitted(s, hypotheses, facts),
        Event::VerificationSubmitted { results } => verification_submitted(s, &results, facts),
        Event::WriteChecked { target } => match check_write(s, &target) {
            Ok(()) => {
                s.writes_allowed.push(target.file.clone());
                Ok(note(format!("allowed: {}", target.file)))
            }
            Err(r) => {
                let options: Vec<&str> = r.recovery_options.iter().map(String::as_str).collect();
                Err(refuse(
                    s,
                    format!("write to `{}` refused: {}", target.file, r.reason),
                    &options,
                ))
            }
        },
        Event::ExploredAdded { mut evidence } => {
            evidence.phase = s.phase;
            s.explored.extend(evidence.read.iter().cloned());
            s.files_seen.extend(evidence.files.iter().cloned());
            let n = evidence.read.len();
            let added: Vec<String> = evidence
                .read
                .iter()
                .filter(|f| !s.covers(f))
                .cloned()
                .collect();
            s.evidence.push(evidence);
            if s.phase != Phase::Ready || added.is_empty() {
                return Ok(note(format!("{n} file(s) read and added as explored")));
            }
            Ok(note(widen_scope(s, added)))
        }
        Event::Reverted { keep_results } => {
            s.phase = Phase::Exploration;
            if !keep_results {
                s.understanding = None;
                s.last_assessment = None;
                s.hypotheses.clear();
                s.explored.clear();
                s.scope_added.clear();
            }
            Ok(note("back to EXPLORATION".into()))
        }
        Event::OutcomeRecorded { outcome } => {
            s.outcome = Some(outcome);
            Ok(Step::default())
        }
    }
}

/// READY, and the agent adds files the understanding did not list: the
/// risk of touching them is assessed as the understanding's was. When it
/// stays, they join the change (writable); when it rises, the session goes
/// back to EXPLORATION to meet the new requirements with the files listed
/// (docs/sessions.md § Gate).
fn widen_scope(s: &mut Session, added: Vec<String>) -> String {
    let (risk, why) = super::risk::touch_risk(&added, &[], &[], &BTreeMap::new(), &BTreeMap::new());
    if risk > s.risk {
        s.raise_risk(risk, why.clone());
        s.phase = Phase::Exploration;
        return format!(
            "{added:?} raise the risk to {risk:?} ({}): back to EXPLORATION; submit_understanding with them in files_to_edit once the {risk:?} requirements are met",
            why.join("; ")
        );
    }
    s.scope_added.extend(added.iter().cloned());
    format!(
        "{added:?} added to the change (risk stays {:?}); they may be written",
        s.risk
    )
}

fn note(n: String) -> Step {
    Step {
        note: n,
        assessment: None,
    }
}

fn assessment(s: &Session, u: &Understanding, facts: &dyn CodeFacts) -> Assessment {
    let definition_files = |x: &str| facts.definition_files(x);
    let lines = super::requirements::lines_read(&s.evidence);
    let definition_read = |x: &str| {
        let spans = facts.definition_spans(x);
        if spans.is_empty() {
            return definition_files(x).iter().any(|f| s.explored.contains(f));
        }
        spans
            .iter()
            .any(|sp| super::requirements::definition_read(sp, &s.explored, &lines))
    };
    let file_exists = |x: &str| facts.file_exists(x);
    let is_test = crate::classify::is_test_path;
    assess(
        &s.requirements,
        u,
        &Facts {
            definition_files: &definition_files,
            file_exists: &file_exists,
            is_test: &is_test,
            files_read: &s.explored,
            definition_read: &definition_read,
            reference_checks: &s.reference_checks,
            text_checks: &s.text_checks,
        },
    )
}

/// Rewrites each Blade view path in `list` to the view's name, and drops a
/// path whose view is already in the list, or a name that a path before it
/// gave; any other symbol written twice stays twice (the claims check
/// refuses it).
fn views_by_name(list: &mut Vec<String>) {
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    let mut from_paths: Vec<String> = Vec::new();
    for sym in list.drain(..) {
        match crate::util::blade_view_name(&sym) {
            Some(view) if out.contains(&view) => {}
            Some(view) => {
                from_paths.push(view.clone());
                out.push(view);
            }
            None if from_paths.contains(&sym) => {}
            None => out.push(sym),
        }
    }
    *list = out;
}

/// EXPLORATION → READY when the requirements are met; → SEMANTIC when exact
/// tools were tried and a fitting reason is given for each missing
/// requirement (docs/sessions.md § Phases).
fn understanding_submitted(
    s: &mut Session,
    mut u: Understanding,
    reasons: &BTreeMap<Requirement, SemanticReason>,
    facts: &dyn CodeFacts,
) -> Result<Step, Rejected> {
    // A Blade view named by its path is the view by its name
    // (`models.links.partials.single-simple`): a template-only change
    // names the view as its symbol, which has no other name (an agent in
    // the honest trial, bench/README.md § Honest agent trial, named a
    // method it did not change to get past the symbols requirement).
    // Named both ways it is one symbol, not one "listed twice" (an agent
    // in the trial was refused for it).
    views_by_name(&mut u.symbols_identified);
    views_by_name(&mut u.entry_points);
    if s.phase != Phase::Exploration {
        let reason = format!(
            "submit_understanding is for EXPLORATION; the session is in {:?}",
            s.phase
        );
        return Err(refuse(
            s,
            reason,
            &["get_session_status", "revert_to_exploration"],
        ));
    }
    if !s.frame_set && matches!(s.intent, Intent::Implement | Intent::Modify) {
        return Err(refuse(
            s,
            "set the query frame first".into(),
            &["set_query_frame"],
        ));
    }
    // Risk from what the change is about (the frame's desired action and
    // observed issue) and what it touches: the files it edits (or, when
    // none are named, the files it read) and the symbols in them. Never
    // lowered.
    let (risk, why) = super::risk::frame_risk(&s.frame);
    s.raise_risk(risk, why);
    // Of the symbols, those the change edits: defined in a file it edits,
    // or nowhere yet (code it creates). A pattern to copy
    // (`AuthController::register`) is read, not touched: two agents in
    // the honest trial read its sensitive name as a risk reason and
    // objected (bench/README.md § Honest agent trial). Nor is a test
    // (`ResetPasswordCommandTest::testCommand`): the code it tests carries
    // the risk (`risk::touch_risk` leaves test files out the same way).
    let touched: Vec<String> = u
        .symbols_identified
        .iter()
        .filter(|sym| {
            let defs = facts.definition_files(sym);
            defs.is_empty()
                || defs
                    .iter()
                    .any(|f| u.edits().contains(f) && !crate::classify::is_test_path(f))
        })
        .cloned()
        .collect();
    let (risk, why) = super::risk::touch_risk(
        u.edits(),
        &touched,
        &u.entry_points,
        &s.reference_checks,
        &s.reference_uses,
    );
    s.raise_risk(risk, why);
    let a = assessment(s, &u, facts);
    let missing: Vec<Requirement> = a.missing.keys().copied().collect();
    let untried: Vec<&str> = BEFORE_SEMANTIC
        .into_iter()
        .filter(|t| !s.tools_used.contains(t))
        .map(Tool::name)
        .collect();
    let reasons_ok = !missing.is_empty()
        && missing
            .iter()
            .all(|m| reasons.get(m).is_some_and(|r| reason_fits(*m, *r)));
    let pending = s
        .hypotheses
        .iter()
        .any(|h| h.state == HypothesisState::Hypothesis);
    let (phase, n) = if a.complete() && !pending {
        (Phase::Ready, "requirements met: READY".to_string())
    } else if !reasons.is_empty() && !untried.is_empty() {
        (
            Phase::Exploration,
            format!("SEMANTIC needs {untried:?} to have been tried in this session first"),
        )
    } else if !reasons.is_empty() && !reasons_ok {
        (
            Phase::Exploration,
            "each missing requirement needs a fitting reason to enter SEMANTIC (symbols: no_definition_found|architecture_unknown; entry_points: no_definition_found|no_reference_found; patterns: no_similar_implementation|architecture_unknown; files: context_fragmented|architecture_unknown; coverage: no_reference_found|context_fragmented)".to_string(),
        )
    } else if reasons_ok && a.rejected_claims.is_empty() {
        (
            Phase::Semantic,
            "entering SEMANTIC: search forest for hypotheses".to_string(),
        )
    } else {
        (
            Phase::Exploration,
            "requirements not met: keep exploring".to_string(),
        )
    };
    s.understanding = Some(u);
    s.last_assessment = Some(a.clone());
    s.phase = phase;
    Ok(Step {
        note: n,
        assessment: Some(a),
    })
}

/// SEMANTIC → VERIFICATION once a forest search was made in this phase.
fn semantic_submitted(
    s: &mut Session,
    hypotheses: Vec<Hypothesis>,
    facts: &dyn CodeFacts,
) -> Result<Step, Rejected> {
    if s.phase != Phase::Semantic {
        let reason = format!(
            "submit_semantic is for SEMANTIC; the session is in {:?}",
            s.phase
        );
        return Err(refuse(
            s,
            reason,
            &[
                "submit_understanding with semantic_reasons",
                "get_session_status",
            ],
        ));
    }
    if !s
        .evidence
        .iter()
        .any(|e| matches!(e.tool, Tool::SemanticSearch | Tool::Query) && e.phase == Phase::Semantic)
    {
        return Err(refuse(
            s,
            "no forest search in this SEMANTIC phase yet".into(),
            &["semantic_search with collection=forest and session_id"],
        ));
    }
    if hypotheses.is_empty() {
        return Err(Rejected::Invalid("hypotheses is empty".into()));
    }
    if let Some(h) = hypotheses.iter().find(|h| !facts.file_exists(&h.file)) {
        return Err(Rejected::Invalid(format!(
            "hypothesis `{}`: file `{}` does not exist",
            h.symbol, h.file
        )));
    }
    let n = hypotheses.len();
    s.hypotheses.extend(hypotheses);
    s.phase = Phase::Verification;
    Ok(note(format!(
        "{n} hypothesis(es) recorded: confirm or reject each with code tools, then submit_verification"
    )))
}

/// VERIFICATION: hypotheses become FACT or REJECTED; when none is left,
/// facts join the understanding and it is assessed again: READY or back to
/// EXPLORATION.
fn verification_submitted(
    s: &mut Session,
    results: &[Verification],
    facts: &dyn CodeFacts,
) -> Result<Step, Rejected> {
    if s.phase != Phase::Verification {
        let reason = format!(
            "submit_verification is for VERIFICATION; the session is in {:?}",
            s.phase
        );
        return Err(refuse(s, reason, &["get_session_status"]));
    }
    if let Some(r) = results
        .iter()
        .find(|r| r.confirmed && r.evidence.trim().is_empty())
    {
        return Err(Rejected::Invalid(format!(
            "confirming `{}` needs code evidence (file:line and what it shows)",
            r.symbol
        )));
    }
    let undefined: Vec<&str> = results
        .iter()
        .filter(|r| r.confirmed && !facts.symbol_exists(&r.symbol))
        .map(|r| r.symbol.as_str())
        .collect();
    if !undefined.is_empty() {
        return Err(Rejected::Invalid(format!(
            "cannot confirm {undefined:?}: no definition in the repository"
        )));
    }
    for r in results {
        for h in s
            .hypotheses
            .iter_mut()
            .filter(|h| h.symbol == r.symbol && h.state == HypothesisState::Hypothesis)
        {
            h.state = if r.confirmed {
                HypothesisState::Fact
            } else {
                HypothesisState::Rejected
            };
            h.evidence = Some(r.evidence.clone());
        }
    }
    if s.hypotheses
        .iter()
        .any(|h| h.state == HypothesisState::Hypothesis)
    {
        return Ok(note("hypotheses remain: verify them all".into()));
    }
    // Confirmed facts join the understanding; rejected ones leave no trace in it.
    let confirmed: Vec<(String, String)> = s
        .hypotheses
        .iter()
        .filter(|h| h.state == HypothesisState::Fact)
        .map(|h| (h.symbol.clone(), h.file.clone()))
        .collect();
    let mut u = s.understanding.clone().unwrap_or_default();
    for (sym, file) in confirmed {
        if !u.symbols_identified.contains(&sym) {
            u.symbols_identified.push(sym);
        }
        if !u.files_analyzed.contains(&file) {
            u.files_analyzed.push(file);
        }
    }
    let a = assessment(s, &u, facts);
    let ready = a.complete();
    s.understanding = Some(u);
    s.last_assessment = Some(a.clone());
    s.phase = if ready {
        Phase::Ready
    } else {
        Phase::Exploration
    };
    Ok(Step {
        note: if ready {
            "all hypotheses settled and requirements met: READY".into()
        } else {
            "all hypotheses settled; requirements still missing: back to EXPLORATION".into()
        },
        assessment: Some(a),
    })
}

#[cfg(test)]
mod tests;
