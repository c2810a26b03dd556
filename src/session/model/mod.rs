//! The session's data: intents, phases, risk, the query frame, evidence,
//! hypotheses, claims and the session record itself. Wire types (they are
//! persisted in `.code-intel/sessions/<id>.json` and returned by tools).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::util::now_secs;

mod tool;
pub use tool::{Tool, ToolClass};

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

/// `Display` writes the wire names (`MODIFY`, `READY`, `HIGH`, …): the
/// same strings serde writes.
macro_rules! wire_display {
    ($t:ty { $($v:ident => $n:literal),+ $(,)? }) => {
        impl $t {
            /// The wire name.
            pub fn name(self) -> &'static str {
                match self {
                    $(<$t>::$v => $n),+
                }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

wire_display!(Intent { Implement => "IMPLEMENT", Modify => "MODIFY", Investigate => "INVESTIGATE", Question => "QUESTION" });
wire_display!(Phase { Exploration => "EXPLORATION", Semantic => "SEMANTIC", Verification => "VERIFICATION", Ready => "READY" });
wire_display!(Risk { Low => "LOW", Medium => "MEDIUM", High => "HIGH" });
wire_display!(Tier { Fact => "fact", Grey => "grey", Reject => "reject" });
wire_display!(SlotName { TargetFeature => "target_feature", TriggerCondition => "trigger_condition", ObservedIssue => "observed_issue", DesiredAction => "desired_action" });

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

/// Why a slot was not accepted, or is accepted with a doubt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SlotNote {
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
    /// IMPLEMENT: entry points are needed only when the understanding names
    /// some (existing symbols the change alters); new code with none is
    /// backed by the pattern read instead.
    // Five `find_references` calls on pattern symbols bought nothing in the
    // agent tasks of bench/README.md.
    #[serde(default)]
    pub entry_points_if_named: bool,
}

impl Requirements {
    /// Requirements by intent and risk (docs/sessions.md § Requirements).
    /// MODIFY: a symbol whose definition was read, the files read, the
    /// references of what changes checked; IMPLEMENT: a symbol read, the files
    /// read, an existing pattern read. MEDIUM adds coverage (usages or tests)
    /// and, for IMPLEMENT, references; HIGH adds references of every entry
    /// point. INVESTIGATE: a symbol read. QUESTION: nothing (and never writes).
    pub fn of(intent: Intent, risk: Risk) -> Requirements {
        use Requirement::*;
        let mut needs = match intent {
            Intent::Question => return Requirements::default(),
            Intent::Investigate => {
                return Requirements {
                    needs: vec![Symbols],
                    ..Requirements::default()
                };
            }
            Intent::Modify => vec![Symbols, Files, EntryPoints],
            Intent::Implement => vec![Symbols, Files, Patterns],
        };
        if risk >= Risk::Medium {
            if !needs.contains(&EntryPoints) {
                needs.push(EntryPoints);
            }
            needs.push(Coverage);
        }
        Requirements {
            needs,
            all_entry_points: risk == Risk::High,
            entry_points_if_named: intent == Intent::Implement,
        }
    }
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

    /// What satisfies the requirement, in a few words (replies list it with
    /// the name, so `needs … coverage` explains itself).
    pub fn satisfied_by(self) -> &'static str {
        match self {
            Requirement::Symbols => {
                "the whole definition read of each entry point the change edits, or of one named symbol"
            }
            Requirement::EntryPoints => {
                "find_references run on what changes (finding no uses counts; new code with no entry point needs none)"
            }
            Requirement::Files => "the files to edit read",
            Requirement::Patterns => "an existing implementation of the same kind read",
            Requirement::Coverage => "a test file read, or find_references finding uses",
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
    /// Symbols changed (`Class::method`, `Component::fn`, a view, a path).
    #[serde(default)]
    pub symbols_identified: Vec<String>,
    /// Where the behaviour starts (must be among symbols_identified).
    #[serde(default)]
    pub entry_points: Vec<String>,
    /// Conventions to follow, each with files that show it.
    #[serde(default)]
    pub existing_patterns: Vec<PatternClaim>,
    /// Files read in this session.
    #[serde(default)]
    pub files_analyzed: Vec<String>,
    /// Files the change edits or creates (default: files_analyzed).
    #[serde(default)]
    pub files_to_edit: Vec<String>,
    /// Optional: slot → code evidence (file:line, symbol).
    #[serde(default)]
    pub slot_evidence: BTreeMap<SlotName, String>,
}

impl Understanding {
    /// The files the change edits or creates: `files_to_edit`, or the files
    /// analysed when it names none. Risk is judged from them, and only they
    /// are writable in READY.
    pub fn edits(&self) -> &[String] {
        if self.files_to_edit.is_empty() {
            &self.files_analyzed
        } else {
            &self.files_to_edit
        }
    }
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
    /// Existing files the understanding names (in files_analyzed or
    /// existing_patterns) that this session never read and no requirement
    /// made it read: taken as said, not checked, and not part of
    /// `confidence`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    /// Symbols named with no definition yet that the change creates (a
    /// member of a class in files_to_edit, or a class whose new file is
    /// there): taken as said, not part of `confidence`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
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

/// The arguments of a recorded call that the session's rules and reports
/// use, taken from the typed parameters (never from a JSON copy of them).
/// Absent fields are not written; a stored session of an older release,
/// which kept every argument, reads the ones named here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallArgs {
    /// find_definitions / find_references: the symbol as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// search_text: the pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// search_text: `pattern` is literal text, not a regex.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub literal: bool,
    /// query / semantic_search: the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// A repo-relative path scope or file argument.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// add_explored_files, and read_file's `files`: the files, repo-relative.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// add_explored_files: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Lines of a file a reply returned: 1-based, inclusive.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct LineSpan {
    pub file: String,
    pub start_line: usize,
    pub end_line: usize,
}

/// One recorded tool call of a session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    pub tool: Tool,
    #[serde(default, deserialize_with = "lenient")]
    pub params: CallArgs,
    /// First line of the tool's text result.
    pub summary: String,
    /// Repo-relative files the result named.
    pub files: Vec<String>,
    /// Files whose content the result returned (they count as read).
    #[serde(default)]
    pub read: Vec<String>,
    /// The lines of those files the result returned.
    #[serde(default)]
    pub read_lines: Vec<LineSpan>,
    /// The result's `total` (find_references: uses found), when it has one.
    #[serde(default)]
    pub total: Option<usize>,
    /// find_references: of `total`, the uses the parsed code names as a
    /// reference (not a `text` line: a string, a URL, a comment).
    #[serde(default)]
    pub uses: Option<usize>,
    /// Unix seconds.
    pub at: u64,
    /// The phase the call was made in (stamped by [`super::transition`]).
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

/// How a relevance score is judged (docs/sessions.md § Relevance): approve
/// as FACT, approve but raise the risk to HIGH, or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Fact,
    Grey,
    Reject,
}

/// A relevance check result kept in the session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RelevanceCheck {
    pub nl_term: String,
    pub symbol: String,
    pub score: f32,
    pub tier: Tier,
}

/// How a session ended (`record_outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionOutcome {
    Success,
    Failure,
    Partial,
}

