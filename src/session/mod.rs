//! The session state machine (SPEC §5): intents, phases, the tool gate,
//! query frames with quote verification, risk, requirements, checks of
//! submitted understanding, semantic-phase reasons and the write gate.
//! Pure logic: no I/O; facts about the code come in through closures.
//!
//! The server decides; the model never supplies confidence. Rules and
//! numbers are from SPEC §5 and seeds v3.6 (risk, requirements by risk),
//! v3.7 (relevance tiers, calibrated in [`crate::relevance`]) and v3.10
//! (recovery options).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;

/// What the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Intent {
    Implement,
    Modify,
    Investigate,
    Question,
}

/// Where a session stands. Order matters: READY is last.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Phase {
    Exploration,
    Semantic,
    Verification,
    Ready,
}

/// How much evidence a request needs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Risk {
    Low,
    Medium,
    High,
}

/// The four slots of a query frame (seed v3.6).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum SlotName {
    TargetFeature,
    TriggerCondition,
    ObservedIssue,
    DesiredAction,
}

impl SlotName {
    pub const ALL: [SlotName; 4] = [
        SlotName::TargetFeature,
        SlotName::TriggerCondition,
        SlotName::ObservedIssue,
        SlotName::DesiredAction,
    ];
}

/// A slot value with the words of the request it was taken from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Slot {
    pub value: String,
    /// Verbatim excerpt of the request that supports `value`.
    pub quote: String,
}

/// The verified slots of a request.
pub type QueryFrame = BTreeMap<SlotName, Slot>;

/// NFKC, then runs of white space folded to one space and trimmed: the form
/// in which quotes are compared with the request (full-width and half-width
/// characters, line breaks and double spaces do not matter).
pub fn normalize(text: &str) -> String {
    let nfkc: String = text.nfkc().collect();
    nfkc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why a slot was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SlotRejection {
    pub slot: SlotName,
    pub reason: String,
}

/// Keeps the slots whose quote occurs in the request (after [`normalize`]);
/// the others are rejected as hallucinated. Empty values are dropped.
pub fn verify_frame(query: &str, slots: &[(SlotName, Slot)]) -> (QueryFrame, Vec<SlotRejection>) {
    let q = normalize(query);
    let mut frame = QueryFrame::new();
    let mut rejected = Vec::new();
    for (name, slot) in slots {
        let quote = normalize(&slot.quote);
        if slot.value.trim().is_empty() {
            continue;
        }
        if quote.is_empty() || !q.contains(&quote) {
            rejected.push(SlotRejection {
                slot: *name,
                reason: format!(
                    "quote {:?} is not in the request; quote the user's own words verbatim or leave the slot empty",
                    slot.quote
                ),
            });
            continue;
        }
        frame.insert(*name, slot.clone());
    }
    (frame, rejected)
}

/// Slots the frame lacks, in [`SlotName::ALL`] order.
pub fn missing_slots(frame: &QueryFrame) -> Vec<SlotName> {
    SlotName::ALL
        .into_iter()
        .filter(|s| !frame.contains_key(s))
        .collect()
}

/// Risk of a request (SPEC §5): MODIFY without target_feature or
/// observed_issue, desired_action without observed_issue, three or more
/// missing slots, or a grey-zone relevance result → HIGH; two missing →
/// MEDIUM; IMPLEMENT is at least MEDIUM.
pub fn assess_risk(intent: Intent, frame: &QueryFrame, grey_zone: bool) -> Risk {
    let has = |s| frame.contains_key(&s);
    let missing = missing_slots(frame).len();
    let high = grey_zone
        || (intent == Intent::Modify
            && (!has(SlotName::TargetFeature) || !has(SlotName::ObservedIssue)))
        || (has(SlotName::DesiredAction) && !has(SlotName::ObservedIssue))
        || missing >= 3;
    if high {
        return Risk::High;
    }
    if missing == 2 || intent == Intent::Implement {
        Risk::Medium
    } else {
        Risk::Low
    }
}

/// Evidence needed before READY.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Requirements {
    pub symbols: usize,
    pub entry_points: usize,
    pub files: usize,
    pub patterns: usize,
    /// Slots that need code evidence in `slot_evidence`.
    pub slot_evidence: Vec<SlotName>,
    /// Tools that must have been used.
    pub tools: Vec<String>,
}

