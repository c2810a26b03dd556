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

/// Evidence needed before READY: the kinds of evidence the intent and risk
/// call for (docs/sessions.md § Requirements), checked by quality in
/// [`super::assess`], not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Requirements {
    pub needs: Vec<Requirement>,
    /// Every entry point needs its references checked (HIGH risk), not just one
    /// changed symbol.
    #[serde(default)]
    pub all_entry_points: bool,
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

/// A kind of evidence READY needs (docs/sessions.md § Requirements).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    /// A named symbol resolves to a definition whose file was read.
    Symbols,
    /// References of what changes were checked with find_references.
    EntryPoints,
    /// The files the change edits (or reads) had their content returned.
    Files,
    /// An existing implementation of the same kind, read.
    Patterns,
    /// Tests or usages that cover the change were seen.
    Coverage,
}

impl Requirement {
    /// The wire name (as serialised: `entry_points`).
    pub fn name(self) -> &'static str {
        match self {
            Requirement::Symbols => "symbols",
            Requirement::EntryPoints => "entry_points",
            Requirement::Files => "files",
            Requirement::Patterns => "patterns",
            Requirement::Coverage => "coverage",
        }
    }

    /// What satisfies the requirement, for replies.
    pub fn describe(self) -> &'static str {
        match self {
            Requirement::Symbols => {
                "a symbol of the change whose definition you read (read_file or get_function_at_line on its file)"
            }
            Requirement::EntryPoints => "find_references run on the symbols the change alters",
            Requirement::Files => {
                "every file in files_analyzed / files_to_edit read in this session (content returned)"
            }
            Requirement::Patterns => {
                "an existing implementation of the same kind (existing_patterns with a file you read)"
            }
            Requirement::Coverage => {
                "tests or usages that cover the change: find_references returning uses, or a test file read"
            }
        }
    }
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
    /// Symbols of the change (`Class::method` allowed).
    #[serde(default)]
    pub symbols_identified: Vec<String>,
    /// Where the behaviour starts (must be among symbols_identified).
    #[serde(default)]
    pub entry_points: Vec<String>,
    /// Conventions to follow, each with files that show it.
    #[serde(default)]
    pub existing_patterns: Vec<PatternClaim>,
    /// Files read in this session (content returned).
    #[serde(default)]
    pub files_analyzed: Vec<String>,
    /// Files the change edits or creates; risk is judged from them. Default: files_analyzed.
    #[serde(default)]
    pub files_to_edit: Vec<String>,
    /// Optional: slot → code evidence (file:line, symbol) that backs it.
    #[serde(default)]
    pub slot_evidence: BTreeMap<SlotName, String>,
}

/// The outcome of checking an understanding against the requirements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Assessment {
    /// Claims that do not hold (each says why).
    pub rejected_claims: Vec<String>,
    /// Requirements not met yet, each with what would meet it.
    pub missing: BTreeMap<Requirement, String>,
    /// Server-computed share of requirements met, 0.0–1.0.
    pub confidence: f32,
}

impl Assessment {
    /// True when nothing blocks READY.
    pub fn complete(&self) -> bool {
        self.rejected_claims.is_empty() && self.missing.is_empty()
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
    /// Files whose content the result returned (they count as read).
    #[serde(default)]
    pub read: Vec<String>,
    /// The result's `total` (find_references: uses found), when it has one.
    #[serde(default)]
    pub total: Option<usize>,
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
    /// A function of intent and risk, recomputed on load ([`Session::from_json`]).
    #[serde(default, deserialize_with = "lenient")]
    pub requirements: Requirements,
    pub evidence: Vec<Evidence>,
    pub tools_used: BTreeSet<String>,
    /// Files a result named (read or not).
    pub files_seen: BTreeSet<String>,
    /// Files whose content a result returned in this session: the only
    /// existing files the agent may write.
    pub explored: BTreeSet<String>,
    /// Symbol as given to find_references → uses it found.
    #[serde(default)]
    pub reference_checks: BTreeMap<String, usize>,
    /// Why the risk is what it is.
    #[serde(default)]
    pub risk_reasons: Vec<String>,
    pub understanding: Option<Understanding>,
    /// Dropped on load when written by a release with another shape.
    #[serde(default, deserialize_with = "lenient")]
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

/// A field that older releases stored in another shape: its default when it
/// does not parse, so a stored session stays readable across upgrades.
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    let v = serde_json::Value::deserialize(d)?;
    Ok(T::deserialize(v).unwrap_or_default())
}

impl Session {
    /// Parses a stored session; its requirements are recomputed from intent
    /// and risk (the rules may have changed since it was written).
    ///
    /// # Errors
    /// The text is not a session.
    pub fn from_json(text: &str) -> Result<Session, serde_json::Error> {
        let mut s: Session = serde_json::from_str(text)?;
        s.requirements = super::requirements::requirements(s.intent, s.risk);
        Ok(s)
    }

    /// A session in its first phase (READY at once for QUESTION).
    pub fn new(intent: Intent, query: &str) -> Session {
        let now = now_secs();
        let seed = format!("{query}{now}{:?}", std::time::SystemTime::now());
        let id = crate::util::sha256_hex(seed.as_bytes())[..12].to_string();
        let risk = Risk::Low;
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
            reference_checks: BTreeMap::new(),
            risk_reasons: Vec::new(),
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

    /// Raises the risk to `risk` (never lowers it: leaving something out of a
    /// submission must not lower the bar) and recomputes the requirements.
    pub fn raise_risk(&mut self, risk: Risk, reasons: Vec<String>) {
        if risk > self.risk {
            self.risk = risk;
        }
        for r in reasons {
            if !self.risk_reasons.contains(&r) {
                self.risk_reasons.push(r);
            }
        }
        self.requirements = super::requirements::requirements(self.intent, self.risk);
    }
}
