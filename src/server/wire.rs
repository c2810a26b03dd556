//! The tool boundary and the result types of the session tools: what a
//! handler hands back ([`Reply`]: the value that
//! becomes structured content, the text, and what the reply [`Shown`] the
//! agent), and what a call is for the gate ([`ToolParams`], [`Call`]).
//!
//! The write gate learns what the agent has read from [`Shown`], which the
//! code that builds a reply fills as it decides what the reply contains
//! (never from the names of keys in the serialised result), so renaming a
//! field of a result type cannot change what counts as read.

use std::collections::{BTreeMap, BTreeSet};

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::Serialize;

use super::{SessionGate, ToolError};
use crate::classify::FileClass;
use crate::index::{Readiness, SyncReport};
use crate::learn::LearnedPair;
use crate::rank::{self, QueryPlan, RankedFile};
use crate::relevance::Thresholds;
use crate::search::symbols::Definition;
use crate::session::{
    Assessment, CallArgs, HypothesisState, Intent, LineSpan, Phase, QueryFrame, RelevanceCheck,
    Requirement, Requirements, Risk, Session, SessionOutcome, Slot, SlotName, SlotNote, Tool,
    ToolClass,
};
use crate::store::ForestHit;
use crate::store::MapHit;

/// Lines a reply must return of a file, short of a complete unit, for the
/// file to count as read: a range of code, not a single line or a
/// signature with its docblock's end (docs/sessions.md § Gate).
pub(crate) const MIN_READ_LINES: usize = 3;

/// What a reply showed: the files it named and the files whose content it
/// returned, with the line ranges returned (1-based, inclusive).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Shown {
    /// Repo-relative files the reply named (read ones included).
    pub named: BTreeSet<String>,
    /// Repo-relative files whose lines the reply returned → the ranges.
    pub read: BTreeMap<String, Vec<(usize, usize)>>,
    /// Files of which the reply returned a complete unit: the whole file or
    /// a whole definition (however few lines).
    pub complete: BTreeSet<String>,
    /// The result's total count, when it has one (find_references: uses
    /// found, which the session keeps as the reference check).
    pub total: Option<usize>,
    /// find_references: of `total`, the uses the parsed code names as a
    /// reference (`ReferenceList::parsed`), which risk counts.
    pub uses: Option<usize>,
}

impl Shown {
    /// Records that the reply named `file`.
    pub fn name(&mut self, file: &str) {
        if !self.named.contains(file) {
            self.named.insert(file.to_string());
        }
    }

    /// Records that the reply returned lines `start..=end` of `file` (it
    /// names the file too).
    pub fn read(&mut self, file: &str, start: usize, end: usize) {
        self.name(file);
        self.read
            .entry(file.to_string())
            .or_default()
            .push((start, end));
    }

    /// Records that the reply returned lines `start..=end` of `file` and
    /// that they are a complete unit: the whole file or a whole definition.
    pub fn read_unit(&mut self, file: &str, start: usize, end: usize) {
        self.read(file, start, end);
        self.complete.insert(file.to_string());
    }

    /// Files the reply counts as read: a complete unit of them, or at least
    /// [`MIN_READ_LINES`] of their lines (ranges merged) — a single line
    /// such as `<?php` is not reading the code (after READY, line 1 of an
    /// 82-line file once made it writable).
    pub fn read_files(&self) -> Vec<String> {
        self.read
            .iter()
            .filter(|(file, ranges)| {
                self.complete.contains(*file)
                    || crate::session::lines_covered(ranges) >= MIN_READ_LINES
            })
            .map(|(file, _)| file.clone())
            .collect()
    }

    /// The returned line ranges, file by file.
    pub fn spans(&self) -> Vec<LineSpan> {
        self.read
            .iter()
            .flat_map(|(file, ranges)| {
                ranges.iter().map(|&(start_line, end_line)| LineSpan {
                    file: file.clone(),
                    start_line,
                    end_line,
                })
            })
            .collect()
    }
}

/// A handler's reply: `value` (structured content), `text` (for models and
/// people that read only text) and what it showed.
#[derive(Debug)]
pub(crate) struct Reply<T> {
    pub value: T,
    pub text: String,
    pub shown: Shown,
}

impl<T: Serialize> Reply<T> {
    /// A reply that shows no file (session tools, status).
    pub fn new(value: T, text: String) -> Reply<T> {
        Reply {
            value,
            text,
            shown: Shown::default(),
        }
    }