/// Requirements by intent and risk (seed v3.6 `get_exploration_requirements`,
/// SPEC §5): LOW/MEDIUM 3 symbols, 1 entry point, 2 files, 1 pattern (MEDIUM
/// also target_feature evidence); HIGH 5/2/4/2 with target_feature and
/// observed_issue evidence; `find_definitions` and `find_references` used.
/// INVESTIGATE: 1 symbol, 1 file. QUESTION: nothing.
pub fn requirements(intent: Intent, risk: Risk) -> Requirements {
    let tools = vec![
        "find_definitions".to_string(),
        "find_references".to_string(),
    ];
    match (intent, risk) {
        (Intent::Question, _) => Requirements {
            symbols: 0,
            entry_points: 0,
            files: 0,
            patterns: 0,
            slot_evidence: vec![],
            tools: vec![],
        },
        (Intent::Investigate, _) => Requirements {
            symbols: 1,
            entry_points: 0,
            files: 1,
            patterns: 0,
            slot_evidence: vec![],
            tools: vec![],
        },
        (_, Risk::High) => Requirements {
            symbols: 5,
            entry_points: 2,
            files: 4,
            patterns: 2,
            slot_evidence: vec![SlotName::TargetFeature, SlotName::ObservedIssue],
            tools,
        },
        (_, Risk::Medium) => Requirements {
            symbols: 3,
            entry_points: 1,
            files: 2,
            patterns: 1,
            slot_evidence: vec![SlotName::TargetFeature],
            tools,
        },
        (_, Risk::Low) => Requirements {
            symbols: 3,
            entry_points: 1,
            files: 2,
            patterns: 1,
            slot_evidence: vec![],
            tools,
        },
    }
}

/// What a tool call is, for the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolClass {
    /// search_text, find_definitions, find_references, get_symbols,
    /// analyze_structure, get_function_at_line, query.
    Code,
    /// semantic_search over `map` only.
    Map,
    /// semantic_search touching `forest` (forest or auto).
    Forest,
}

/// A refusal the agent can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Refusal {
    pub reason: String,
    /// What to call instead (tool names or short instructions).
    pub recovery_options: Vec<String>,
}

/// The tool gate (SPEC §5): EXPLORATION allows code tools and map search,
/// not forest; SEMANTIC allows forest, not the exploration tools;
/// VERIFICATION allows code tools and map, not forest; READY allows all.
///
/// # Errors
/// A [`Refusal`] naming what is allowed now.
pub fn gate(phase: Phase, class: ToolClass) -> Result<(), Refusal> {
    let refuse = |reason: &str, options: &[&str]| {
        Err(Refusal {
            reason: reason.to_string(),
            recovery_options: options.iter().map(|s| s.to_string()).collect(),
        })
    };
    match (phase, class) {
        (Phase::Ready, _)
        | (Phase::Exploration | Phase::Verification, ToolClass::Code | ToolClass::Map)
        | (Phase::Semantic, ToolClass::Forest | ToolClass::Map) => Ok(()),
        (Phase::Exploration, ToolClass::Forest) => refuse(
            "semantic search over code (forest) is not allowed in EXPLORATION: find the code with exact tools first",
            &[
                "find_definitions",
                "find_references",
                "search_text",
                "semantic_search with collection=map",
                "submit_understanding (enters SEMANTIC when exact tools found nothing)",
            ],
        ),
        (Phase::Verification, ToolClass::Forest) => refuse(
            "forest search is not allowed in VERIFICATION: confirm or reject each hypothesis with code tools",
            &[
                "find_definitions",
                "get_function_at_line",
                "submit_verification",
            ],
        ),
        (Phase::Semantic, ToolClass::Code) => refuse(
            "exploration tools are not allowed in SEMANTIC: search forest for hypotheses, then submit them",
            &["semantic_search with collection=forest", "submit_semantic"],
        ),
    }
}

