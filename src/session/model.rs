//! The session's data: intents, phases, risk, the query frame, evidence,
//! hypotheses, claims and the session record itself. Wire types (they are
//! persisted in `.code-intel/sessions/<id>.json` and returned by tools).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::util::now_secs;

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

/// The four slots of a query frame (docs/sessions.md § Risk).

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

/// Why a slot was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SlotRejection {
    pub slot: SlotName,
    pub reason: String,
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

/// Why an agent asks for the SEMANTIC phase (docs/sessions.md § Requirements).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SemanticReason {
    NoDefinitionFound,
    NoReferenceFound,
    NoSimilarImplementation,
    ContextFragmented,
    ArchitectureUnknown,
}

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

/// State of a hypothesis from forest search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum HypothesisState {
    Hypothesis,
    Fact,
    Rejected,
}

/// One recorded tool call of a session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    pub tool: String,
    pub params: serde_json::Value,
    /// First line of the tool's text result.
    pub summary: String,
    /// Repo-relative files the result named.
    pub files: Vec<String>,
    /// Unix seconds.
    pub at: u64,
    /// The phase the call was made in.
    pub phase: Phase,
}

/// A forest hit submitted in SEMANTIC.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hypothesis {
    pub symbol: String,
    pub file: String,
    /// The slot or requirement the hypothesis fills.
    pub slot_source: String,
    pub reason: String,
    pub state: HypothesisState,
    /// Code evidence given at verification.
    pub evidence: Option<String>,
}

/// A relevance check result kept in the session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RelevanceCheck {
    pub nl_term: String,
    pub symbol: String,
    pub score: f32,
    pub tier: String,
}

/// Everything the server knows about one session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub intent: Intent,
    pub query: String,
    pub phase: Phase,
    pub frame: QueryFrame,
    pub frame_set: bool,
    pub risk: Risk,
    /// A grey-zone relevance result forced risk HIGH.
    pub grey_zone: bool,
    pub requirements: Requirements,
    pub evidence: Vec<Evidence>,
    pub tools_used: BTreeSet<String>,
    pub files_seen: BTreeSet<String>,
    /// Files the agent may write (seen, analysed or added).
    pub explored: BTreeSet<String>,
    pub understanding: Option<Understanding>,
    pub last_assessment: Option<Assessment>,
    pub hypotheses: Vec<Hypothesis>,
    pub relevance: Vec<RelevanceCheck>,
    /// Writes checked and allowed.
    pub writes_allowed: Vec<String>,
    pub refusals: Vec<String>,
    pub outcome: Option<String>,
    pub created_at: u64,
    pub updated_at: u64,
}

impl Session {
    /// A session in its first phase (READY at once for QUESTION).
    pub fn new(intent: Intent, query: &str) -> Session {
        let now = now_secs();
        let seed = format!("{query}{now}{:?}", std::time::SystemTime::now());
        let id = crate::util::sha256_hex(seed.as_bytes())[..12].to_string();
        let risk = super::frame::assess_risk(intent, &QueryFrame::new(), false);
        Session {
            id,
            intent,
            query: query.to_string(),
            phase: if intent == Intent::Question {
                Phase::Ready
            } else {
                Phase::Exploration
            },
            frame: QueryFrame::new(),
            frame_set: false,
            risk,
            grey_zone: false,
            requirements: super::requirements::requirements(intent, risk),
            evidence: Vec::new(),
            tools_used: BTreeSet::new(),
            files_seen: BTreeSet::new(),
            explored: BTreeSet::new(),
            understanding: None,
            last_assessment: None,
            hypotheses: Vec::new(),
            relevance: Vec::new(),
            writes_allowed: Vec::new(),
            refusals: Vec::new(),
            outcome: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// Recomputes risk and requirements from the frame and grey-zone flag.
    pub fn rescore(&mut self) {
        self.risk = super::frame::assess_risk(self.intent, &self.frame, self.grey_zone);
        self.requirements = super::requirements::requirements(self.intent, self.risk);
    }
}
