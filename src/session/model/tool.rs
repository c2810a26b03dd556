//! The MCP tools as the session's rules name them, and the gate's classes
//! of tool calls.

use serde::{Deserialize, Serialize};

/// The MCP tools whose names the session's rules use (the gate, the
/// machine, the requirements). `name()` is the wire name; serde writes the
/// same (`snake_case`), so stored sessions read the same strings.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    SearchText,
    FindDefinitions,
    FindReferences,
    GetSymbols,
    AnalyzeStructure,
    GetFunctionAtLine,
    ReadFile,
    SemanticSearch,
    Query,
    SyncIndex,
    StartSession,
    SetQueryFrame,
    GetSessionStatus,
    SubmitUnderstanding,
    ValidateSymbolRelevance,
    SubmitSemantic,
    SubmitVerification,
    CheckWriteTarget,
    AddExploredFiles,
    RevertToExploration,
    RecordOutcome,
    GetSessionAnalysis,
    GetImprovementInsights,
    RelatedFiles,
}

impl Tool {
    /// Every tool, in the order `tools/list` documents them.
    pub const ALL: [Tool; 24] = [
        Tool::SearchText,
        Tool::FindDefinitions,
        Tool::FindReferences,
        Tool::GetSymbols,
        Tool::AnalyzeStructure,
        Tool::GetFunctionAtLine,
        Tool::ReadFile,
        Tool::SemanticSearch,
        Tool::Query,
        Tool::SyncIndex,
        Tool::StartSession,
        Tool::SetQueryFrame,
        Tool::GetSessionStatus,
        Tool::SubmitUnderstanding,
        Tool::ValidateSymbolRelevance,
        Tool::SubmitSemantic,
        Tool::SubmitVerification,
        Tool::CheckWriteTarget,
        Tool::AddExploredFiles,
        Tool::RevertToExploration,
        Tool::RecordOutcome,
        Tool::GetSessionAnalysis,
        Tool::GetImprovementInsights,
        Tool::RelatedFiles,
    ];

    /// The tool's MCP name (`search_text`, …).
    pub fn name(self) -> &'static str {
        match self {
            Tool::SearchText => "search_text",
            Tool::FindDefinitions => "find_definitions",
            Tool::FindReferences => "find_references",
            Tool::GetSymbols => "get_symbols",
            Tool::AnalyzeStructure => "analyze_structure",
            Tool::GetFunctionAtLine => "get_function_at_line",
            Tool::ReadFile => "read_file",
            Tool::SemanticSearch => "semantic_search",
            Tool::Query => "query",
            Tool::SyncIndex => "sync_index",
            Tool::StartSession => "start_session",
            Tool::SetQueryFrame => "set_query_frame",
            Tool::GetSessionStatus => "get_session_status",
            Tool::SubmitUnderstanding => "submit_understanding",
            Tool::ValidateSymbolRelevance => "validate_symbol_relevance",
            Tool::SubmitSemantic => "submit_semantic",
            Tool::SubmitVerification => "submit_verification",
            Tool::CheckWriteTarget => "check_write_target",
            Tool::AddExploredFiles => "add_explored_files",
            Tool::RevertToExploration => "revert_to_exploration",
            Tool::RecordOutcome => "record_outcome",
            Tool::GetSessionAnalysis => "get_session_analysis",
            Tool::GetImprovementInsights => "get_improvement_insights",
            Tool::RelatedFiles => "related_files",
        }
    }

    /// The tool of an MCP name, `None` for a name that is not ours.
    pub fn parse(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
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