/// Whether a tool is offered in `phase` when the tool list is phase-scoped:
/// code tools only where the gate lets them through, submit_semantic only in
/// SEMANTIC, submit_verification only in VERIFICATION; everything else always.
pub fn tool_offered(phase: Phase, tool: &str) -> bool {
    match tool {
        "search_text"
        | "find_definitions"
        | "find_references"
        | "get_symbols"
        | "analyze_structure"
        | "get_function_at_line" => gate(phase, ToolClass::Code).is_ok(),
        "submit_semantic" => phase == Phase::Semantic,
        "submit_verification" => phase == Phase::Verification,
        _ => true,
    }
}

/// A kind of evidence READY needs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    Symbols,
    EntryPoints,
    Files,
    Patterns,
}

/// Why an agent asks for the SEMANTIC phase (seed v3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SemanticReason {
    NoDefinitionFound,
    NoReferenceFound,
    NoSimilarImplementation,
    ContextFragmented,
    ArchitectureUnknown,
}

/// Whether `reason` explains what is missing (SPEC §5): symbols →
/// no_definition_found | architecture_unknown; entry points →
/// no_definition_found | no_reference_found; patterns →
/// no_similar_implementation | architecture_unknown; files →
/// context_fragmented | architecture_unknown.
pub fn reason_fits(missing: Requirement, reason: SemanticReason) -> bool {
    use SemanticReason::*;
    matches!(
        (missing, reason),
        (
            Requirement::Symbols,
            NoDefinitionFound | ArchitectureUnknown
        ) | (
            Requirement::EntryPoints,
            NoDefinitionFound | NoReferenceFound
        ) | (
            Requirement::Patterns,
            NoSimilarImplementation | ArchitectureUnknown
        ) | (Requirement::Files, ContextFragmented | ArchitectureUnknown)
    )
}

/// Tools that must have been tried before SEMANTIC may be entered.
pub const BEFORE_SEMANTIC: [&str; 3] = ["find_definitions", "find_references", "search_text"];

/// An existing pattern the agent found, with the files that show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PatternClaim {
    pub name: String,
    pub files: Vec<String>,
}

/// What the agent claims to understand (`submit_understanding`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Understanding {
    /// Symbols that matter for the change (names as find_definitions knows them; `Class::method` allowed).
    #[serde(default)]
    pub symbols_identified: Vec<String>,
    /// Where the behaviour starts (must be among symbols_identified).
    #[serde(default)]
    pub entry_points: Vec<String>,
    /// Conventions to follow, each with files that show it.
    #[serde(default)]
    pub existing_patterns: Vec<PatternClaim>,
    /// Repo-relative files read with code tools in this session.
    #[serde(default)]
    pub files_analyzed: Vec<String>,
    /// Slot → code evidence (file:line, symbol) that backs it.
    #[serde(default)]
    pub slot_evidence: BTreeMap<SlotName, String>,
}

/// Facts about the repository and the session that claims are checked
/// against.
pub struct Facts<'a> {
    /// A definition with this name exists.
    pub symbol_exists: &'a dyn Fn(&str) -> bool,
    /// The repo-relative file exists.
    pub file_exists: &'a dyn Fn(&str) -> bool,
    /// Files the session's tool calls have shown.
    pub files_seen: &'a BTreeSet<String>,
    /// Tools the session has used.
    pub tools_used: &'a BTreeSet<String>,
}

/// The outcome of checking an understanding against the requirements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Assessment {
    /// Claims that do not hold (each says why).
    pub rejected_claims: Vec<String>,
    /// Requirements still short, with (have, need).
    pub missing: BTreeMap<Requirement, (usize, usize)>,
    pub missing_slot_evidence: Vec<SlotName>,
    pub missing_tools: Vec<String>,
    /// Server-computed share of requirements met, 0.0–1.0.
    pub confidence: f32,
}

impl Assessment {
    /// True when nothing blocks READY.
    pub fn complete(&self) -> bool {
        self.rejected_claims.is_empty()
            && self.missing.is_empty()
            && self.missing_slot_evidence.is_empty()
            && self.missing_tools.is_empty()
    }
}

