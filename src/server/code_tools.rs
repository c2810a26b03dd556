//! Read-only code tools: search_text, find_definitions, find_references,
//! get_symbols, analyze_structure, get_function_at_line.

use std::fmt::Write;
use std::sync::Arc;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CodeIntel, SessionGate, Shared, ToolError, blocking, success};
use crate::search::references::{self, ReferenceList};
use crate::search::symbols::{
    Definition, FileSymbols, SymbolError, qualifier_matches, split_qualified,
};
use crate::search::text::{self, CaseMode, TextQuery, TextResult};
use crate::session::ToolClass;

fn default_max_results() -> usize {
    100
}

/// Parameters of `search_text`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchTextParams {
    /// Regular expression (Rust regex syntax, as ripgrep), or a literal string when `literal` is true.
    pub pattern: String,
    /// Treat `pattern` as a literal string. Default false.
    #[serde(default)]
    pub literal: bool,
    /// `sensitive` (default, as ripgrep), `insensitive`, or `smart` (insensitive unless the pattern has an uppercase letter).
    #[serde(default)]
    pub case: CaseMode,
    /// Match whole words only. Default false.
    #[serde(default)]
    pub word: bool,
    /// Repo-relative file or directory to search (default: the whole repo).
    #[serde(default)]
    pub path: Option<String>,
    /// Glob on the repo-relative path, e.g. `src/**/*.php`; without `/` it matches the file name, e.g. `*.py`.
    #[serde(default)]
    pub glob: Option<String>,
    /// A language code-intel parses (php, python, typescript, …; see README) or a ripgrep file type (md, json, yaml, …).
    #[serde(default)]
    pub file_type: Option<String>,
    /// Lines of context before and after each match, 0-20. Default 0.
    #[serde(default)]
    pub context_lines: usize,
    /// Matches returned at most, 1-2000. Default 100. `total` counts all matches.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `find_definitions`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FindDefinitionsParams {
    /// Symbol name, optionally qualified: `authenticate`, `AuthService.authenticate`, `AuthService::authenticate` or `App\Services\AuthService`.
    pub symbol: String,
    /// Repo-relative file or directory to look in (default: the whole repo).
    #[serde(default)]
    pub path: Option<String>,
    /// Only this language (php, python, typescript, …; as get_symbols reports it).
    #[serde(default)]
    pub language: Option<String>,
    /// true (default): the name must equal `symbol` (case-sensitive); false: case-insensitive substring match.
    #[serde(default = "yes")]
    pub exact_match: bool,
    /// Only this kind (function, method, class, interface, trait, enum, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// Definitions returned at most. Default 100.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    #[serde(flatten)]
    pub gate: SessionGate,
}

fn yes() -> bool {
    true
}