impl SessionOutcome {
    /// The wire name (`success`, `failure`, `partial`).
    pub fn name(self) -> &'static str {
        match self {
            SessionOutcome::Success => "success",
            SessionOutcome::Failure => "failure",
            SessionOutcome::Partial => "partial",
        }
    }
}

impl std::fmt::Display for SessionOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
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
    pub tools_used: BTreeSet<Tool>,
    /// Files a result named (read or not).
    pub files_seen: BTreeSet<String>,
    /// Files whose content a result returned in this session: the only
    /// existing files the agent may write.
    pub explored: BTreeSet<String>,
    /// Symbol as given to find_references → uses it found.
    #[serde(default)]
    pub reference_checks: BTreeMap<String, usize>,
    /// Symbol as given to find_references → of those uses, the ones the
    /// parsed code names as a reference (`Evidence::uses`): what risk
    /// counts (`risk::touch_risk`). Sessions saved before it have none, and
    /// risk then counts `reference_checks`.
    #[serde(default)]
    pub reference_uses: BTreeMap<String, usize>,
    /// Identifier searched with `search_text` over the whole repository →
    /// the files its shown matches are in (uses seen by name;
    /// `requirements::text_uses`).
    #[serde(default)]
    pub text_checks: BTreeMap<String, BTreeSet<String>>,
    /// Why the risk is what it is.
    #[serde(default)]
    pub risk_reasons: Vec<String>,
    pub understanding: Option<Understanding>,
    /// Files added to the change after the understanding (`add_explored_files`
    /// in READY, with a reason, risk re-assessed): writable like the files
    /// the understanding lists.
    #[serde(default)]
    pub scope_added: BTreeSet<String>,
    /// Dropped on load when written by a release with another shape.
    #[serde(default, deserialize_with = "lenient")]
    pub last_assessment: Option<Assessment>,
    pub hypotheses: Vec<Hypothesis>,
    pub relevance: Vec<RelevanceCheck>,
    /// Writes checked and allowed.
    pub writes_allowed: Vec<String>,
    pub refusals: Vec<String>,
    pub outcome: Option<SessionOutcome>,
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

