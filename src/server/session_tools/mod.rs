//! Session tools (docs/sessions.md): start, frame, status, understanding,
//! relevance, hypotheses and their verification, the write gate, recovery
//! and the learning loop. Handlers parse parameters, gather facts about the
//! code, apply one [`session::Event`] through the state machine under the
//! session's lock, and format the result; refusals are tool errors with
//! `recovery_options`.

mod evidence;
mod frame;
mod outcome;
mod write;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::wire::{FrameSet, SessionView};
use super::{CodeIntel, NoFacts, Reply, Shared, ToolError, blocking};
use crate::rank::value_check;
use crate::relevance::{self, CALIBRATED};
use crate::search::symbols::{Definition, component_name, qualifier_matches_in, split_qualified};
use crate::session::{
    self, Event, Intent, Requirement, SemanticReason, Session, SessionOutcome, Slot, SlotName,
    Understanding,
};

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
    /// From start_session.
    pub session_id: String,
}

/// The four slots: one left out keeps the frame's, `null` clears it, a
/// value replaces it (after the quote and value checks).
// An unknown slot name is an error naming the four: a slot `target` was
// once dropped in silence and the reply called every slot "not in the
// request".
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlotsInput {
    /// Feature or component, e.g. {"value": "login", "quote": "ログイン機能"}.
    #[serde(default, deserialize_with = "present")]
    pub target_feature: Option<Option<Slot>>,
    /// When it happens.
    #[serde(default, deserialize_with = "present")]
    pub trigger_condition: Option<Option<Slot>>,
    /// What goes wrong now.
    #[serde(default, deserialize_with = "present")]
    pub observed_issue: Option<Option<Slot>>,
    /// What the user wants done.
    #[serde(default, deserialize_with = "present")]
    pub desired_action: Option<Option<Slot>>,
}

/// A key that is present, `null` included, is `Some`; a missing key stays
/// `None` through `#[serde(default)]`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Slot>>, D::Error> {
    Option::<Slot>::deserialize(d).map(Some)
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
    /// To enter SEMANTIC when exact tools found nothing: missing requirement → reason.
    // Which reasons fit which requirement: docs/sessions.md.
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
    /// Reply budget in tokens, 100-20000 (default 3000).
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

/// Parameters of `record_outcome`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RecordOutcomeParams {
    #[serde(flatten)]
    pub session: SessionParams,
    /// success, failure or partial.
    pub outcome: SessionOutcome,
    /// What worked or went wrong.
    #[serde(default)]
    pub analysis: String,
    /// For failure/partial: where it went wrong (exploration, wrong_symbol, …).
    #[serde(default)]
    pub failure_point: Option<String>,
}

/// The session view as a reply.
fn view_reply(s: &Session) -> Reply<SessionView> {
    let v = SessionView::of(s);
    let text = view_text(&v);
    Reply::new(v, text)
}

