//! Read-only code tools: search_text, find_definitions, find_references,
//! get_symbols, analyze_structure, get_function_at_line, read_file. Each
//! reply fits its `max_tokens` budget (`budget`).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::budget::{Budget, check_max_tokens};
use super::wire::{
    FileLines, FileStructure, FunctionAtLine, LineRange, NotRead, ReadFileResult, StructureNode,
    StructureResult, SymbolInfo, SymbolList,
};
use super::{CodeIntel, Reply, SessionGate, Shared, Shown, ToolError, ToolParams, blocking};
use crate::search::references;
use crate::search::symbols::{
    Definition, FileSymbols, SymbolError, qualifier_matches_in, split_qualified,
};
use crate::search::text::{self, CaseMode, TextSearch};
use crate::session::{CallArgs, Tool};

mod read;
mod replies;
mod search;

pub(super) use read::read_lines;

fn default_max_results() -> usize {
    100
}

/// `search_text` with at least this many lines of context around each match
/// returns enough code to count as reading the matched files.
const READ_CONTEXT_LINES: usize = 3;

/// Parameters of `search_text`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchTextParams {
    /// Rust regex (as ripgrep), or literal text with `literal`.
    pub pattern: String,
    /// `pattern` is literal text. Default false.
    #[serde(default)]
    pub literal: bool,
    /// sensitive (default), insensitive, or smart (insensitive unless the pattern has uppercase).
    #[serde(default)]
    pub case: CaseMode,
    /// Match whole words only. Default false.
    #[serde(default)]
    pub word: bool,
    /// Repo-relative file or directory (default: all).
    #[serde(default)]
    pub path: Option<String>,
    /// Path glob: `src/**/*.php`, `*.py` (no `/`: the file name), `!x` excludes x.
    #[serde(default)]
    pub glob: Option<String>,
    /// A language (php, python, …) or ripgrep file type (md, json, …).
    #[serde(default)]
    pub file_type: Option<String>,
    /// Lines around each match, 0-20. Default 0.
    #[serde(default)]
    pub context_lines: usize,
    /// 1-2000. Default 100; `total` counts all.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    /// Reply budget in tokens, 100-20000 (default 1500).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `find_definitions`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FindDefinitionsParams {
    /// Name, optionally qualified: `auth`, `AuthService::auth`, `App\Services\AuthService`.
    pub symbol: String,
    /// Repo-relative file or directory (default: all).
    #[serde(default)]
    pub path: Option<String>,
    /// Only this language (php, python, …).
    #[serde(default)]
    pub language: Option<String>,
    /// true (default): exact, case-sensitive; false: case-insensitive substring.
    #[serde(default = "yes")]
    pub exact_match: bool,
    /// Only this kind (function, method, class, interface, trait, enum, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// Default 100.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    /// Reply budget in tokens, 100-20000 (default 1000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

fn yes() -> bool {
    true
}

/// Parameters of `find_references`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FindReferencesParams {
    /// Identifier, Blade view or file path to find uses of (whole word, case-sensitive).
    pub symbol: String,
    /// Repo-relative file or directory (default: all).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files of this language or ripgrep file type.
    #[serde(default)]
    pub language: Option<String>,
    /// Default 100; `total` counts all.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    /// Reply budget in tokens, 100-20000 (default 1500).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `get_symbols`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetSymbolsParams {
    /// Repo-relative file or directory (default: the whole repo).
    #[serde(default)]
    pub path: Option<String>,
    /// Only this kind (function, method, class, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only names containing this text (case-insensitive).
    #[serde(default)]
    pub name: Option<String>,
    /// Only this language.
    #[serde(default)]
    pub language: Option<String>,
    /// Default 500.
    #[serde(default = "default_symbol_limit")]
    pub max_results: usize,
    /// Reply budget in tokens, 100-20000 (default 1500).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

fn default_symbol_limit() -> usize {
    500
}

/// Parameters of `analyze_structure`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AnalyzeStructureParams {
    /// Repo-relative file or directory.
    pub path: String,
    /// Files at most for a directory. Default 50.
    #[serde(default = "default_max_files")]
    pub max_files: usize,
    /// Reply budget in tokens, 100-20000 (default 1500).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

fn default_max_files() -> usize {
    50
}

/// Parameters of `get_function_at_line`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FunctionAtLineParams {
    /// Repo-relative file.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// Reply budget in tokens, 100-20000 (default 2000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Files one `read_file` call reads at most (`files`).
pub const READ_FILES_MAX: usize = 10;