/// What a successful session agrees on: the symbols it identified (and
/// hypotheses confirmed as FACT), first occurrence kept, and the files it
/// analysed or was allowed to write, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agreement {
    pub symbols: Vec<String>,
    pub files: Vec<String>,
    /// The term its learned pairs are keyed by: the target feature's quote,
    /// or the whole request when the frame has none.
    pub term: String,
}

impl Session {
    /// The agreement `record_outcome` stores on success.
    pub fn agreement(&self) -> Agreement {
        let u = self.understanding.clone().unwrap_or_default();
        let mut symbols = u.symbols_identified.clone();
        symbols.extend(
            self.hypotheses
                .iter()
                .filter(|h| h.state == HypothesisState::Fact)
                .map(|h| h.symbol.clone()),
        );
        // FACT hypotheses are already in the understanding after
        // verification: keep the first occurrence of each symbol.
        let mut seen = BTreeSet::new();
        symbols.retain(|sym| seen.insert(sym.clone()));
        let files: BTreeSet<String> = u
            .files_analyzed
            .iter()
            .chain(&self.writes_allowed)
            .cloned()
            .collect();
        Agreement {
            symbols,
            files: files.into_iter().collect(),
            term: self
                .frame
                .get(&SlotName::TargetFeature)
                .map_or_else(|| self.query.clone(), |t| t.quote.clone()),
        }
    }

    /// Parses a stored session; its requirements are recomputed from intent
    /// and risk (the rules may have changed since it was written).
    ///
    /// # Errors
    /// The text is not a session.
    pub fn from_json(text: &str) -> Result<Session, serde_json::Error> {
        let mut s: Session = serde_json::from_str(text)?;
        s.requirements = Requirements::of(s.intent, s.risk);
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
            requirements: Requirements::of(intent, risk),
            reference_checks: BTreeMap::new(),
            reference_uses: BTreeMap::new(),
            text_checks: BTreeMap::new(),
            risk_reasons: Vec::new(),
            evidence: Vec::new(),
            tools_used: BTreeSet::new(),
            files_seen: BTreeSet::new(),
            explored: BTreeSet::new(),
            understanding: None,
            scope_added: BTreeSet::new(),
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

    /// Whether the change covers `file`, so that it may be written: the
    /// submitted understanding edits it ([`Understanding::edits`]: a file
    /// only analysed next to named edits was not judged for risk) or
    /// `add_explored_files` added it in READY.
    pub fn covers(&self, file: &str) -> bool {
        self.understanding
            .iter()
            .flat_map(Understanding::edits)
            .chain(&self.scope_added)
            .any(|f| f == file)
    }

    /// Every file the understanding lists (edited or analysed) and the ones
    /// added in READY: where new files may go beside or under.
    pub fn covered(&self) -> impl Iterator<Item = &String> {
        self.understanding
            .iter()
            .flat_map(|u| u.files_analyzed.iter().chain(&u.files_to_edit))
            .chain(&self.scope_added)
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
        self.requirements = Requirements::of(self.intent, self.risk);
    }
}

#[cfg(test)]
mod tests;
