//! Read-only code tools: search_text, find_definitions, find_references,
//! get_symbols, analyze_structure, get_function_at_line, read_file. Each
//! reply fits its `max_tokens` budget (`budget`).

use std::fmt::Write;
use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::budget::{Budget, check_max_tokens};
use super::{CodeIntel, Reads, SessionGate, Shared, ToolError, blocking, success};
use crate::search::references;
use crate::search::symbols::{
    Definition, FileSymbols, SymbolError, qualifier_matches, split_qualified,
};
use crate::search::text::{self, CaseMode, TextQuery};
use crate::session::ToolClass;

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
    /// Treat `pattern` as a literal string. Default false.
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
    /// Path glob, e.g. `src/**/*.php`; without `/` it matches the file name (`*.py`).
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
    /// Reply budget, tokens (estimated), 100-20000. Default 1500.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `find_definitions`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FindDefinitionsParams {
    /// Name, optionally qualified: `authenticate`, `AuthService::authenticate`, `App\Services\AuthService`.
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
    /// Reply budget, tokens (estimated), 100-20000. Default 1000.
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
    /// Identifier whose uses to find (whole word, case-sensitive).
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
    /// Reply budget, tokens (estimated), 100-20000. Default 1500.
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
    /// Reply budget, tokens (estimated), 100-20000. Default 1500.
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
    /// Reply budget, tokens (estimated), 100-20000. Default 1500.
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
    /// Reply budget, tokens (estimated), 100-20000. Default 2000.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

/// Parameters of `read_file`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReadFileParams {
    /// Repo-relative file.
    pub file: String,
    /// First line, 1-based. Default 1.
    #[serde(default)]
    pub start_line: Option<usize>,
    /// Last line, 1-based, inclusive. Default: as far as max_tokens allows.
    #[serde(default)]
    pub end_line: Option<usize>,
    /// Reply budget, tokens (estimated), 100-20000. Default 2000.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(flatten)]
    pub gate: SessionGate,
}

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
}

