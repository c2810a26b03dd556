//! [`transition`]: every change to a session is an [`Event`] applied here,
//! and only here is `phase` assigned. Handlers gather what an event needs
//! (parameters, facts about the code), call it inside the session store's
//! read-modify-write, and report the [`Step`] or the refusal.

use std::collections::BTreeMap;

use super::gate::{WriteTarget, check_write};
use super::model::{
    Assessment, Evidence, Hypothesis, HypothesisState, Intent, Phase, QueryFrame, Refusal,
    RelevanceCheck, Requirement, Risk, SemanticReason, Session, Understanding,
};
use super::requirements::{BEFORE_SEMANTIC, Facts, assess, reason_fits};

/// What the machine needs to know about the code (the server answers from
/// the repository; tests from a table).
pub trait CodeFacts {
    /// Repo-relative files defining this name (plain or qualified); empty
    /// when there is no definition.
    fn definition_files(&self, symbol: &str) -> Vec<String>;
    /// The repo-relative file exists.
    fn file_exists(&self, file: &str) -> bool;
    /// A definition with this name (plain or qualified) exists.
    fn symbol_exists(&self, symbol: &str) -> bool {
        !self.definition_files(symbol).is_empty()
    }
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
    /// `set_query_frame`: the frame whose quotes (and values) were verified.
    FrameSet { frame: QueryFrame },
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
    OutcomeRecorded { outcome: String },
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
        Event::FrameSet { frame } => {
            s.frame = frame;
            s.frame_set = true;
            Ok(note(format!(
                "frame set; risk {:?} until the understanding says what the change touches",
                s.risk
            )))
        }
        Event::ToolRecorded { evidence } => {
            s.tools_used.insert(evidence.tool.clone());
            s.files_seen.extend(evidence.files.iter().cloned());
            s.explored.extend(evidence.read.iter().cloned());
            if evidence.tool == "find_references"
                && let (Some(sym), Some(total)) =
                    (evidence.params["symbol"].as_str(), evidence.total)
            {
                s.reference_checks.insert(sym.trim().to_string(), total);
            }
            s.evidence.push(evidence);
            Ok(Step::default())
        }
        Event::Refused { note: n } => {
            s.refusals.push(n);
            Ok(Step::default())
        }
        Event::RelevanceChecked { checks } => {
            let grey = checks.iter().any(|c| c.tier == "grey");
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
        Event::ExploredAdded { evidence } => {
            s.explored.extend(evidence.read.iter().cloned());
            s.files_seen.extend(evidence.files.iter().cloned());
            let n = evidence.read.len();
            s.evidence.push(evidence);
            Ok(note(format!("{n} file(s) read and added as explored")))
        }
        Event::Reverted { keep_results } => {
            s.phase = Phase::Exploration;
            if !keep_results {
                s.understanding = None;
                s.last_assessment = None;
                s.hypotheses.clear();
                s.explored.clear();
            }
            Ok(note("back to EXPLORATION".into()))
        }
        Event::OutcomeRecorded { outcome } => {
            s.outcome = Some(outcome);
            Ok(Step::default())
        }
    }
}

fn note(n: String) -> Step {
    Step {
        note: n,
        assessment: None,
    }
}

fn assessment(s: &Session, u: &Understanding, facts: &dyn CodeFacts) -> Assessment {
    let definition_files = |x: &str| facts.definition_files(x);
    let file_exists = |x: &str| facts.file_exists(x);
    let is_test =
        |f: &str| crate::classify::classify_path(f).class == crate::classify::FileClass::Test;
    assess(
        &s.requirements,
        u,
        &Facts {
            definition_files: &definition_files,
            file_exists: &file_exists,
            is_test: &is_test,
            files_read: &s.explored,
            reference_checks: &s.reference_checks,
        },
    )
}