/// Parameters of `find_references`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FindReferencesParams {
    /// Symbol name (identifier) whose uses to find; matched as a whole word, case-sensitive.
    pub symbol: String,
    /// Repo-relative file or directory to look in (default: the whole repo).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files of this language or ripgrep file type.
    #[serde(default)]
    pub language: Option<String>,
    /// References returned at most. Default 100. `total` counts all.
    #[serde(default = "default_max_results")]
    pub max_results: usize,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `get_symbols`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetSymbolsParams {
    /// Repo-relative file or directory (default: the whole repo).
    #[serde(default)]
    pub path: Option<String>,
    /// Only this kind (function, method, class, interface, trait, enum, constant, field, rule, element, …).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only names containing this text (case-insensitive).
    #[serde(default)]
    pub name: Option<String>,
    /// Only this language.
    #[serde(default)]
    pub language: Option<String>,
    /// Symbols returned at most. Default 500.
    #[serde(default = "default_symbol_limit")]
    pub max_results: usize,
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
    /// Files described at most when `path` is a directory. Default 50.
    #[serde(default = "default_max_files")]
    pub max_files: usize,
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
    #[serde(flatten)]
    pub gate: SessionGate,
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
    fn new(file: &str, d: &Definition) -> SymbolInfo {
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

/// The definitions of `files` that `keep` selects, capped at `max`; parse
/// errors are reported for the files that contributed a result.
fn select_symbols(
    files: &[(String, Arc<FileSymbols>)],
    max: usize,
    keep: impl Fn(&Definition) -> bool,
) -> SymbolList {
    let mut all = Vec::new();
    let mut broken = Vec::new();
    for (file, syms) in files {
        let before = all.len();
        all.extend(
            syms.definitions
                .iter()
                .filter(|d| keep(d))
                .map(|d| SymbolInfo::new(file, d)),
        );
        if syms.has_errors && all.len() > before {
            broken.push(file.clone());
        }
    }
    let total = all.len();
    all.truncate(max);
    SymbolList {
        truncated: total > all.len(),
        symbols: all,
        total,
        files_scanned: files.len(),
        files_with_parse_errors: broken,
    }
}

fn list_text(list: &SymbolList) -> String {
    let mut s = format!("{} symbol(s)", list.total);
    if list.truncated {
        let _ = write!(s, ", showing {}", list.symbols.len());
    }
    s.push('\n');
    for d in &list.symbols {
        let _ = writeln!(
            s,
            "{}:{}-{} {} {}  {}",
            d.file,
            d.line,
            d.end_line,
            d.kind,
            d.fqcn.as_deref().unwrap_or(&d.name),
            d.signature
        );
    }
    s
}

fn structure(defs: &[Definition], parent: Option<usize>) -> Vec<StructureNode> {
    defs.iter()
        .enumerate()
        .filter(|(_, d)| d.parent == parent)
        .map(|(i, d)| StructureNode {
            name: d.name.clone(),
            kind: d.kind.clone(),
            line: d.line,
            end_line: d.end_line,
            signature: d.signature.clone(),
            children: structure(defs, Some(i)),
        })
        .collect()
}

fn render_tree(out: &mut String, nodes: &[StructureNode], depth: usize) {
    for n in nodes {
        let _ = writeln!(
            out,
            "{}{} {} [{}-{}]",
            "  ".repeat(depth),
            n.kind,
            n.name,
            n.line,
            n.end_line
        );
        render_tree(out, &n.children, depth + 1);
    }
}

impl Shared {
    fn scan(
        &self,
        path: Option<&str>,
        language: Option<&str>,
    ) -> Result<Vec<(String, Arc<FileSymbols>)>, SymbolError> {
        let start = self.repo.resolve(path.unwrap_or(""))?;
        self.symbols
            .scan(&self.repo, &self.config, &start, language)
    }
}

#[tool_router(router = code_router, vis = "pub(super)")]
impl CodeIntel {
    /// Regex or literal text search over the repository with ripgrep's engine (gitignore-aware, binary files skipped). Returns matching lines with 1-based line and column.
    #[tool(
        annotations(title = "Search text", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<TextResult>()
    )]
    async fn search_text(
        &self,
        Parameters(p): Parameters<SearchTextParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "search_text", class, params, async move {
                if !(1..=2000).contains(&p.max_results) || p.context_lines > 20 {
                    return Err(ToolError::invalid(
                        "max_results must be 1-2000 and context_lines 0-20",
                    ));
                }
                let shared = Arc::clone(&self.shared);
                let q = TextQuery {
                    pattern: p.pattern,
                    literal: p.literal,
                    case: p.case,
                    word: p.word,
                    path: p.path.unwrap_or_default(),
                    glob: p.glob,
                    file_type: p.file_type,
                    context_lines: p.context_lines,
                    max_results: p.max_results,
                };
                match blocking(move || text::search(&shared.repo, &shared.config, &q)).await? {
                    Ok(r) => {
                        let mut s =
                            format!("{} match(es) in {} file(s)", r.total, r.files_with_matches);
                        if r.truncated {
                            let _ = write!(s, ", showing {}", r.matches.len());
                        }
                        s.push('\n');
                        for m in &r.matches {
                            for (i, l) in m.context_before.iter().enumerate() {
                                let _ = writeln!(
                                    s,
                                    "{}-{}- {l}",
                                    m.file,
                                    m.line as usize - m.context_before.len() + i
                                );
                            }
                            let _ =
                                writeln!(s, "{}:{}:{}: {}", m.file, m.line, m.column, m.content);
                            for (i, l) in m.context_after.iter().enumerate() {
                                let _ = writeln!(s, "{}-{}- {l}", m.file, m.line as usize + 1 + i);
                            }
                        }
                        success(&r, s)
                    }
                    Err(e) => Err(e.into()),
                }
            })
            .await
    }

    /// Where a symbol is defined (tree-sitter tags queries): name, kind, file, 1-based line range, scope, signature, FQCN, docblock.
    #[tool(
        annotations(title = "Find definitions", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SymbolList>()
    )]
    async fn find_definitions(
        &self,
        Parameters(p): Parameters<FindDefinitionsParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "find_definitions", class, params, async move {
        if p.symbol.trim().is_empty() {
            return Err(ToolError::invalid(
                "symbol is empty: give a name such as `authenticate` or `AuthService::authenticate`",
            ));
        }
        let shared = Arc::clone(&self.shared);
        let symbol = p.symbol.clone();
        let result = blocking(move || -> Result<SymbolList, SymbolError> {
            let files = shared.scan(p.path.as_deref(), p.language.as_deref())?;
            let (qualifier, name) = if p.exact_match {
                split_qualified(&p.symbol)
            } else {
                (None, p.symbol.clone())
            };
            let needle = name.to_lowercase();
            Ok(select_symbols(&files, p.max_results, |d| {
                let name_ok = if p.exact_match {
                    d.name == name
                } else {
                    d.name.to_lowercase().contains(&needle)
                };
                name_ok
                    && p.kind.as_deref().is_none_or(|k| d.kind == k)
                    && qualifier.as_deref().is_none_or(|q| qualifier_matches(q, d))
            }))
        })
        .await?;
        match result {
            Ok(list) if list.total == 0 => {
                let text = format!(
                    "no definition of `{symbol}` in {} file(s); try exact_match=false, or search_text for the name",
                    list.files_scanned
                );
                success(&list, text)
            }
            Ok(list) => {
                let text = list_text(&list);
                success(&list, text)
            }
            Err(e) => Err(e.into()),
        }
            })
            .await
    }

    /// Uses of a symbol (whole-word, case-sensitive), definitions excluded, each with the function or class that contains it.
    #[tool(
        annotations(title = "Find references", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<ReferenceList>()
    )]
    async fn find_references(
        &self,
        Parameters(p): Parameters<FindReferencesParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "find_references", class, params, async move {
                let (_, name) = split_qualified(&p.symbol);
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '-')
                {
                    return Err(ToolError::invalid(format!(
                        "`{}` is not an identifier: give a symbol name such as `authenticate`",
                        p.symbol
                    )));
                }
                let shared = Arc::clone(&self.shared);
                let scope = references::Scope {
                    path: p.path.clone().unwrap_or_default(),
                    language: p.language.clone(),
                };
                let result = blocking(move || {
                    references::find(
                        &shared.repo,
                        &shared.config,
                        &shared.symbols,
                        &name,
                        &scope,
                        p.max_results,
                    )
                })
                .await?
                .map_err(ToolError::from);
                match result {
                    Ok(list) => {
                        let mut s = format!("{} reference(s)", list.total);
                        if list.truncated {
                            let _ = write!(s, ", showing {}", list.references.len());
                        }
                        s.push('\n');
                        for r in &list.references {
                            let within = r
                                .enclosing
                                .as_ref()
                                .map(|e| format!(" (in {} {})", e.kind, e.name))
                                .unwrap_or_default();
                            let _ = writeln!(
                                s,
                                "{}:{}:{} [{}]{within}: {}",
                                r.file, r.line, r.column, r.kind, r.content
                            );
                        }
                        success(&list, s)
                    }
                    Err(e) => Err(e),
                }
            })
            .await
    }

    /// Symbol table of a file, a directory or the whole repository, filterable by kind, name and language.
    #[tool(
        annotations(title = "List symbols", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<SymbolList>()
    )]
    async fn get_symbols(
        &self,
        Parameters(p): Parameters<GetSymbolsParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        self.shared
            .gated(
                session,
                "get_symbols",
                ToolClass::Code,
                params,
                async move {
                    let shared = Arc::clone(&self.shared);
                    let result = blocking(move || -> Result<SymbolList, SymbolError> {
                        let files = shared.scan(p.path.as_deref(), p.language.as_deref())?;
                        let needle = p.name.as_deref().map(str::to_lowercase);
                        Ok(select_symbols(&files, p.max_results, |d| {
                            p.kind.as_deref().is_none_or(|k| d.kind == k)
                                && needle
                                    .as_deref()
                                    .is_none_or(|n| d.name.to_lowercase().contains(n))
                        }))
                    })
                    .await?;
                    match result {
                        Ok(list) => {
                            let text = list_text(&list);
                            success(&list, text)
                        }
                        Err(e) => Err(e.into()),
                    }
                },
            )
            .await
    }

    /// Nested symbol tree (classes → methods, @media → rules, …) with 1-based start/end lines, per file.
    #[tool(
        annotations(title = "Analyze structure", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<StructureResult>()
    )]
    async fn analyze_structure(
        &self,
        Parameters(p): Parameters<AnalyzeStructureParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "analyze_structure", class, params, async move {
                let shared = Arc::clone(&self.shared);
                let path = p.path.clone();
                let result = blocking(move || -> Result<StructureResult, SymbolError> {
                    let files = shared.scan(Some(&p.path), None)?;
                    let truncated = files.len() > p.max_files;
                    let files = files
                        .into_iter()
                        .take(p.max_files)
                        .map(|(file, s)| FileStructure {
                            file,
                            language: s.lang.name().to_string(),
                            lines: s.line_count,
                            has_parse_errors: s.has_errors,
                            symbols: structure(&s.definitions, None),
                        })
                        .collect();
                    Ok(StructureResult { files, truncated })
                })
                .await?;
                match result {
                    Ok(r) if r.files.is_empty() => Err(ToolError::invalid(format!(
                        "no file with a supported language ({}) at `{path}`",
                        crate::lang::Lang::names().join(", ")
                    ))),
                    Ok(r) => {
                        let mut s = String::new();
                        for f in &r.files {
                            let _ = writeln!(
                                s,
                                "{} ({}, {} lines{})",
                                f.file,
                                f.language,
                                f.lines,
                                if f.has_parse_errors {
                                    ", parse errors"
                                } else {
                                    ""
                                }
                            );
                            render_tree(&mut s, &f.symbols, 1);
                        }
                        success(&r, s)
                    }
                    Err(e) => Err(e.into()),
                }
            })
            .await
    }

    /// The function or method that contains a 1-based line of a file, with its source.
    #[tool(
        annotations(title = "Function at line", read_only_hint = true, open_world_hint = false),
        output_schema = schema_for_output::<FunctionAtLine>()
    )]
    async fn get_function_at_line(
        &self,
        Parameters(p): Parameters<FunctionAtLineParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "get_function_at_line", class, params, async move {
        let shared = Arc::clone(&self.shared);
        let result = blocking(move || -> Result<FunctionAtLine, ToolError> {
            let abs = shared.repo.resolve(&p.file)?;
            if abs.is_dir() {
                return Err(ToolError::invalid(format!("`{}` is a directory: give a file", p.file)));
            }
            let syms = shared
                .symbols
                .get(&shared.repo, &abs, shared.config.max_file_size)?
                .ok_or_else(|| ToolError::invalid(format!("`{}` is not in a language code-intel parses ({}), is binary or larger than max_file_size", p.file, crate::lang::Lang::names().join(", "))))?;
            if p.line == 0 || p.line > syms.line_count.max(1) {
                return Err(ToolError::invalid(format!("line {} is outside `{}` (1-{})", p.line, p.file, syms.line_count)));
            }
            let d = syms
                .enclosing(p.line)
                .ok_or_else(|| ToolError::invalid(format!("no function, method or class encloses {}:{}; use analyze_structure to see the file's symbols", p.file, p.line)))?;
            let text = crate::repo::read_regular(&abs).map_err(ToolError::failed)?;
            let text = String::from_utf8_lossy(&text);
            let source = text.lines().skip(d.line - 1).take(d.end_line + 1 - d.line).collect::<Vec<_>>().join("\n");
            Ok(FunctionAtLine {
                file: shared.repo.rel(&abs),
                name: d.name.clone(),
                kind: d.kind.clone(),
                line: d.line,
                end_line: d.end_line,
                scope: d.scope.clone(),
                signature: d.signature.clone(),
                fqcn: d.fqcn.clone(),
                source,
            })
        })
        .await?;
        match result {
            Ok(f) => {
                let text = format!(
                    "{}:{}-{} {} {}\n{}",
                    f.file,
                    f.line,
                    f.end_line,
                    f.kind,
                    f.fqcn.as_deref().unwrap_or(&f.name),
                    f.source
                );
                success(&f, text)
            }
            Err(e) => Err(e),
        }
            })
            .await
    }
}