/// Checks claims against the code and counts what is valid against the
/// requirements: symbols must exist, files must exist and have been seen,
/// entry points must be among the symbols, patterns need existing files, no
/// duplicates.
pub fn assess(req: &Requirements, u: &Understanding, facts: &Facts<'_>) -> Assessment {
    let mut rejected = Vec::new();
    let mut symbols = BTreeSet::new();
    for s in &u.symbols_identified {
        if !symbols.insert(s.as_str()) {
            rejected.push(format!("symbol `{s}` is listed twice"));
        } else if !(facts.symbol_exists)(s) {
            rejected.push(format!(
                "symbol `{s}` has no definition in the repository (check with find_definitions)"
            ));
            symbols.remove(s.as_str());
        }
    }
    let mut entry = BTreeSet::new();
    for e in &u.entry_points {
        if !symbols.contains(e.as_str()) {
            rejected.push(format!("entry point `{e}` is not among symbols_identified"));
        } else if !entry.insert(e.as_str()) {
            rejected.push(format!("entry point `{e}` is listed twice"));
        }
    }
    let mut files = BTreeSet::new();
    for f in &u.files_analyzed {
        if !(facts.file_exists)(f) {
            rejected.push(format!("file `{f}` does not exist"));
        } else if !facts.files_seen.contains(f) {
            rejected.push(format!("file `{f}` was not seen by any tool call of this session (read it with a code tool first)"));
        } else if !files.insert(f.as_str()) {
            rejected.push(format!("file `{f}` is listed twice"));
        }
    }
    let mut patterns = BTreeSet::new();
    for p in &u.existing_patterns {
        let valid_files = p.files.iter().filter(|f| (facts.file_exists)(f)).count();
        if valid_files == 0 {
            rejected.push(format!("pattern `{}` names no existing file", p.name));
        } else if !patterns.insert(p.name.as_str()) {
            rejected.push(format!("pattern `{}` is listed twice", p.name));
        }
    }
    let mut missing = BTreeMap::new();
    for (r, have, need) in [
        (Requirement::Symbols, symbols.len(), req.symbols),
        (Requirement::EntryPoints, entry.len(), req.entry_points),
        (Requirement::Files, files.len(), req.files),
        (Requirement::Patterns, patterns.len(), req.patterns),
    ] {
        if have < need {
            missing.insert(r, (have, need));
        }
    }
    let missing_slot_evidence: Vec<SlotName> = req
        .slot_evidence
        .iter()
        .filter(|s| u.slot_evidence.get(s).is_none_or(|e| e.trim().is_empty()))
        .copied()
        .collect();
    let missing_tools: Vec<String> = req
        .tools
        .iter()
        .filter(|t| !facts.tools_used.contains(*t))
        .cloned()
        .collect();
    let needed = req.symbols
        + req.entry_points
        + req.files
        + req.patterns
        + req.slot_evidence.len()
        + req.tools.len();
    let met = symbols.len().min(req.symbols)
        + entry.len().min(req.entry_points)
        + files.len().min(req.files)
        + patterns.len().min(req.patterns)
        + (req.slot_evidence.len() - missing_slot_evidence.len())
        + (req.tools.len() - missing_tools.len());
    Assessment {
        rejected_claims: rejected,
        missing,
        missing_slot_evidence,
        missing_tools,
        confidence: if needed == 0 {
            1.0
        } else {
            met as f32 / needed as f32
        },
    }
}

/// State of a hypothesis from forest search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HypothesisState {
    Hypothesis,
    Fact,
    Rejected,
}