    /// The same reply with what it showed.
    pub fn with_shown(mut self, shown: Shown) -> Reply<T> {
        self.shown = shown;
        self
    }

    /// The MCP result: `value` as structured content, `text` as its text block.
    ///
    /// # Errors
    /// `value` cannot be serialised (a bug: every result type serialises).
    pub fn into_result(self) -> Result<CallToolResult, ToolError> {
        let json = serde_json::to_value(&self.value)
            .map_err(|e| ToolError::failed(format!("cannot serialise result: {e}")))?;
        let mut r = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        r.structured_content = Some(json);
        Ok(r)
    }

    /// The first line of the text (what a session's evidence keeps).
    pub fn summary(&self) -> String {
        self.text.lines().next().unwrap_or("").to_string()
    }
}

/// One call as the gate and the session see it.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub tool: Tool,
    pub class: ToolClass,
    pub session_id: Option<String>,
    /// The arguments the session's rules use.
    pub args: CallArgs,
}

/// Parameters of a gated read-only tool: which tool, its gate class, the
/// session it is gated by, and the arguments the session keeps.
pub(crate) trait ToolParams {
    const TOOL: Tool;

    /// The optional session of the call.
    fn session(&self) -> &SessionGate;

    /// The gate class (code tools by default).
    fn class(&self) -> ToolClass {
        ToolClass::Code
    }

    /// The arguments the session's rules and reports use.
    fn args(&self) -> CallArgs {
        CallArgs::default()
    }

    /// The call, taken before the parameters move into the handler's body.
    fn call(&self) -> Call {
        Call {
            tool: Self::TOOL,
            class: self.class(),
            session_id: self.session().session_id.clone(),
            args: self.args(),
        }
    }
}

// ---- Results of the code tools. ----

/// Lines of one file (result of `read_file`, and per file of `add_explored_files`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileLines {
    pub file: String,
    /// 1-based first line returned.
    pub start_line: usize,
    /// 1-based last line returned (inclusive; start_line − 1 when none).
    pub end_line: usize,
    /// Lines in the file.
    pub total_lines: usize,
    /// The lines, `\n`-joined.
    pub content: String,
    /// The budget or end_line cut the file short.
    pub truncated: bool,
    /// Runs of `content`'s lines the text leaves out (a whole-file read in
    /// a session): an earlier reply of the session returned them, and the
    /// file has not changed since.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shown_earlier: Vec<LineRange>,
}

/// Lines `start_line..=end_line` of a file (1-based, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LineRange {
    pub start_line: usize,
    pub end_line: usize,
}

/// Result of `read_file`: one file's lines (`file`), or each file's in the
/// order given (`files`).
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ReadFileResult {
    One(FileLines),
    Several {
        files: Vec<FileLines>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        not_read: Vec<NotRead>,
    },
}

/// A file of `read_file`'s `files` that was not read.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NotRead {
    pub file: String,
    /// Why (the error a read of it alone gives).
    pub error: String,
}

/// A definition with its file.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SymbolInfo {
    pub name: String,
    pub kind: String,
    pub file: String,
    /// 1-based first line.
    pub line: usize,
    /// 1-based last line (inclusive).
    pub end_line: usize,
    pub scope: Option<String>,
    pub signature: String,
    pub fqcn: Option<String>,
    pub doc: Option<String>,
}

impl SymbolInfo {
    pub(super) fn new(file: &str, d: &Definition) -> SymbolInfo {
        SymbolInfo {
            name: d.name.clone(),
            kind: d.kind.clone(),
            file: file.to_string(),
            line: d.line,
            end_line: d.end_line,
            scope: d.scope.clone(),
            signature: d.signature.clone(),
            fqcn: d.fqcn.clone(),
            doc: d.doc.clone(),
        }
    }
}

/// Result of `find_definitions` and `get_symbols`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SymbolList {
    pub symbols: Vec<SymbolInfo>,
    /// All matches (not capped by `max_results`).
    pub total: usize,
    pub truncated: bool,
    /// Files searched.
    pub files_scanned: usize,
    /// Files whose parse had errors (results from them are best effort).
    pub files_with_parse_errors: Vec<String>,
    /// When a `kind` filter matched nothing: the kinds the same files and
    /// name do define, with their counts (empty otherwise).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub other_kinds: std::collections::BTreeMap<String, usize>,
}