fn view_text(v: &SessionView) -> String {
    format!(
        "session {} {} phase {}, risk {}; needs {}; read {} file(s); next: {}",
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
    needs_text_of(r, &r.needs)
}

/// [`needs_text`] of `needs` only (some of `r.needs`).
fn needs_text_of(r: &session::Requirements, needs: &[Requirement]) -> String {
    if needs.is_empty() {
        return "nothing".into();
    }
    needs
        .iter()
        .map(|n| {
            let name = n.name();
            if *n == Requirement::EntryPoints && r.all_entry_points {
                format!("{name} (find_references on every entry point)")
            } else {
                format!("{name} ({})", n.satisfied_by())
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The requirements as a submission left them: in READY every one, as
/// met; otherwise the unmet ones with what meets them, then the met ones
/// by name (a refusal that listed every requirement as "needs" beside the
/// one gap made an agent in a trial hunt for what was left; bench/README.md
/// § Honest agent trial).
fn requirements_text(r: &session::Requirements, a: &session::Assessment, ready: bool) -> String {
    if ready {
        return format!("met {}", needs_text(r));
    }
    let (unmet, met): (Vec<Requirement>, Vec<Requirement>) =
        r.needs.iter().partition(|n| a.missing.contains_key(n));
    let met: Vec<&str> = met.iter().map(|n| n.name()).collect();
    if unmet.is_empty() {
        // Only rejected claims hold READY back ("needs nothing" beside
        // "not met" read as a contradiction to an agent in a trial).
        return format!(
            "requirements met ({}), but the rejected claims below hold READY back",
            if met.is_empty() {
                "none needed".to_string()
            } else {
                met.join(", ")
            }
        );
    }
    let mut out = format!("needs {}", needs_text_of(r, &unmet));
    if !met.is_empty() {
        out.push_str(&format!("; met {}", met.join(", ")));
    }
    out
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
    // Claims taken as said: symbols to be created, files never read.
    for (label, items) in [
        (
            "to be created by the change (no definition yet; taken as said)",
            &a.created,
        ),
        (
            "named but never read in this session (taken as said, not checked)",
            &a.unchecked,
        ),
    ] {
        if !items.is_empty() {
            let names: Vec<String> = items.iter().map(|x| format!("`{x}`")).collect();
            out.push_str(&format!("\n- {label}: {}", names.join(", ")));
        }
    }
    out
}

/// What the state machine needs to know about the repository, computed on
/// the blocking pool (the first call parses every file; later ones reuse the
/// symbol cache).
struct RepoFacts {
    /// (repo-relative file, definition).
    defs: Vec<(String, Definition)>,
    names: HashSet<String>,
    repo: crate::repo::Repo,
}

impl RepoFacts {
    /// The definitions of `symbol` (plain or qualified: `Class::method`,
    /// `Class.method`, `Ns\Class`), with their files.
    fn defining(&self, symbol: &str) -> impl Iterator<Item = &(String, Definition)> {
        let (qualifier, name) = split_qualified(symbol);
        // A bare name no file defines matches nothing: no scan.
        let defs: &[(String, Definition)] = if qualifier.is_some() || self.names.contains(&name) {
            &self.defs
        } else {
            &[]
        };
        defs.iter().filter(move |(f, d)| {
            d.name == name
                && qualifier
                    .as_deref()
                    .is_none_or(|q| qualifier_matches_in(q, f, d))
        })
    }

    /// The file a `symbol` that nothing defines names (its callers looked
    /// for definitions first): a Blade view by its name
    /// (`models.links.partials.single-simple`) or path, a single-file
    /// component by its name (`ReportCreateModal`, when one file has it) or
    /// path, or any file with no definitions by its path (a config file, a
    /// template). Such a file is its own definition, the whole of it;
    /// another file that defines classes or functions is named by them.
    fn file_symbol(&self, symbol: &str) -> Option<String> {
        let exists = |f: &str| session::CodeFacts::file_exists(self, f);
        if let Some(view) = crate::util::blade_view_file(symbol, exists) {
            return Some(view);
        }
        let path = symbol.trim().trim_start_matches("./").to_string();
        if !crate::util::names_a_file(&path) {
            let mut components = self
                .defs
                .iter()
                .map(|(f, _)| f)
                .filter(|f| component_name(f) == Some(path.as_str()));
            let first = components.next()?;
            return components.all(|f| f == first).then(|| first.clone());
        }
        (exists(&path)
            && (component_name(&path).is_some() || !self.defs.iter().any(|(f, _)| *f == path)))
        .then_some(path)
    }
}

impl session::CodeFacts for RepoFacts {
    /// Files defining `symbol` (plain or qualified: `Class::method`,
    /// `Class.method`, `Ns\Class`); a file named by a file symbol
    /// ([`RepoFacts::file_symbol`]).
    fn definition_files(&self, symbol: &str) -> Vec<String> {
        let mut files: Vec<String> = self.defining(symbol).map(|(f, _)| f.clone()).collect();
        files.dedup();
        if files.is_empty() {
            files.extend(self.file_symbol(symbol));
        }
        files
    }

    /// Where `symbol` is defined; a file symbol spans its whole file (1 to
    /// its line count).
    fn definition_spans(&self, symbol: &str) -> Vec<session::LineSpan> {
        let mut spans: Vec<session::LineSpan> = self
            .defining(symbol)
            .map(|(f, d)| session::LineSpan {
                file: f.clone(),
                start_line: d.line,
                end_line: d.end_line.max(d.line),
            })
            .collect();
        if spans.is_empty()
            && let Some(view) = self.file_symbol(symbol)
        {
            let lines = self
                .repo
                .resolve(&view)
                .ok()
                .and_then(|p| std::fs::read_to_string(p).ok())
                .map_or(1, |t| t.lines().count().max(1));
            spans.push(session::LineSpan {
                file: view,
                start_line: 1,
                end_line: lines,
            });
        }
        spans
    }

    fn file_exists(&self, rel: &str) -> bool {
        self.repo.resolve(rel).is_ok_and(|p| p.is_file())
    }
}

/// Files a session claim names (`files_analyzed`, `files_to_edit`, a
/// pattern's files, a hypothesis's file), confined like every other path
/// argument ([`crate::repo::Repo::resolve_for_write`]: a file to be created
/// may not exist yet) and rewritten repo-relative in place.
///
/// # Errors
/// [`ToolError::InvalidArgument`] for a path outside the repository (`..`,
/// an absolute path elsewhere, a symlink out of it) or a withheld file, with
/// the reason `read_file` gives for the same path.
pub(in crate::server) fn confine_files(
    repo: &crate::repo::Repo,
    files: &mut [String],
) -> Result<(), ToolError> {
    for f in files {
        *f = repo.resolve_for_write(f)?.0;
    }
    Ok(())
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

    /// [`Shared::transition`] with facts about the code, all on the
    /// blocking pool (parsing, then the session's locked read-modify-write).
    async fn transition_on_pool(
        self: &Arc<Self>,
        id: &str,
        event: Event,
    ) -> Result<(session::Step, Session), ToolError> {
        let (shared, id) = (Arc::clone(self), id.to_string());
        blocking(move || {
            let facts = shared.facts();
            shared.transition(&id, event, &facts)
        })
        .await?
    }
}

/// The reply text after a frame was set: what was accepted and rejected
/// (with why), the risk, what READY needs and what to do next.
fn frame_text(s: &Session, notes: &FrameNotes) -> String {
    let rejected = &notes.rejected;
    let names = |slots: &[SlotName]| {
        slots
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A risk the frame raised says why (`risk::frame_risk`); otherwise it
    // is judged from what the understanding says the change touches.
    let why = if s.risk_reasons.is_empty() {
        "from what the change touches, judged at submit_understanding".to_string()
    } else {
        s.risk_reasons.join("; ")
    };
    let missing = session::missing_slots(&s.frame);
    let optional = if missing.is_empty() {
        ""
    } else {
        " (optional: READY does not need them)"
    };
    let mut t = format!(
        "frame: {} slot(s) accepted [{}]; missing [{}]{optional}; risk {} ({why}); needs {}",
        s.frame.len(),
        names(&s.frame.keys().copied().collect::<Vec<_>>()),
        names(&missing),
        s.risk,
        needs_text(&s.requirements),
    );
    if notes.consistency.is_empty() {
        t.push_str("; value/quote similarity not checked (model not loaded)");
    }
    for r in rejected {
        t.push_str(&format!(
            "\n- rejected {}: {} (slots are not among READY's requirements: quote closer or leave it out)",
            r.slot, r.reason
        ));
    }
    for w in &notes.warnings {
        t.push_str(&format!(
            "\n- accepted {} with a doubt: {} (set it again if it misreads the request)",
            w.slot, w.reason
        ));
    }
    // A slot just rejected is explained above; the others are missing from
    // the frame, which says nothing of whether the request states them.
    // No slot is among READY's requirements: agents of the honest trial
    // read a hint for each missing slot as an instruction for requests
    // that name no trigger, and, once it said "optional", as noise
    // (bench/README.md § Honest agent trial). The hints are for an empty
    // frame only.
    let hinted = if s.frame.is_empty() {
        missing
    } else {
        Vec::new()
    };
    for m in hinted
        .into_iter()
        .filter(|m| !rejected.iter().any(|r| r.slot == *m))
    {
        let (hint, tools) = session::guidance(m);
        t.push_str(&format!(
            "\n- {m} not in the frame (optional, READY does not need it; leave it out when the request does not say it): to find it, {hint} ({})",
            tools.join(", ")
        ));
    }
    t.push_str(&format!("\nnext: {}", session::next_step(s)));
    t
}

/// The frame as set, for replies.
fn frame_set(s: &Session, notes: FrameNotes) -> FrameSet {
    FrameSet {
        accepted: s.frame.keys().copied().collect(),
        frame: s.frame.clone(),
        rejected: notes.rejected,
        warnings: notes.warnings,
        requirements: s.requirements.clone(),
    }
}

/// What `set_query_frame` says of the slots it was given.
pub(super) struct FrameNotes {
    /// Slots not accepted, with why.
    pub rejected: Vec<session::SlotNote>,
    /// Slots accepted whose value the value/quote check doubts.
    pub warnings: Vec<session::SlotNote>,
    /// Value/quote similarity per checked slot (empty without the model).
    pub consistency: BTreeMap<SlotName, f32>,
}

impl CodeIntel {
    /// Verifies `slots` against the session's request (quotes verbatim, values
    /// consistent with their quotes: `rank::value_check`) and applies the
    /// frame. Returns the session and what was said of the slots.
    ///
    /// # Errors
    /// Unknown session; an unreadable session file.
    async fn apply_frame(
        &self,
        id: &str,
        slots: SlotsInput,
    ) -> Result<(Session, FrameNotes), ToolError> {
        let mut set: Vec<(SlotName, Slot)> = Vec::new();
        let mut cleared: Vec<SlotName> = Vec::new();
        for (name, slot) in [
            (SlotName::TargetFeature, slots.target_feature),
            (SlotName::TriggerCondition, slots.trigger_condition),
            (SlotName::ObservedIssue, slots.observed_issue),
            (SlotName::DesiredAction, slots.desired_action),
        ] {
            match slot {
                Some(Some(slot)) => set.push((name, slot)),
                Some(None) => cleared.push(name),
                None => {}
            }
        }
        let slots = set;
        let query = self.shared.sessions.get(id)?.query;
        let (mut frame, mut rejected) = session::verify_frame(&query, &slots);
        // Value/quote consistency (rank::value_check): the contradiction
        // rule, and with the model the calibrated similarity; a doubted slot
        // is rejected or kept with a warning as the check's measurement
        // supports. Without the model the similarity is skipped and said so.
        let mut consistency = BTreeMap::new();
        if let Ok(embedder) = self.shared.embedder() {
            let names: Vec<SlotName> = frame.keys().copied().collect();
            let pairs: Vec<(String, String)> = frame
                .values()
                .map(|s| (s.value.clone(), s.quote.clone()))
                .collect();
            if let Ok(scores) =
                blocking(move || relevance::score_pairs(embedder.as_ref(), &pairs)).await?
            {
                consistency = names.into_iter().zip(scores).collect();
            }
        }
        let (doubt_rejected, warnings) = value_check::check(
            value_check::VALUE_CHECK,
            &CALIBRATED,
            &mut frame,
            &consistency,
        );
        rejected.extend(doubt_rejected);
        let (_, s) = self
            .shared
            .transition(id, Event::FrameSet { frame, cleared }, &NoFacts)?;
        Ok((
            s,
            FrameNotes {
                rejected,
                warnings,
                consistency,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal names the unmet requirements with what meets them and the
    /// met ones apart; READY says every one is met.
    #[test]
    fn a_refusal_names_what_is_missing_apart_from_what_is_met() {
        let r = session::Requirements::of(session::Intent::Modify, session::Risk::Low);
        let a = session::Assessment {
            rejected_claims: vec![],
            missing: [(
                Requirement::Files,
                "read `routes/api.php` first".to_string(),
            )]
            .into(),
            confidence: 0.67,
            unchecked: vec![],
            created: vec![],
        };
        let text = requirements_text(&r, &a, false);
        assert!(text.starts_with("needs files ("), "{text}");
        assert!(text.ends_with("; met symbols, entry_points"), "{text}");
        let done = session::Assessment {
            missing: Default::default(),
            ..a.clone()
        };
        let rejected = session::Assessment {
            missing: Default::default(),
            rejected_claims: vec!["symbol `UserPolicy::follow` has no definition".into()],
            ..a
        };
        let text = requirements_text(&r, &rejected, false);
        assert_eq!(
            text,
            "requirements met (symbols, files, entry_points), but the rejected claims below hold READY back"
        );
        let taken = session::Assessment {
            created: vec!["UserPolicy::follow".into()],
            unchecked: vec!["routes/api.php".into()],
            ..done.clone()
        };
        assert_eq!(
            assessment_text(&taken),
            "\n- to be created by the change (no definition yet; taken as said): `UserPolicy::follow`\n- named but never read in this session (taken as said, not checked): `routes/api.php`"
        );
        let text = requirements_text(&r, &done, true);
        assert!(text.starts_with("met symbols ("), "{text}");
        assert!(
            text.contains("files (") && text.contains("entry_points ("),
            "{text}"
        );
    }
}