/// Parameters of `read_file`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReadFileParams {
    /// Repo-relative file.
    #[serde(default)]
    pub file: Option<String>,
    /// Or several whole files (1-10).
    #[serde(default)]
    pub files: Vec<String>,
    /// First line, 1-based. Default 1.
    #[serde(default)]
    pub start_line: Option<usize>,
    /// Last line, 1-based, inclusive. Default: as far as max_tokens allows.
    #[serde(default)]
    pub end_line: Option<usize>,
    /// Reply budget in tokens, 100-20000 (default 2000 a file, shared).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

impl ToolParams for SearchTextParams {
    const TOOL: Tool = Tool::SearchText;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            pattern: Some(self.pattern.clone()),
            literal: self.literal,
            path: self.path.clone(),
            ..CallArgs::default()
        }
    }
}

impl ToolParams for FindDefinitionsParams {
    const TOOL: Tool = Tool::FindDefinitions;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            symbol: Some(self.symbol.clone()),
            path: self.path.clone(),
            ..CallArgs::default()
        }
    }
}

impl ToolParams for FindReferencesParams {
    const TOOL: Tool = Tool::FindReferences;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            symbol: Some(self.symbol.clone()),
            path: self.path.clone(),
            ..CallArgs::default()
        }
    }
}

impl ToolParams for GetSymbolsParams {
    const TOOL: Tool = Tool::GetSymbols;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            path: self.path.clone(),
            ..CallArgs::default()
        }
    }
}

impl ToolParams for AnalyzeStructureParams {
    const TOOL: Tool = Tool::AnalyzeStructure;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            path: Some(self.path.clone()),
            ..CallArgs::default()
        }
    }
}

impl ToolParams for FunctionAtLineParams {
    const TOOL: Tool = Tool::GetFunctionAtLine;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            path: Some(self.file.clone()),
            ..CallArgs::default()
        }
    }
}

impl ToolParams for ReadFileParams {
    const TOOL: Tool = Tool::ReadFile;
    fn session(&self) -> &SessionGate {
        &self.gate
    }
    fn args(&self) -> CallArgs {
        CallArgs {
            path: self.file.clone(),
            files: self.files.clone(),
            ..CallArgs::default()
        }
    }
}

#[tool_router(router = code_router, vis = "pub(super)")]
impl CodeIntel {
    /// Regex or literal search with ripgrep's engine (gitignore-aware). Matching lines with 1-based line:column; context_lines ≥ 3 counts the files as read.
    #[tool(annotations(title = "Search text", read_only_hint = true, open_world_hint = false))]
    async fn search_text(
        &self,
        Parameters(p): Parameters<SearchTextParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared.gated(p.call(), self.search_text_reply(p)).await
    }

    /// Where a symbol is defined: kind, file, 1-based lines, signature, FQCN, docblock.
    #[tool(annotations(
        title = "Find definitions",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn find_definitions(
        &self,
        Parameters(p): Parameters<FindDefinitionsParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared
            .gated(p.call(), self.find_definitions_reply(p))
            .await
    }

    /// Uses of a symbol (whole word), definitions excluded, with their enclosing function; `Class::method` keeps uses that resolve to the class.
    #[tool(annotations(
        title = "Find references",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn find_references(
        &self,
        Parameters(p): Parameters<FindReferencesParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared
            .gated(p.call(), self.find_references_reply(p))
            .await
    }

    /// Symbol table of a file, a directory or the whole repository, filterable by kind, name and language.
    #[tool(annotations(title = "List symbols", read_only_hint = true, open_world_hint = false))]
    async fn get_symbols(
        &self,
        Parameters(p): Parameters<GetSymbolsParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared.gated(p.call(), self.get_symbols_reply(p)).await
    }

    /// Nested symbol tree (classes → methods, @media → rules, …) with 1-based start/end lines, per file.
    #[tool(annotations(
        title = "Analyze structure",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn analyze_structure(
        &self,
        Parameters(p): Parameters<AnalyzeStructureParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared
            .gated(p.call(), self.analyze_structure_reply(p))
            .await
    }

    /// The function or method that contains a 1-based line of a file, with its source.
    #[tool(annotations(
        title = "Function at line",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn get_function_at_line(
        &self,
        Parameters(p): Parameters<FunctionAtLineParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared
            .gated(p.call(), self.function_at_line_reply(p))
            .await
    }

    /// Lines of files with 1-based numbers. With session_id they count as read (writable in READY).
    #[tool(annotations(title = "Read file", read_only_hint = true, open_world_hint = false))]
    async fn read_file(
        &self,
        Parameters(p): Parameters<ReadFileParams>,
    ) -> Result<CallToolResult, ToolError> {
        self.shared.gated(p.call(), self.read_file_reply(p)).await
    }
}