/// A node of a file's symbol tree.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StructureNode {
    pub name: String,
    pub kind: String,
    pub line: usize,
    pub end_line: usize,
    pub signature: String,
    pub children: Vec<StructureNode>,
}

/// Structure of one file.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileStructure {
    pub file: String,
    pub language: String,
    pub lines: usize,
    pub has_parse_errors: bool,
    pub symbols: Vec<StructureNode>,
}

/// Result of `analyze_structure`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StructureResult {
    pub files: Vec<FileStructure>,
    pub truncated: bool,
}

/// Result of `get_function_at_line`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FunctionAtLine {
    pub file: String,
    pub name: String,
    pub kind: String,
    pub line: usize,
    pub end_line: usize,
    pub scope: Option<String>,
    pub signature: String,
    pub fqcn: Option<String>,
    /// Source lines `line..=end_line`.
    pub source: String,
}

// ---- Results of the index tools. ----

/// Result of `semantic_search`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SemanticResult {
    /// Code chunks, best first; `score` is cosine similarity in [-1, 1].
    pub results: Vec<ForestHit>,
    /// Agreements from `map`, best first (empty until sessions record outcomes).
    pub map_results: Vec<MapHit>,
    /// `auto` stopped at a map agreement scoring at least the calibrated
    /// `map_short_circuit` threshold; forest was not searched.
    pub short_circuit: bool,
    pub index: Readiness,
}

/// Result of `query`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct QueryResult {
    /// What the router saw (keywords, Japanese terms and their English words) and which tools it recommends.
    pub plan: QueryPlan,
    /// Files, best first, by the fused score, each with its class, why it ranked and its best chunks.
    pub files: Vec<RankedFile>,
    /// Files the change likely needs too: code-graph neighbours and
    /// co-change partners of the top files that the ranking left out, the
    /// create/edit counterparts of listed files, and files several listed
    /// files are tied to.
    pub also_check: Vec<crate::graph::Related>,
    /// Tests that exercise the files above (named after one, referring to
    /// one, or changed with one), which the change likely updates; tests
    /// are not in `files` or `also_check` unless the request asks for them.
    pub tests: Vec<crate::graph::Related>,
    /// Files the reply names in `files` and `also_check` (tests not
    /// counted): how long the list an agent is asked to look at is.
    pub files_shown: usize,
    /// File classes the request asks for (not ranked below source).
    pub requested_kinds: Vec<FileClass>,
    pub index: Readiness,
    /// Milliseconds spent.
    pub timings: rank::Timings,
    /// With `intent`: the session this call opened, as `start_session`'s reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionStarted>,
}

/// Result of `sync_index`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SyncResult {
    pub report: SyncReport,
    pub index: Readiness,
}

/// Result of `related_files`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RelatedResult {
    /// The files the change starts from (given, or defining the symbol).
    pub seeds: Vec<String>,
    /// Related files, best first, each with its edges and co-change.
    pub files: Vec<crate::graph::Related>,
    /// Edges in the code graph.
    pub graph_edges: usize,
    /// Commits in the co-change history.
    pub history_commits: usize,
    pub index: Readiness,
}

// ---- Results of the session tools (their structured content). ----

/// Result of `start_session`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionStarted {
    pub session_id: String,
    pub intent: Intent,
    pub phase: Phase,
    pub risk_level: Risk,
    /// A past agreement for a similar request (score ≥ the calibrated
    /// `map_short_circuit`), or null.
    pub map_hint: Option<MapHit>,
    /// The index's readiness in one line.
    pub index: String,
    /// Without `slots`, for IMPLEMENT/MODIFY: how to extract the frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extraction_prompt: Option<&'static str>,
    /// With `slots`: the frame as set.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub frame: Option<FrameSet>,
    /// What to do next.
    pub next: String,
}

/// The frame after `set_query_frame` (or `start_session` with `slots`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct FrameSet {
    /// Slots in the frame now.
    pub accepted: Vec<SlotName>,
    /// The frame as it now stands: the slots accepted by this call merged
    /// into those accepted before (a slot left out of the call is kept).
    pub frame: QueryFrame,
    /// Slots not accepted, with why.
    pub rejected: Vec<SlotNote>,
    /// Slots accepted whose value may not say what its quote says (the
    /// value/quote check warns rather than rejects: docs/sessions.md).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<SlotNote>,
    pub requirements: Requirements,
}