/// Whether `file` may be written (SPEC §5 and seed v3.10): only in READY,
/// never while a HYPOTHESIS remains, never a file a rejected hypothesis
/// named, only explored files — or, with `allow_new`, a new file whose
/// parent directory was explored.
///
/// # Errors
/// A [`Refusal`] with `recovery_options`.
pub fn check_write(
    phase: Phase,
    file: &str,
    file_exists: bool,
    allow_new: bool,
    explored: &BTreeSet<String>,
    hypotheses: &[(String, HypothesisState)],
) -> Result<(), Refusal> {
    let refuse = |reason: String, options: &[&str]| {
        Err(Refusal {
            reason,
            recovery_options: options.iter().map(|s| s.to_string()).collect(),
        })
    };
    if phase != Phase::Ready {
        return refuse(
            format!("writes are allowed only in READY; the session is in {phase:?}"),
            &["submit_understanding", "get_session_status"],
        );
    }
    if hypotheses
        .iter()
        .any(|(_, s)| *s == HypothesisState::Hypothesis)
    {
        return refuse(
            "an unverified HYPOTHESIS remains: confirm or reject it with submit_verification"
                .into(),
            &["submit_verification"],
        );
    }
    if hypotheses
        .iter()
        .any(|(f, s)| *s == HypothesisState::Rejected && f == file)
    {
        return refuse(
            format!("`{file}` came from a rejected hypothesis"),
            &["revert_to_exploration", "add_explored_files"],
        );
    }
    if explored.contains(file) {
        return Ok(());
    }
    if !file_exists {
        let parent = file.rsplit_once('/').map_or("", |(d, _)| d);
        let parent_explored = explored
            .iter()
            .any(|f| f.rsplit_once('/').map_or("", |(d, _)| d) == parent);
        if allow_new && parent_explored {
            return Ok(());
        }
        return refuse(
            if allow_new {
                format!("new file `{file}`: no file in its directory `{parent}` was explored")
            } else {
                format!(
                    "`{file}` does not exist; pass allow_new_files=true to create it in an explored directory"
                )
            },
            &["add_explored_files", "revert_to_exploration"],
        );
    }
    refuse(
        format!("`{file}` was not explored in this session"),
        &["add_explored_files", "revert_to_exploration"],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(v: &str, q: &str) -> Slot {
        Slot {
            value: v.into(),
            quote: q.into(),
        }
    }

    #[test]
    fn quotes_are_checked_after_nfkc_and_whitespace() {
        let query = "ログイン機能でパスワードが空のとき　エラーが出ないので修正して（ＡＰＩ）";
        let (frame, rejected) = verify_frame(
            query,
            &[
                (SlotName::TargetFeature, slot("login", "ログイン機能")),
                (
                    SlotName::ObservedIssue,
                    slot("no error", "空のとき エラーが出ない"),
                ),
                (SlotName::DesiredAction, slot("fix", "(API)")),
                (
                    SlotName::TriggerCondition,
                    slot("on submit", "送信したとき"),
                ),
            ],
        );
        assert_eq!(frame.len(), 3, "{rejected:?}");
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].slot, SlotName::TriggerCondition);
    }

    #[test]
    fn risk_rules() {
        let full: QueryFrame = SlotName::ALL
            .into_iter()
            .map(|s| (s, slot("v", "q")))
            .collect();
        let mut no_issue = full.clone();
        no_issue.remove(&SlotName::ObservedIssue);
        let only_target: QueryFrame = [(SlotName::TargetFeature, slot("v", "q"))].into();
        let mut two_missing = full.clone();
        two_missing.remove(&SlotName::TriggerCondition);
        two_missing.remove(&SlotName::DesiredAction);
        for (intent, frame, grey, expected) in [
            (Intent::Modify, &full, false, Risk::Low),
            (Intent::Modify, &full, true, Risk::High),
            (Intent::Modify, &no_issue, false, Risk::High),
            (Intent::Investigate, &only_target, false, Risk::High),
            (Intent::Investigate, &two_missing, false, Risk::Medium),
            (Intent::Implement, &full, false, Risk::Medium),
        ] {
            assert_eq!(
                assess_risk(intent, frame, grey),
                expected,
                "{intent:?} {frame:?} {grey}"
            );
        }
    }

    #[test]
    fn gate_matrix() {
        use Phase::*;
        use ToolClass::*;
        for (phase, class, ok) in [
            (Exploration, Code, true),
            (Exploration, Map, true),
            (Exploration, Forest, false),
            (Semantic, Code, false),
            (Semantic, Forest, true),
            (Semantic, Map, true),
            (Verification, Code, true),
            (Verification, Forest, false),
            (Ready, Forest, true),
            (Ready, Code, true),
        ] {
            let r = gate(phase, class);
            assert_eq!(r.is_ok(), ok, "{phase:?} {class:?}");
            if let Err(refusal) = r {
                assert!(!refusal.recovery_options.is_empty());
            }
        }
    }

    #[test]
    fn semantic_reasons() {
        assert!(reason_fits(
            Requirement::Symbols,
            SemanticReason::NoDefinitionFound
        ));
        assert!(reason_fits(
            Requirement::EntryPoints,
            SemanticReason::NoReferenceFound
        ));
        assert!(!reason_fits(
            Requirement::Files,
            SemanticReason::NoDefinitionFound
        ));
        assert!(!reason_fits(
            Requirement::Patterns,
            SemanticReason::ContextFragmented
        ));
    }

    #[test]
    fn claims_are_checked_not_counted() {
        let seen: BTreeSet<String> = ["a.py", "b.py"].map(String::from).into();
        let tools: BTreeSet<String> = ["find_definitions".to_string()].into();
        let exists = |s: &str| matches!(s, "login" | "logout" | "Auth");
        let files = |f: &str| matches!(f, "a.py" | "b.py" | "c.py");
        let facts = Facts {
            symbol_exists: &exists,
            file_exists: &files,
            files_seen: &seen,
            tools_used: &tools,
        };
        let u = Understanding {
            symbols_identified: vec![
                "login".into(),
                "logout".into(),
                "ghost".into(),
                "login".into(),
            ],
            entry_points: vec!["login".into(), "main".into()],
            existing_patterns: vec![PatternClaim {
                name: "service".into(),
                files: vec!["nope.py".into()],
            }],
            files_analyzed: vec!["a.py".into(), "c.py".into(), "z.py".into()],
            slot_evidence: BTreeMap::new(),
        };
        let req = requirements(Intent::Modify, Risk::Medium);
        let a = assess(&req, &u, &facts);
        assert_eq!(a.rejected_claims.len(), 6, "{:?}", a.rejected_claims);
        assert_eq!(a.missing[&Requirement::Symbols], (2, 3));
        assert_eq!(a.missing[&Requirement::Files], (1, 2));
        assert_eq!(a.missing[&Requirement::Patterns], (0, 1));
        assert!(!a.missing.contains_key(&Requirement::EntryPoints));
        assert_eq!(a.missing_slot_evidence, vec![SlotName::TargetFeature]);
        assert_eq!(a.missing_tools, vec!["find_references".to_string()]);
        assert!(!a.complete() && a.confidence > 0.0 && a.confidence < 1.0);

        let u = Understanding {
            symbols_identified: vec!["login".into(), "logout".into(), "Auth".into()],
            entry_points: vec!["login".into()],
            existing_patterns: vec![PatternClaim {
                name: "service".into(),
                files: vec!["a.py".into()],
            }],
            files_analyzed: vec!["a.py".into(), "b.py".into()],
            slot_evidence: [(SlotName::TargetFeature, "a.py:3 login".to_string())].into(),
        };
        let tools: BTreeSet<String> = ["find_definitions", "find_references"]
            .map(String::from)
            .into();
        let facts = Facts {
            tools_used: &tools,
            ..facts
        };
        let a = assess(&req, &u, &facts);
        assert!(a.complete(), "{a:?}");
        assert_eq!(a.confidence, 1.0);
    }

    #[test]
    fn write_gate() {
        let explored: BTreeSet<String> = ["app/auth.py".to_string()].into();
        let ok = |phase, file, exists, allow, hyp: &[(String, HypothesisState)]| {
            check_write(phase, file, exists, allow, &explored, hyp).is_ok()
        };
        assert!(!ok(Phase::Exploration, "app/auth.py", true, false, &[]));
        assert!(ok(Phase::Ready, "app/auth.py", true, false, &[]));
        assert!(!ok(Phase::Ready, "app/other.py", true, false, &[]));
        assert!(ok(Phase::Ready, "app/new.py", false, true, &[]));
        assert!(!ok(Phase::Ready, "lib/new.py", false, true, &[]));
        assert!(!ok(Phase::Ready, "app/new.py", false, false, &[]));
        let pending = [("app/auth.py".to_string(), HypothesisState::Hypothesis)];
        assert!(!ok(Phase::Ready, "app/auth.py", true, false, &pending));
        let rejected = [("app/auth.py".to_string(), HypothesisState::Rejected)];
        let r = check_write(
            Phase::Ready,
            "app/auth.py",
            true,
            false,
            &explored,
            &rejected,
        )
        .unwrap_err();
        assert!(
            r.recovery_options
                .contains(&"revert_to_exploration".to_string())
        );
    }
}