/// EXPLORATION → READY when the requirements are met; → SEMANTIC when exact
/// tools were tried and a fitting reason is given for each missing
/// requirement (docs/sessions.md § Phases).
fn understanding_submitted(
    s: &mut Session,
    u: Understanding,
    reasons: &BTreeMap<Requirement, SemanticReason>,
    facts: &dyn CodeFacts,
) -> Result<Step, Rejected> {
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
    // Risk from what the change touches: the files it edits (or, when none
    // are named, the files it read) and its symbols. Never lowered.
    let touched: &[String] = if u.files_to_edit.is_empty() {
        &u.files_analyzed
    } else {
        &u.files_to_edit
    };
    let (risk, why) = super::risk::touch_risk(touched, &u.symbols_identified, &s.reference_checks);
    s.raise_risk(risk, why);
    let a = assessment(s, &u, facts);
    let missing: Vec<Requirement> = a.missing.keys().copied().collect();
    let untried: Vec<&str> = BEFORE_SEMANTIC
        .iter()
        .copied()
        .filter(|t| !s.tools_used.contains(*t))
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
    if !s.evidence.iter().any(|e| {
        matches!(e.tool.as_str(), "semantic_search" | "query") && e.phase == Phase::Semantic
    }) {
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
mod tests {
    use super::*;
    use crate::session::{PatternClaim, Slot, SlotName};

    /// The code of the tests: `render`, `layout`, `Page` in a.py, `Widget`
    /// and `hash` in d.py; files `a.py`, `b.py`, `c.py`, `d.py`.
    struct Code;
    impl CodeFacts for Code {
        fn definition_files(&self, s: &str) -> Vec<String> {
            match s {
                "render" | "layout" | "Page" => vec!["a.py".into()],
                "Widget" | "hash" => vec!["d.py".into()],
                _ => vec![],
            }
        }
        fn file_exists(&self, f: &str) -> bool {
            matches!(f, "a.py" | "b.py" | "c.py" | "d.py")
        }
    }

    /// A write check of an existing file.
    fn write(file: &str) -> Event {
        Event::WriteChecked {
            target: WriteTarget {
                file: file.into(),
                exists: Code.file_exists(file),
                allow_new: false,
                class: crate::classify::FileClass::Source,
                convention: None,
                existing_dir: String::new(),
            },
        }
    }

    /// A tool call naming `files`; `read_file` reads them, `find_references`
    /// on `render` finds two uses.
    fn tool(name: &str, files: &[&str], phase: Phase) -> Event {
        let files: Vec<String> = files.iter().map(|f| (*f).to_string()).collect();
        Event::ToolRecorded {
            evidence: Evidence {
                tool: name.into(),
                params: serde_json::json!({"symbol": "render"}),
                summary: String::new(),
                read: if name == "read_file" {
                    files.clone()
                } else {
                    vec![]
                },
                total: (name == "find_references").then_some(2),
                files,
                at: 0,
                phase,
            },
        }
    }

    fn frame() -> Event {
        let slot = |v: &str| Slot {
            value: v.into(),
            quote: v.into(),
        };
        Event::FrameSet {
            frame: [
                (SlotName::TargetFeature, slot("page rendering")),
                (SlotName::DesiredAction, slot("fix")),
            ]
            .into(),
        }
    }

    fn understanding(symbols: &[&str], files: &[&str]) -> Understanding {
        Understanding {
            symbols_identified: symbols.iter().map(|s| (*s).to_string()).collect(),
            entry_points: symbols.iter().take(1).map(|s| (*s).to_string()).collect(),
            existing_patterns: vec![PatternClaim {
                name: "view".into(),
                files: vec!["a.py".into()],
            }],
            files_analyzed: files.iter().map(|f| (*f).to_string()).collect(),
            files_to_edit: vec![],
            slot_evidence: BTreeMap::new(),
        }
    }

    fn submit(u: Understanding, reasons: &[(Requirement, SemanticReason)]) -> Event {
        Event::UnderstandingSubmitted {
            understanding: u,
            semantic_reasons: reasons.iter().copied().collect(),
        }
    }

    /// What a case expects after its last event: (phase, refused?, invalid?).
    type Expect = (Phase, bool, bool);

    /// Applies `events` to a new session of `intent` and compares the last
    /// event's outcome with `expected`.
    fn check(intent: Intent, events: Vec<Event>, expected: Expect) {
        let mut s = Session::new(intent, "fix page rendering");
        let mut last = Ok(Step::default());
        for e in events {
            last = transition(&mut s, e, &Code);
        }
        let got = (
            s.phase,
            matches!(last, Err(Rejected::Refused(_))),
            matches!(last, Err(Rejected::Invalid(_))),
        );
        assert_eq!(got, expected, "{last:?}");
    }

    /// Every transition and refusal of the phase machine, one row each.
    #[test]
    fn transitions() {
        use Phase::{Exploration, Ready, Semantic};
        let explored = || {
            vec![
                frame(),
                tool("find_definitions", &["a.py"], Exploration),
                tool("find_references", &["b.py"], Exploration),
                tool("search_text", &["c.py"], Exploration),
                tool("read_file", &["a.py", "b.py"], Exploration),
            ]
        };
        let with = |mut v: Vec<Event>, e: Vec<Event>| {
            v.extend(e);
            v
        };
        let enough = || understanding(&["render", "layout", "Page"], &["a.py", "b.py"]);
        // Names c.py, which a search showed but nobody read.
        let too_little = || understanding(&["render"], &["c.py"]);
        let reasons = [(Requirement::Files, SemanticReason::ContextFragmented)];
        let to_semantic = || {
            with(
                explored(),
                vec![
                    submit(too_little(), &reasons),
                    tool("semantic_search", &["d.py"], Semantic),
                ],
            )
        };
        let hyp = |sym: &str, file: &str| Hypothesis {
            symbol: sym.into(),
            file: file.into(),
            slot_source: "symbols".into(),
            reason: "forest hit".into(),
            state: HypothesisState::Hypothesis,
            evidence: None,
        };
        let verify = |sym: &str, ok: bool| Verification {
            symbol: sym.into(),
            confirmed: ok,
            evidence: if ok {
                "d.py:1 def".into()
            } else {
                String::new()
            },
        };
        let cases: Vec<(Intent, Vec<Event>, Expect)> = vec![
            // QUESTION starts READY; INVESTIGATE and MODIFY in EXPLORATION.
            (Intent::Question, vec![], (Ready, false, false)),
            (Intent::Investigate, vec![], (Exploration, false, false)),
            // MODIFY needs its frame before an understanding.
            (
                Intent::Modify,
                vec![submit(enough(), &[])],
                (Exploration, true, false),
            ),
            // Enough checked claims → READY.
            (
                Intent::Modify,
                with(explored(), vec![submit(enough(), &[])]),
                (Ready, false, false),
            ),
            // Too little, no reasons → stays in EXPLORATION.
            (
                Intent::Modify,
                with(explored(), vec![submit(too_little(), &[])]),
                (Exploration, false, false),
            ),
            // Reasons before exact tools were tried → EXPLORATION.
            (
                Intent::Modify,
                vec![frame(), submit(too_little(), &reasons)],
                (Exploration, false, false),
            ),
            // A reason that does not fit what is missing → EXPLORATION.
            (
                Intent::Modify,
                with(
                    explored(),
                    vec![submit(
                        too_little(),
                        &[(Requirement::Files, SemanticReason::NoDefinitionFound)],
                    )],
                ),
                (Exploration, false, false),
            ),
            // Fitting reasons after exact tools → SEMANTIC.
            (
                Intent::Modify,
                with(explored(), vec![submit(too_little(), &reasons)]),
                (Semantic, false, false),
            ),
            // submit_understanding outside EXPLORATION is refused.
            (
                Intent::Modify,
                with(to_semantic(), vec![submit(enough(), &[])]),
                (Semantic, true, false),
            ),
            // submit_semantic outside SEMANTIC is refused; without a forest
            // search in SEMANTIC too; with no hypothesis or a missing file it is invalid.
            (
                Intent::Modify,
                with(
                    explored(),
                    vec![Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py")],
                    }],
                ),
                (Exploration, true, false),
            ),
            (
                Intent::Modify,
                with(
                    explored(),
                    vec![
                        submit(too_little(), &reasons),
                        Event::SemanticSubmitted {
                            hypotheses: vec![hyp("Widget", "d.py")],
                        },
                    ],
                ),
                (Semantic, true, false),
            ),
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![Event::SemanticSubmitted { hypotheses: vec![] }],
                ),
                (Semantic, false, true),
            ),
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Token", "zz.py")],
                    }],
                ),
                (Semantic, false, true),
            ),
            // A forest search, then hypotheses → VERIFICATION.
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py")],
                    }],
                ),
                (Phase::Verification, false, false),
            ),
            // Verification outside VERIFICATION is refused; confirming without
            // evidence or an undefined symbol is invalid.
            (
                Intent::Modify,
                with(
                    explored(),
                    vec![Event::VerificationSubmitted {
                        results: vec![verify("Widget", true)],
                    }],
                ),
                (Exploration, true, false),
            ),
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![
                        Event::SemanticSubmitted {
                            hypotheses: vec![hyp("Widget", "d.py")],
                        },
                        Event::VerificationSubmitted {
                            results: vec![Verification {
                                evidence: String::new(),
                                ..verify("Widget", true)
                            }],
                        },
                    ],
                ),
                (Phase::Verification, false, true),
            ),
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![
                        Event::SemanticSubmitted {
                            hypotheses: vec![hyp("Ghost", "d.py")],
                        },
                        Event::VerificationSubmitted {
                            results: vec![verify("Ghost", true)],
                        },
                    ],
                ),
                (Phase::Verification, false, true),
            ),
            // One of two hypotheses settled → still VERIFICATION.
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![
                        Event::SemanticSubmitted {
                            hypotheses: vec![hyp("Widget", "d.py"), hyp("hash", "d.py")],
                        },
                        Event::VerificationSubmitted {
                            results: vec![verify("Widget", true)],
                        },
                    ],
                ),
                (Phase::Verification, false, false),
            ),
            // All settled, facts fill the gaps → READY; rejected → EXPLORATION.
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![
                        Event::SemanticSubmitted {
                            hypotheses: vec![hyp("Widget", "d.py"), hyp("hash", "d.py")],
                        },
                        tool("read_file", &["c.py", "d.py"], Phase::Verification),
                        Event::VerificationSubmitted {
                            results: vec![verify("Widget", true), verify("hash", true)],
                        },
                    ],
                ),
                (Ready, false, false),
            ),
            // Confirmed, but the files were never read → EXPLORATION.
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![
                        Event::SemanticSubmitted {
                            hypotheses: vec![hyp("Widget", "d.py")],
                        },
                        Event::VerificationSubmitted {
                            results: vec![verify("Widget", true)],
                        },
                    ],
                ),
                (Exploration, false, false),
            ),
            (
                Intent::Modify,
                with(
                    to_semantic(),
                    vec![
                        Event::SemanticSubmitted {
                            hypotheses: vec![hyp("Widget", "d.py")],
                        },
                        Event::VerificationSubmitted {
                            results: vec![verify("Widget", false)],
                        },
                    ],
                ),
                (Exploration, false, false),
            ),
            // Revert from anywhere → EXPLORATION.
            (
                Intent::Question,
                vec![Event::Reverted { keep_results: true }],
                (Exploration, false, false),
            ),
            // Writes: refused before READY, allowed for an explored file in
            // READY, refused for an unexplored one.
            (
                Intent::Modify,
                with(explored(), vec![write("a.py")]),
                (Exploration, true, false),
            ),
            (
                Intent::Modify,
                with(explored(), vec![submit(enough(), &[]), write("a.py")]),
                (Ready, false, false),
            ),
            (
                Intent::Modify,
                with(explored(), vec![submit(enough(), &[]), write("zz.py")]),
                (Ready, true, false),
            ),
        ];
        for (intent, events, expected) in cases {
            check(intent, events, expected);
        }
    }

    #[test]
    fn risk_rises_with_what_is_touched_and_never_falls() {
        let mut s = Session::new(Intent::Modify, "fix page rendering");
        transition(&mut s, frame(), &Code).unwrap();
        assert_eq!(s.risk, Risk::Low);
        let check = RelevanceCheck {
            nl_term: "描画".into(),
            symbol: "render".into(),
            score: 0.8,
            tier: "grey".into(),
        };
        transition(
            &mut s,
            Event::RelevanceChecked {
                checks: vec![check],
            },
            &Code,
        )
        .unwrap();
        assert_eq!(s.risk, Risk::High);
        assert!(s.requirements.all_entry_points);
        assert!(s.requirements.needs.contains(&Requirement::Coverage));
        let r = transition(&mut s, submit(understanding(&["render"], &[]), &[]), &Code);
        assert!(r.is_ok());
        assert_eq!(s.risk, Risk::High, "a smaller submission does not lower it");
        let r = transition(&mut s, write("a.py"), &Code);
        assert!(matches!(r, Err(Rejected::Refused(_))));
        assert_eq!(s.refusals.len(), 1, "{:?}", s.refusals);

        // Editing a migration makes a plain fix MEDIUM.
        let mut s = Session::new(Intent::Modify, "fix page rendering");
        transition(&mut s, frame(), &Code).unwrap();
        let mut u = understanding(&["render"], &["a.py"]);
        u.files_to_edit = vec!["database/migrations/2024_create_pages.php".into()];
        transition(&mut s, submit(u, &[]), &Code).unwrap();
        assert_eq!(s.risk, Risk::Medium, "{:?}", s.risk_reasons);
    }
}