/// Result of `set_query_frame`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FrameReply {
    #[serde(flatten)]
    pub frame: FrameSet,
    /// Value/quote similarity per checked slot (empty when the model is not loaded).
    pub consistency: BTreeMap<SlotName, f32>,
    pub missing_slots: Vec<SlotName>,
    pub risk_level: Risk,
    pub next: String,
}

/// Result of `submit_understanding`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UnderstandingReply {
    pub phase: Phase,
    /// Server-computed share of the requirements met, 0-1.
    pub confidence: f32,
    /// Requirement → what would satisfy it.
    pub missing: BTreeMap<Requirement, String>,
    pub rejected_claims: Vec<String>,
    /// Existing files named (files_analyzed, existing_patterns) that the
    /// session never read and no requirement checked: taken as said.
    pub unchecked: Vec<String>,
    /// Symbols named with no definition yet that the change creates (a
    /// member of a class in files_to_edit, or a class whose new file is
    /// there): taken as said.
    pub created: Vec<String>,
    pub risk_level: Risk,
    pub risk_reasons: Vec<String>,
    pub requirements: Requirements,
    pub note: String,
    pub next: String,
}

/// Result of `validate_symbol_relevance`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RelevanceReply {
    pub results: Vec<RelevanceCheck>,
    /// The calibrated thresholds the tiers come from.
    pub thresholds: Thresholds,
    pub risk_level: Risk,
    /// A grey-zone result raised the session's risk to HIGH.
    pub risk_forced_high: bool,
    /// Pairs learned from earlier successful sessions for this term.
    pub learned_pairs: Vec<LearnedPair>,
    /// Symbols without a definition (rejected whatever their score).
    pub undefined_symbols: BTreeSet<String>,
    /// What to do about rejected symbols, or null.
    pub guidance: Option<String>,
}

/// Result of `check_write_target`: the write is allowed (a refusal is a
/// tool error with its recovery options).
#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteAllowed {
    /// The file, repo-relative.
    pub file: String,
    /// For a new file: the convention its path follows.
    pub convention: Option<String>,
}

/// Result of `add_explored_files`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExploredReply {
    pub files: Vec<FileLines>,
    pub phase: Phase,
    pub next: String,
}

/// Result of `record_outcome`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct OutcomeReply {
    pub session_id: String,
    pub outcome: SessionOutcome,
    /// On success: the agreement written (repo-relative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agreement: Option<String>,
    /// On success: the agreement's row was added to `map`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_added: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_error: Option<String>,
    /// On success: learned pairs kept (null when they could not be stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub learned_pairs: Option<Option<usize>>,
}

/// Result of `get_session_analysis`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionAnalysis {
    pub session: SessionView,
    pub calls_per_tool: BTreeMap<Tool, usize>,
    pub relevance_checks: Vec<RelevanceCheck>,
    pub writes_allowed: Vec<String>,
    pub outcome: Option<SessionOutcome>,
    pub duration_seconds: u64,
}

/// The session as tools report it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionView {
    pub session_id: String,
    pub intent: Intent,
    pub phase: Phase,
    pub risk_level: Risk,
    pub frame: BTreeMap<SlotName, Slot>,
    pub missing_slots: Vec<SlotName>,
    pub requirements: Requirements,
    pub assessment: Option<Assessment>,
    pub tools_used: Vec<Tool>,
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