/// Reads lines `start..=end` (1-based) of a repository file within
/// `max_tokens`; the text shows each line with its number (`n\tline`).
///
/// # Errors
/// A path outside the repository or withheld, a directory, a binary or
/// non-regular file, a start line past the end.
pub(super) fn read_lines(
    shared: &Shared,
    file: &str,
    start: Option<usize>,
    end: Option<usize>,
    max_tokens: usize,
) -> Result<(FileLines, String), ToolError> {
    let abs = shared.repo.resolve(file)?;
    if abs.is_dir() {
        return Err(ToolError::invalid(format!(
            "`{file}` is a directory: give a file (get_symbols or analyze_structure list a directory)"
        )));
    }
    let bytes = crate::repo::read_regular(&abs)
        .map_err(|e| ToolError::invalid(format!("cannot read `{file}`: {e}")))?;
    if crate::repo::bytes_look_binary(&bytes) {
        return Err(ToolError::invalid(format!("`{file}` is binary")));
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let start = start.unwrap_or(1).max(1);
    if start > total.max(1) {
        return Err(ToolError::invalid(format!(
            "start_line {start} is past the end of `{file}` ({total} lines)"
        )));
    }
    let end = end.unwrap_or(total).min(total);
    let rel = shared.repo.rel(&abs);
    let mut b = Budget::new(max_tokens);
    b.force(&format!("{rel}:{start}-{end} of {total} lines\n"));
    let wanted = &lines[start - 1..end.max(start - 1)];
    let shown = b.push_each(wanted.iter().enumerate(), |(i, l)| {
        format!("{}\t{l}\n", start + i)
    });
    let content: String = wanted[..shown].iter().map(|l| format!("{l}\n")).collect();
    let last = start - 1 + shown;
    let truncated = last < end;
    let text = b.finish(&format!(
        "… cut at line {last} to fit max_tokens: read_file {rel} start_line={} for more",
        last + 1
    ));
    Ok((
        FileLines {
            file: rel,
            start_line: start,
            end_line: last,
            total_lines: total,
            content,
            truncated: truncated || end < total,
        },
        text,
    ))
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

/// The text of a symbol list within `max_tokens`; the list keeps only the
/// symbols the text shows.
fn list_text(list: &mut SymbolList, max_tokens: usize) -> String {
    let mut b = Budget::new(max_tokens);
    b.force(&format!("{} symbol(s)\n", list.total));
    let shown = b.push_each(&list.symbols, |d| {
        format!(
            "{}:{}-{} {} {}  {}\n",
            d.file,
            d.line,
            d.end_line,
            d.kind,
            d.fqcn.as_deref().unwrap_or(&d.name),
            d.signature
        )
    });
    list.symbols.truncate(shown);
    list.truncated |= b.truncated || list.total > shown;
    let total = list.total;
    b.finish(&format!(
        "… showing {shown} of {total}: narrow with path/kind/name, or raise max_tokens"
    ))
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
    /// Regex or literal search with ripgrep's engine (gitignore-aware). Matching lines with 1-based line:column; context_lines ≥ 3 counts the files as read.
    #[tool(annotations(title = "Search text", read_only_hint = true, open_world_hint = false))]
    async fn search_text(
        &self,
        Parameters(p): Parameters<SearchTextParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        // Matches with context show the code around them: those files count as read.
        let reads = if p.context_lines >= READ_CONTEXT_LINES {
            Reads::AllFiles
        } else {
            Reads::Nothing
        };
        self.shared
            .gated(session, "search_text", class, reads, params, async move {
                if !(1..=2000).contains(&p.max_results) || p.context_lines > 20 {
                    return Err(ToolError::invalid(
                        "max_results must be 1-2000 and context_lines 0-20",
                    ));
                }
                let max_tokens =
                    check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
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
                    Ok(mut r) => {
                        let mut b = Budget::new(max_tokens);
                        b.force(&format!(
                            "{} match(es) in {} file(s)\n",
                            r.total, r.files_with_matches
                        ));
                        let shown = b.push_each(&r.matches, |m| {
                            let mut item = String::new();
                            for (i, l) in m.context_before.iter().enumerate() {
                                let _ = writeln!(
                                    item,
                                    "{}-{}- {l}",
                                    m.file,
                                    m.line as usize - m.context_before.len() + i
                                );
                            }
                            let _ =
                                writeln!(item, "{}:{}:{}: {}", m.file, m.line, m.column, m.content);
                            for (i, l) in m.context_after.iter().enumerate() {
                                let _ =
                                    writeln!(item, "{}-{}- {l}", m.file, m.line as usize + 1 + i);
                            }
                            item
                        });
                        r.matches.truncate(shown);
                        r.truncated |= b.truncated || r.total > shown;
                        let s = b.finish(&format!(
                            "… showing {shown} of {}: narrow with path/glob, or raise max_tokens",
                            r.total
                        ));
                        success(&r, s)
                    }
                    Err(e) => Err(e.into()),
                }
            })
            .await
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
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "find_definitions", class, Reads::Nothing, params, async move {
        let max_tokens = check_max_tokens(p.max_tokens, 1000).map_err(ToolError::invalid)?;
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
            Ok(mut list) => {
                let text = list_text(&mut list, max_tokens);
                success(&list, text)
            }
            Err(e) => Err(e.into()),
        }
            })
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
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "find_references", class, Reads::Nothing, params, async move {
                let max_tokens = check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
                let (qualifier, name) = split_qualified(&p.symbol);
                // `Class::method` / `Class.method`: uses are resolved to the
                // class; a namespace or module qualifier (`App\Models\Order`,
                // `os.path`) does not name a class of the member.
                let class: Option<String> = qualifier
                    .as_deref()
                    .map(|q| q.rsplit(['\\', '.', ':']).next().unwrap_or(q).to_string())
                    .filter(|c| {
                        c.starts_with(|ch: char| ch.is_uppercase())
                            && !name.starts_with(|ch: char| ch.is_uppercase())
                    });
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
                        class.as_deref(),
                        &scope,
                        p.max_results,
                    )
                })
                .await?
                .map_err(ToolError::from);
                match result {
                    Ok(mut list) => {
                        let mut b = Budget::new(max_tokens);
                        b.force(&format!(
                            "{} reference(s){}\n",
                            list.total,
                            if list.unresolved > 0 {
                                format!(
                                    " resolved to the class; {} bare-name match(es) that do not resolve to it left out",
                                    list.unresolved
                                )
                            } else {
                                String::new()
                            }
                        ));
                        let shown = b.push_each(&list.references, |r| {
                            let within = r
                                .enclosing
                                .as_ref()
                                .map(|e| format!(" (in {} {})", e.kind, e.name))
                                .unwrap_or_default();
                            format!(
                                "{}:{}:{} [{}]{within}: {}\n",
                                r.file, r.line, r.column, r.kind, r.content.trim()
                            )
                        });
                        list.references.truncate(shown);
                        list.truncated |= b.truncated || list.total > shown;
                        let s = b.finish(&format!(
                            "… showing {shown} of {}: narrow with path, or raise max_tokens",
                            list.total
                        ));
                        success(&list, s)
                    }
                    Err(e) => Err(e),
                }
            })
            .await
    }

    /// Symbol table of a file, a directory or the whole repository, filterable by kind, name and language.
    #[tool(annotations(title = "List symbols", read_only_hint = true, open_world_hint = false))]
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
                Reads::Nothing,
                params,
                async move {
                    let max_tokens =
                        check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
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
                        Ok(mut list) => {
                            let text = list_text(&mut list, max_tokens);
                            success(&list, text)
                        }
                        Err(e) => Err(e.into()),
                    }
                },
            )
            .await
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
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "analyze_structure", class, Reads::Nothing, params, async move {
                let max_tokens = check_max_tokens(p.max_tokens, 1500).map_err(ToolError::invalid)?;
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
                    Ok(mut r) => {
                        let mut b = Budget::new(max_tokens);
                        let mut shown = b.push_each(&r.files, |f| {
                            let mut item = format!(
                                "{} ({}, {} lines{})\n",
                                f.file,
                                f.language,
                                f.lines,
                                if f.has_parse_errors {
                                    ", parse errors"
                                } else {
                                    ""
                                }
                            );
                            render_tree(&mut item, &f.symbols, 1);
                            item
                        });
                        if shown == 0 && !r.files.is_empty() {
                            // One file larger than the budget: its tree without members.
                            let f = &mut r.files[0];
                            for n in &mut f.symbols {
                                n.children.clear();
                            }
                            let mut item = format!("{} ({}, {} lines; members left out)\n", f.file, f.language, f.lines);
                            render_tree(&mut item, &f.symbols, 1);
                            b.force(&item);
                            shown = 1;
                        }
                        r.truncated |= shown < r.files.len() || b.truncated;
                        r.files.truncate(shown);
                        let s = b.finish("… cut to fit max_tokens: give a file or a smaller directory, or raise max_tokens");
                        success(&r, s)
                    }
                    Err(e) => Err(e.into()),
                }
            })
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
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        let class = ToolClass::Code;
        self.shared
            .gated(session, "get_function_at_line", class, Reads::TopFile, params, async move {
        let max_tokens = check_max_tokens(p.max_tokens, 2000).map_err(ToolError::invalid)?;
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
            Ok(mut f) => {
                let mut b = Budget::new(max_tokens);
                b.force(&format!(
                    "{}:{}-{} {} {}\n",
                    f.file,
                    f.line,
                    f.end_line,
                    f.kind,
                    f.fqcn.as_deref().unwrap_or(&f.name),
                ));
                let lines: Vec<&str> = f.source.lines().collect();
                let shown = b.push_each(&lines, |l| format!("{l}\n"));
                let kept: String = lines[..shown].iter().map(|l| format!("{l}\n")).collect();
                let last = f.line + shown.saturating_sub(1);
                let cut = b.truncated;
                let text = b.finish(&format!(
                    "… cut at line {last}: read_file {} start_line={} for the rest",
                    f.file,
                    last + 1
                ));
                if cut {
                    f.source = kept;
                }
                success(&f, text)
            }
            Err(e) => Err(e),
        }
            })
            .await
    }

    /// Lines of a file with 1-based numbers. With session_id the file counts as read (writable in READY).
    #[tool(annotations(title = "Read file", read_only_hint = true, open_world_hint = false))]
    async fn read_file(
        &self,
        Parameters(p): Parameters<ReadFileParams>,
    ) -> Result<CallToolResult, ToolError> {
        let session = p.gate.session_id.clone();
        let params = serde_json::to_value(&p).unwrap_or_default();
        self.shared
            .gated(
                session,
                "read_file",
                ToolClass::Code,
                Reads::TopFile,
                params,
                async move {
                    let max_tokens =
                        check_max_tokens(p.max_tokens, 2000).map_err(ToolError::invalid)?;
                    if let (Some(a), Some(b)) = (p.start_line, p.end_line)
                        && b < a
                    {
                        return Err(ToolError::invalid(format!(
                            "end_line {b} is before start_line {a}"
                        )));
                    }
                    let shared = Arc::clone(&self.shared);
                    let (lines, text) = blocking(move || {
                        read_lines(&shared, &p.file, p.start_line, p.end_line, max_tokens)
                    })
                    .await??;
                    success(&lines, text)
                },
            )
            .await
    }
}