impl SessionView {
    /// The view of `s`.
    pub fn of(s: &Session) -> SessionView {
        SessionView {
            session_id: s.id.clone(),
            intent: s.intent,
            phase: s.phase,
            risk_level: s.risk,
            frame: s.frame.clone(),
            missing_slots: crate::session::missing_slots(&s.frame),
            requirements: s.requirements.clone(),
            assessment: s.last_assessment.clone(),
            tools_used: s.tools_used.iter().copied().collect(),
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
            next: crate::session::next_step(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::code_tools::*;
    use crate::server::index_tools::*;
    use crate::server::session_tools::*;

    /// Every tool's (input, result) schema, by tool name.
    fn schemas() -> BTreeMap<&'static str, (serde_json::Value, serde_json::Value)> {
        fn pair<P: JsonSchema, R: JsonSchema>() -> (serde_json::Value, serde_json::Value) {
            (
                serde_json::to_value(schemars::schema_for!(P)).unwrap(),
                serde_json::to_value(schemars::schema_for!(R)).unwrap(),
            )
        }
        BTreeMap::from([
            (
                "search_text",
                pair::<SearchTextParams, crate::search::text::TextResult>(),
            ),
            (
                "find_definitions",
                pair::<FindDefinitionsParams, SymbolList>(),
            ),
            (
                "find_references",
                pair::<FindReferencesParams, crate::search::references::ReferenceList>(),
            ),
            ("get_symbols", pair::<GetSymbolsParams, SymbolList>()),
            (
                "analyze_structure",
                pair::<AnalyzeStructureParams, StructureResult>(),
            ),
            (
                "get_function_at_line",
                pair::<FunctionAtLineParams, FunctionAtLine>(),
            ),
            ("read_file", pair::<ReadFileParams, ReadFileResult>()),
            (
                "semantic_search",
                pair::<SemanticSearchParams, SemanticResult>(),
            ),
            ("query", pair::<QueryParams, QueryResult>()),
            ("sync_index", pair::<SyncIndexParams, SyncResult>()),
            (
                "start_session",
                pair::<StartSessionParams, SessionStarted>(),
            ),
            ("set_query_frame", pair::<SetQueryFrameParams, FrameReply>()),
            ("get_session_status", pair::<SessionParams, SessionView>()),
            (
                "submit_understanding",
                pair::<SubmitUnderstandingParams, UnderstandingReply>(),
            ),
            (
                "validate_symbol_relevance",
                pair::<ValidateRelevanceParams, RelevanceReply>(),
            ),
            (
                "submit_semantic",
                pair::<SubmitSemanticParams, SessionView>(),
            ),
            (
                "submit_verification",
                pair::<SubmitVerificationParams, SessionView>(),
            ),
            (
                "check_write_target",
                pair::<CheckWriteParams, WriteAllowed>(),
            ),
            (
                "add_explored_files",
                pair::<AddExploredParams, ExploredReply>(),
            ),
            ("revert_to_exploration", pair::<RevertParams, SessionView>()),
            (
                "record_outcome",
                pair::<RecordOutcomeParams, OutcomeReply>(),
            ),
            (
                "get_session_analysis",
                pair::<SessionParams, SessionAnalysis>(),
            ),
            (
                "get_improvement_insights",
                pair::<NoParams, crate::learn::Insights>(),
            ),
            (
                "related_files",
                pair::<crate::server::graph_tools::RelatedFilesParams, RelatedResult>(),
            ),
        ])
    }

    /// `get_improvement_insights` takes no arguments.
    #[derive(JsonSchema)]
    struct NoParams {}

    /// Every tool's input and result schema against
    /// tests/snapshots/schemas.json: a change is deliberate
    /// (`UPDATE_SNAPSHOTS=1 cargo test schemas` rewrites it; review the
    /// diff), a missing snapshot fails.
    #[test]
    fn schemas_match_the_snapshot() {
        let got = schemas();
        assert_eq!(
            got.keys().copied().collect::<Vec<_>>(),
            {
                let mut all: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
                all.sort_unstable();
                all
            },
            "every tool has its schemas"
        );
        let json: BTreeMap<&str, serde_json::Value> = got
            .into_iter()
            .map(|(k, (i, r))| (k, serde_json::json!({"input": i, "result": r})))
            .collect();
        let text = serde_json::to_string_pretty(&json).unwrap() + "\n";
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/schemas.json");
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; UPDATE_SNAPSHOTS=1 writes it", path.display()));
        assert!(
            want == text,
            "tool schemas changed: UPDATE_SNAPSHOTS=1 cargo test schemas, and review the diff"
        );
    }

    #[test]
    fn reads_name_their_files_and_keep_every_range() {
        let mut s = Shown::default();
        s.name("a.php");
        s.read("b.php", 3, 9);
        s.read("b.php", 20, 22);
        assert_eq!(
            s.named.iter().map(String::as_str).collect::<Vec<_>>(),
            ["a.php", "b.php"]
        );
        assert_eq!(s.read_files(), ["b.php"]);
        assert_eq!(
            s.spans()
                .iter()
                .map(|l| (l.start_line, l.end_line))
                .collect::<Vec<_>>(),
            [(3, 9), (20, 22)]
        );
    }
}
