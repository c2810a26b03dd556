//! Symbols from tree-sitter tags queries: definitions with scope, signature,
//! docblock and FQCN; references; the enclosing definition of a line; and a
//! per-file cache keyed by size and mtime.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use serde::Serialize;
use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator};

use crate::config::Config;
use crate::lang::Lang;
use crate::repo::{self, PathError, Repo};

/// Longest signature kept, in chars.
const MAX_SIGNATURE_CHARS: usize = 240;
/// Longest docblock kept, in chars.
const MAX_DOC_CHARS: usize = 600;

/// One symbol definition. Lines are 1-based and inclusive; bytes are 0-based
/// offsets into the file's UTF-8 text (invalid UTF-8 replaced by U+FFFD).
#[derive(Debug, Clone, Serialize)]
pub struct Definition {
    pub name: String,
    /// function, method, class, interface, trait, enum, type, module,
    /// constant, field, rule, media, keyframes, element, section.
    pub kind: String,
    pub line: usize,
    pub end_line: usize,
    #[serde(skip)]
    pub start_byte: usize,
    #[serde(skip)]
    pub end_byte: usize,
    /// Line of the name itself (1-based); differs from `line` when a
    /// decorator or attribute precedes it.
    #[serde(skip)]
    pub name_line: usize,
    /// Enclosing definitions, outermost first, joined with `.`.
    pub scope: Option<String>,
    pub signature: String,
    pub doc: Option<String>,
    /// Fully qualified name: PHP `Ns\Class::method`, Python
    /// `pkg.module.Class.method`; absent for other languages.
    pub fqcn: Option<String>,
    /// Index of the enclosing definition in [`FileSymbols::definitions`].
    #[serde(skip)]
    pub parent: Option<usize>,
}

impl Definition {
    /// True for kinds whose members are chunked and listed separately.
    pub fn is_container(&self) -> bool {
        matches!(
            self.kind.as_str(),
            "class"
                | "interface"
                | "trait"
                | "enum"
                | "impl"
                | "module"
                | "media"
                | "element"
                | "section"
        )
    }

    /// True for functions and methods.
    pub fn is_callable(&self) -> bool {
        matches!(self.kind.as_str(), "function" | "method")
    }
}

/// One reference from the tags query (`@reference.*`).
#[derive(Debug, Clone, Serialize)]
pub struct TagReference {
    pub name: String,
    /// call, class, type or implementation.
    pub kind: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column in chars.
    pub column: usize,
}

/// Everything the tags query found in one file.
#[derive(Debug, Clone)]
pub struct FileSymbols {
    pub lang: Lang,
    /// Ordered by start byte, outer before inner.
    pub definitions: Vec<Definition>,
    pub references: Vec<TagReference>,
    /// The parse tree has ERROR or MISSING nodes; results are best effort.
    pub has_errors: bool,
    /// Number of lines in the file.
    pub line_count: usize,
}

impl FileSymbols {
    /// The innermost definition whose lines contain `line` (1-based),
    /// preferring functions and methods over containers.
    pub fn enclosing(&self, line: usize) -> Option<&Definition> {
        let containing = || {
            self.definitions
                .iter()
                .filter(move |d| d.line <= line && line <= d.end_line)
        };
        containing()
            .filter(|d| d.is_callable())
            .min_by_key(|d| d.end_line - d.line)
            .or_else(|| {
                containing()
                    .filter(|d| d.kind != "module" || d.end_line > d.line)
                    .min_by_key(|d| d.end_line - d.line)
            })
    }
}

/// Parses `source` and runs the tags query. Never fails: a broken file
/// yields what the error-tolerant parser recovered, with `has_errors` set.
pub fn extract(lang: Lang, source: &str, rel_path: &str) -> FileSymbols {
    let mut parser = Parser::new();
    let line_count = source.lines().count();
    if parser.set_language(&lang.grammar()).is_err() {
        return empty(lang, line_count);
    }
    let Some(tree) = parser.parse(source, None) else {
        return empty(lang, line_count);
    };
    let query = lang.tags_query();
    let names = query.capture_names();
    let bytes = source.as_bytes();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), bytes);

    // (start, end) -> (pattern index, definition) keeps one definition per node.
    let mut by_node: HashMap<(usize, usize), (usize, Definition)> = HashMap::new();
    let mut references = Vec::new();
    while let Some(m) = matches.next() {
        let mut name_node = None;
        let mut tag: Option<(&str, Node)> = None;
        for c in m.captures() {
            let cname = names[c.index as usize];
            if cname == "name" {
                name_node = Some(c.node);
            } else if cname.starts_with("definition.") || cname.starts_with("reference.") {
                tag = Some((cname, c.node));
            }
        }
        let Some((cname, node)) = tag else { continue };
        if let Some(kind) = cname.strip_prefix("reference.") {
            let Some(n) = name_node else { continue };
            let line = n.start_position().row + 1;
            references.push(TagReference {
                name: text(n, source).to_string(),
                kind: kind.to_string(),
                line,
                column: char_column(source, n.start_byte()),
            });
            continue;
        }
        let kind = cname.trim_start_matches("definition.");
        let name = match name_node {
            Some(n) => text(n, source).trim().to_string(),
            None => header(node, source),
        };
        if name.is_empty() {
            continue;
        }
        let def = Definition {
            name: collapse_ws(&name, MAX_SIGNATURE_CHARS),
            kind: kind.to_string(),
            line: node.start_position().row + 1,
            end_line: end_line(node),
            start_byte: node.start_byte(),
            end_byte: node.end_byte(),
            name_line: name_node.map_or(node.start_position().row, |n| n.start_position().row) + 1,
            scope: None,
            signature: signature(node, source),
            doc: doc_of(node, source, lang),
            fqcn: None,
            parent: None,
        };
        let key = (def.start_byte, def.end_byte);
        match by_node.get(&key) {
            Some((p, _)) if *p <= m.pattern_index => {}
            _ => {
                by_node.insert(key, (m.pattern_index, def));
            }
        }
    }
    let mut definitions: Vec<Definition> = by_node.into_values().map(|(_, d)| d).collect();
    match lang {
        Lang::Vue => vue_scripts(
            tree.root_node(),
            source,
            rel_path,
            &mut definitions,
            &mut references,
        ),
        Lang::Blade => blade_directives(source, &mut definitions, &mut references),
        _ => {}
    }
    definitions.sort_by(|a, b| {
        a.start_byte
            .cmp(&b.start_byte)
            .then(b.end_byte.cmp(&a.end_byte))
    });
    link_scopes(&mut definitions, lang, rel_path);
    references.sort_by_key(|r| (r.line, r.column));
    FileSymbols {
        lang,
        definitions,
        references,
        has_errors: tree.root_node().has_error(),
        line_count,
    }
}

/// Adds the definitions and references of a Vue component's `<script>`
/// blocks, parsed as TypeScript (`lang="ts"` / `"tsx"`) or JavaScript, with
/// lines and bytes shifted to the component file.
fn vue_scripts(
    root: Node,
    source: &str,
    rel_path: &str,
    defs: &mut Vec<Definition>,
    refs: &mut Vec<TagReference>,
) {
    let mut cursor = root.walk();
    for block in root.named_children(&mut cursor) {
        if block.kind() != "script_element" {
            continue;
        }
        let start_tag = text(block, source).split('>').next().unwrap_or("");
        let sub_lang = if start_tag.contains("lang=\"tsx\"") {
            Lang::Tsx
        } else if start_tag.contains("lang=\"ts\"") {
            Lang::TypeScript
        } else {
            Lang::JavaScript
        };
        let mut inner = block.walk();
        let Some(raw) = block
            .named_children(&mut inner)
            .find(|c| c.kind() == "raw_text")
        else {
            continue;
        };
        let (row, byte) = (raw.start_position().row, raw.start_byte());
        let sub = extract(sub_lang, text(raw, source), rel_path);
        defs.extend(sub.definitions.into_iter().map(|mut d| {
            d.line += row;
            d.end_line += row;
            d.name_line += row;
            d.start_byte += byte;
            d.end_byte += byte;
            d.fqcn = None;
            d
        }));
        refs.extend(sub.references.into_iter().map(|mut r| {
            r.line += row;
            r
        }));
    }
}

/// Blade directives the HTML grammar sees as text: `@section('x')` …
/// `@endsection` / `@show` / `@stop`, `@push`, `@slot`, `@component` blocks
/// (kind `section`, named by their first argument) and references to
/// Livewire components (`@livewire('x')`, kind `livewire`), views
/// (`@include`, `@extends`, `@each`, kind `view`), named routes
/// (`route('x')`, kind `route`) and components (`<x-forms.input>`,
/// `<livewire:counter>`, kind `component`, named by the tag). One-line `@section('title', 'Text')` has
/// no block.
fn blade_directives(source: &str, defs: &mut Vec<Definition>, refs: &mut Vec<TagReference>) {
    static DIRECTIVE: OnceLock<regex::Regex> = OnceLock::new();
    let re = DIRECTIVE.get_or_init(|| {
        regex::Regex::new(
            r#"@(section|push|slot|component|livewire|include|includeIf|includeWhen|extends|each|endsection|show|stop|endpush|endslot|endcomponent)\b(?:\(\s*['"]([^'"]+)['"]\s*(,)?)?|\broute\(\s*['"]([^'"]+)['"]|<(x-[\w.:-]+|livewire:[\w.-]+)"#,
        )
        .expect("static regex")
    });
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(source.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let line_of = |byte: usize| line_starts.partition_point(|&s| s <= byte);
    // Open blocks: (directive, name, start byte).
    let mut open: Vec<(String, String, usize)> = Vec::new();
    for m in re.captures_iter(source) {
        let whole = m.get(0).expect("match");
        let line = line_of(whole.start());
        let column = char_column(source, whole.start());
        if let Some(route) = m.get(4) {
            refs.push(TagReference {
                name: route.as_str().to_string(),
                kind: "route".into(),
                line,
                column,
            });
            continue;
        }
        if let Some(tag) = m.get(5) {
            refs.push(TagReference {
                name: tag.as_str().to_string(),
                kind: "component".into(),
                line,
                column,
            });
            continue;
        }
        let directive = &m[1];
        let arg = m.get(2).map(|a| a.as_str().to_string());
        match (directive, arg) {
            ("section" | "push" | "slot" | "component", Some(name)) if m.get(3).is_none() => {
                open.push((directive.to_string(), name, whole.start()));
            }
            ("livewire", Some(name)) => refs.push(TagReference {
                name,
                kind: "livewire".into(),
                line,
                column,
            }),
            ("include" | "includeIf" | "includeWhen" | "extends" | "each", Some(name)) => {
                refs.push(TagReference {
                    name,
                    kind: "view".into(),
                    line,
                    column,
                });
            }
            ("endsection" | "show" | "stop" | "endpush" | "endslot" | "endcomponent", _) => {
                let wanted = match directive {
                    "endpush" => "push",
                    "endslot" => "slot",
                    "endcomponent" => "component",
                    _ => "section",
                };
                if let Some(pos) = open.iter().rposition(|(d, _, _)| d == wanted) {
                    let (d, name, start) = open.remove(pos);
                    let end = whole.end();
                    let first_line = source[start..].lines().next().unwrap_or("");
                    defs.push(Definition {
                        name,
                        kind: "section".into(),
                        line: line_of(start),
                        end_line: line_of(end.saturating_sub(1)),
                        start_byte: start,
                        end_byte: end,
                        name_line: line_of(start),
                        scope: None,
                        signature: collapse_ws(first_line, MAX_SIGNATURE_CHARS),
                        doc: Some(format!("Blade @{d} block")),
                        fqcn: None,
                        parent: None,
                    });
                }
            }
            _ => {}
        }
    }
}

fn empty(lang: Lang, line_count: usize) -> FileSymbols {
    FileSymbols {
        lang,
        definitions: Vec::new(),
        references: Vec::new(),
        has_errors: true,
        line_count,
    }
}

/// Sets `parent`, `scope`, method kinds and `fqcn` from byte nesting.
fn link_scopes(defs: &mut [Definition], lang: Lang, rel_path: &str) {
    let mut stack: Vec<usize> = Vec::new();
    let mut namespace: Option<String> = None;
    for i in 0..defs.len() {
        while let Some(&top) = stack.last() {
            if defs[top].end_byte >= defs[i].end_byte && defs[top].start_byte <= defs[i].start_byte
            {
                break;
            }
            stack.pop();
        }
        // A PHP `namespace X;` statement does not enclose what follows it,
        // but it names it.
        if lang == Lang::Php && defs[i].kind == "module" {
            namespace = Some(defs[i].name.clone());
        }
        let parent = stack.last().copied();
        defs[i].parent = parent;
        if let Some(p) = parent {
            let scope = match &defs[p].scope {
                Some(s) => format!("{s}.{}", defs[p].name),
                None => defs[p].name.clone(),
            };
            defs[i].scope = Some(scope);
            if defs[i].kind == "function"
                && matches!(
                    defs[p].kind.as_str(),
                    "class" | "interface" | "trait" | "enum" | "impl"
                )
            {
                defs[i].kind = "method".into();
            }
        }
        defs[i].fqcn = fqcn(lang, rel_path, namespace.as_deref(), &defs[i]);
        stack.push(i);
    }
}

fn fqcn(lang: Lang, rel_path: &str, namespace: Option<&str>, def: &Definition) -> Option<String> {
    match lang {
        Lang::Php => {
            if def.kind == "module" {
                return Some(def.name.clone());
            }
            let mut parts: Vec<&str> = def
                .scope
                .as_deref()
                .map(|s| s.split('.').collect())
                .unwrap_or_default();
            // A braced namespace encloses its classes: drop it from the scope.
            if namespace.is_some() && parts.first().copied() == namespace {
                parts.remove(0);
            }
            let class_path = parts.join("\\");
            let prefix = namespace.map(|n| format!("{n}\\")).unwrap_or_default();
            Some(match (class_path.is_empty(), def.kind.as_str()) {
                (true, _) => format!("{prefix}{}", def.name),
                (false, "method" | "constant" | "field") => {
                    format!("{prefix}{class_path}::{}", def.name)
                }
                (false, _) => format!("{prefix}{class_path}\\{}", def.name),
            })
        }
        Lang::Python => {
            let module = rel_path
                .trim_end_matches(".pyi")
                .trim_end_matches(".py")
                .trim_end_matches("/__init__")
                .replace('/', ".");
            Some(match &def.scope {
                Some(s) => format!("{module}.{s}.{}", def.name),
                None => format!("{module}.{}", def.name),
            })
        }
        _ => None,
    }
}

/// The source text of a node ("" if its range is not on char boundaries).
pub(crate) fn text<'a>(node: Node, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or("")
}

fn end_line(node: Node) -> usize {
    let end = node.end_position();
    // A node ending at column 0 ends on the previous line (trailing newline).
    if end.column == 0 && end.row > node.start_position().row {
        end.row
    } else {
        end.row + 1
    }
}

/// 1-based column, in chars, of a byte offset.
pub fn char_column(source: &str, byte: usize) -> usize {
    let line_start = source[..byte].rfind('\n').map_or(0, |i| i + 1);
    source[line_start..byte].chars().count() + 1
}

fn collapse_ws(s: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max_chars * 4));
    for (i, word) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.chars().count() > max_chars {
        out = out.chars().take(max_chars).collect::<String>() + "…";
    }
    out
}

/// Header of a node without a name capture (CSS `@media …`): its text up to
/// the first `{`.
fn header(node: Node, source: &str) -> String {
    let t = text(node, source);
    collapse_ws(t.split('{').next().unwrap_or(t), MAX_SIGNATURE_CHARS)
}

/// The declaration without its body: text up to the `body` field (or the
/// first `{` / block child), whitespace collapsed.
fn signature(node: Node, source: &str) -> String {
    let body_start = node
        .child_by_field_name("body")
        .or_else(|| {
            let mut cursor = node.walk();
            node.named_children(&mut cursor).find(|c| {
                matches!(
                    c.kind(),
                    "block" | "declaration_list" | "statement_block" | "class_body"
                )
            })
        })
        .map(|b| b.start_byte());
    let t = match body_start {
        Some(b) if b > node.start_byte() => &source[node.start_byte()..b],
        _ => text(node, source).lines().next().unwrap_or(""),
    };
    let t = t.trim_end().trim_end_matches(['{', ':']).trim_end();
    collapse_ws(t, MAX_SIGNATURE_CHARS)
}

/// Comments directly above the definition (or above its decorator /
/// export wrapper), or a Python docstring.
fn doc_of(node: Node, source: &str, lang: Lang) -> Option<String> {
    if lang == Lang::Python
        && let Some(body) = node.child_by_field_name("body")
        && let Some(first) = body.named_child(0)
        && first.kind() == "expression_statement"
        && let Some(s) = first.named_child(0)
        && s.kind() == "string"
    {
        return Some(clean_doc(text(s, source)));
    }
    let mut anchor = node;
    while let Some(p) = anchor.parent() {
        if matches!(
            p.kind(),
            "decorated_definition"
                | "type_declaration"
                | "export_statement"
                | "lexical_declaration"
                | "variable_declaration"
        ) && p.start_byte() <= anchor.start_byte()
        {
            anchor = p;
        } else {
            break;
        }
    }
    let mut parts = Vec::new();
    let mut next_row = anchor.start_position().row;
    let mut sib = anchor.prev_sibling();
    while let Some(s) = sib {
        if s.kind() == "attribute_item" {
            // Rust `#[derive(…)]` between the doc comment and the item.
            next_row = s.start_position().row;
            sib = s.prev_sibling();
            continue;
        }
        if !s.kind().contains("comment") || s.end_position().row + 1 < next_row {
            break;
        }
        parts.push(text(s, source));
        next_row = s.start_position().row;
        sib = s.prev_sibling();
    }
    if parts.is_empty() {
        return None;
    }
    parts.reverse();
    Some(clean_doc(&parts.join("\n")))
}

fn clean_doc(raw: &str) -> String {
    let cleaned: Vec<&str> = raw
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches("/**")
                .trim_start_matches("/*")
                .trim_end_matches("*/")
                .trim_start_matches('/')
                .trim_start_matches('#')
                .trim_start_matches('*')
                .trim_matches('"')
                .trim_matches('\'')
                .trim()
        })
        .filter(|l| !l.is_empty())
        .collect();
    collapse_ws(&cleaned.join(" "), MAX_DOC_CHARS)
}

/// Errors of symbol look-ups.
#[derive(Debug, thiserror::Error)]
pub enum SymbolError {
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

#[derive(Clone)]
struct Cached {
    size: u64,
    mtime: Option<SystemTime>,
    symbols: Option<Arc<FileSymbols>>,
}

/// Parsed symbols per file, reused while a file's size and mtime are
/// unchanged. Shared by every tool call of a server.
#[derive(Default)]
pub struct SymbolCache {
    files: Mutex<HashMap<PathBuf, Cached>>,
}

impl SymbolCache {
    /// Symbols of one file; `None` for files without a supported language,
    /// binary files and files over `max_file_size` bytes.
    ///
    /// # Errors
    /// The file cannot be read.
    pub fn get(
        &self,
        repo: &Repo,
        abs: &Path,
        max_file_size: u64,
    ) -> Result<Option<Arc<FileSymbols>>, SymbolError> {
        let read_err = |source| SymbolError::Read {
            path: repo.rel(abs),
            source,
        };
        let meta = std::fs::metadata(abs).map_err(read_err)?;
        let mtime = meta.modified().ok();
        if let Some(c) = self.lock().get(abs)
            && c.size == meta.len()
            && c.mtime == mtime
        {
            return Ok(c.symbols.clone());
        }
        let symbols = match Lang::from_path(abs) {
            Some(lang) if meta.len() <= max_file_size => {
                let bytes = repo::read_regular(abs).map_err(read_err)?;
                if repo::bytes_look_binary(&bytes) {
                    None
                } else {
                    let source = String::from_utf8_lossy(&bytes);
                    Some(Arc::new(extract(lang, &source, &repo.rel(abs))))
                }
            }
            _ => None,
        };
        self.lock().insert(
            abs.to_path_buf(),
            Cached {
                size: meta.len(),
                mtime,
                symbols: symbols.clone(),
            },
        );
        Ok(symbols)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Cached>> {
        // A panic while holding the lock leaves a usable map: recover it.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Symbols of every supported file under `start` (a file or directory),
    /// parsed on all cores, ordered by repo-relative path.
    ///
    /// # Errors
    /// An invalid exclude pattern.
    pub fn scan(
        &self,
        repo: &Repo,
        config: &Config,
        start: &Path,
        lang_filter: Option<&str>,
    ) -> Result<Vec<(String, Arc<FileSymbols>)>, SymbolError> {
        let files = source_files(repo, config, start, lang_filter)?;
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let per = files.len().div_ceil(threads).max(1);
        // Parsing is CPU-bound: scoped threads, one slice of files each.
        let mut out: Vec<(String, Arc<FileSymbols>)> = std::thread::scope(|s| {
            let handles: Vec<_> = files
                .chunks(per)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .filter_map(|p| {
                                // Unreadable files (deleted mid-scan) are skipped.
                                let syms = self.get(repo, p, config.max_file_size).ok()??;
                                Some((repo.rel(p), syms))
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

/// Files under `start` with a supported language (and matching
/// `lang_filter`), walked with the repo's ignore rules.
///
/// # Errors
/// An invalid exclude pattern.
pub fn source_files(
    repo: &Repo,
    config: &Config,
    start: &Path,
    lang_filter: Option<&str>,
) -> Result<Vec<PathBuf>, SymbolError> {
    let mut files = Vec::new();
    for entry in repo.walker(start, config)?.build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(lang) = Lang::from_path(entry.path()) else {
            continue;
        };
        if lang_filter.is_some_and(|f| !lang.matches_filter(f)) {
            continue;
        }
        files.push(entry.into_path());
    }
    Ok(files)
}

/// Splits `A.b`, `A::b`, `Ns\A` into (qualifier, name).
pub fn split_qualified(symbol: &str) -> (Option<String>, String) {
    let s = symbol.trim();
    let idx = [
        s.rfind("::").map(|i| (i, 2)),
        s.rfind('.').map(|i| (i, 1)),
        s.rfind('\\').map(|i| (i, 1)),
    ]
    .into_iter()
    .flatten()
    .max_by_key(|(i, _)| *i);
    match idx {
        Some((i, w)) if i > 0 && i + w < s.len() => {
            (Some(s[..i].to_string()), s[i + w..].to_string())
        }
        _ => (None, s.trim_start_matches('\\').to_string()),
    }
}

pub fn qualifier_matches(q: &str, d: &Definition) -> bool {
    let q_norm = q.replace("::", ".").replace('\\', ".");
    let scope = d.scope.as_deref().unwrap_or("");
    let fq = d
        .fqcn
        .as_deref()
        .unwrap_or("")
        .replace("::", ".")
        .replace('\\', ".");
    scope == q_norm || scope.ends_with(&format!(".{q_norm}")) || fq.contains(&format!("{q_norm}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(
        lang: Lang,
        path: &str,
        src: &str,
        expected: &[(&str, &str, usize, usize, Option<&str>)],
    ) {
        let syms = extract(lang, src, path);
        let got: Vec<(&str, &str, usize, usize, Option<&str>)> = syms
            .definitions
            .iter()
            .map(|d| {
                (
                    d.name.as_str(),
                    d.kind.as_str(),
                    d.line,
                    d.end_line,
                    d.fqcn.as_deref(),
                )
            })
            .collect();
        assert_eq!(got, expected, "{path}");
    }

    #[test]
    fn python_methods_scope_doc_fqcn() {
        let src = "class AuthService:\n    def authenticate(self, user, password):\n        \"\"\"Check a login.\"\"\"\n        return user\n\ndef helper():\n    pass\n";
        check(
            Lang::Python,
            "app/auth.py",
            src,
            &[
                ("AuthService", "class", 1, 4, Some("app.auth.AuthService")),
                (
                    "authenticate",
                    "method",
                    2,
                    4,
                    Some("app.auth.AuthService.authenticate"),
                ),
                ("helper", "function", 6, 7, Some("app.auth.helper")),
            ],
        );
        let syms = extract(Lang::Python, src, "app/auth.py");
        assert_eq!(syms.definitions[1].doc.as_deref(), Some("Check a login."));
        assert_eq!(
            syms.definitions[1].signature,
            "def authenticate(self, user, password)"
        );
        assert_eq!(syms.definitions[1].scope.as_deref(), Some("AuthService"));
        assert_eq!(
            syms.enclosing(3).map(|d| d.name.as_str()),
            Some("authenticate")
        );
    }

    #[test]
    fn php_namespace_fqcn() {
        let src = "<?php\nnamespace App\\Http;\n\n/** Handles login. */\nclass LoginController\n{\n    public function store($request)\n    {\n        return redirect('/');\n    }\n}\n";
        check(
            Lang::Php,
            "app/Http/LoginController.php",
            src,
            &[
                ("App\\Http", "module", 2, 2, Some("App\\Http")),
                (
                    "LoginController",
                    "class",
                    5,
                    11,
                    Some("App\\Http\\LoginController"),
                ),
                (
                    "store",
                    "method",
                    7,
                    10,
                    Some("App\\Http\\LoginController::store"),
                ),
            ],
        );
        let syms = extract(Lang::Php, src, "x.php");
        assert_eq!(syms.definitions[1].doc.as_deref(), Some("Handles login."));
        assert!(
            syms.references
                .iter()
                .any(|r| r.name == "redirect" && r.line == 9)
        );
    }

    #[test]
    fn css_and_html() {
        check(
            Lang::Css,
            "a.css",
            ".btn { color: red; }\n@media (max-width: 600px) {\n  .btn { color: blue; }\n}\n",
            &[
                (".btn", "rule", 1, 1, None),
                ("@media (max-width: 600px)", "media", 2, 4, None),
                (".btn", "rule", 3, 3, None),
            ],
        );
        check(
            Lang::Html,
            "a.html",
            "<main>\n<form id=\"login\">\n</form>\n</main>\n",
            &[
                ("main", "section", 1, 4, None),
                ("login", "element", 2, 3, None),
            ],
        );
    }

    #[test]
    fn broken_source_yields_partial_symbols() {
        let syms = extract(
            Lang::Python,
            "def ok():\n    pass\n\ndef broken(:\n",
            "b.py",
        );
        assert!(syms.has_errors);
        assert!(syms.definitions.iter().any(|d| d.name == "ok"));
    }

    /// One fixture per added language (tests/fixtures/languages): the
    /// definitions (name, kind, lines), a doc comment, and the references
    /// the language's query or directive reader adds.
    #[test]
    fn added_languages_fixtures() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/languages");
        let run = |file: &str| {
            let src = std::fs::read_to_string(dir.join(file)).expect("fixture");
            let lang = Lang::from_path(Path::new(file)).expect("language");
            extract(lang, &src, file)
        };
        let names = |s: &FileSymbols| -> Vec<(String, String, usize, usize)> {
            s.definitions
                .iter()
                .map(|d| (d.name.clone(), d.kind.clone(), d.line, d.end_line))
                .collect()
        };
        let own = |v: &[(&str, &str, usize, usize)]| -> Vec<(String, String, usize, usize)> {
            v.iter()
                .map(|(a, b, c, d)| (a.to_string(), b.to_string(), *c, *d))
                .collect()
        };

        let vue = run("OrderList.vue");
        assert_eq!(vue.lang, Lang::Vue);
        let got = names(&vue);
        for want in own(&[
            ("template", "section", 1, 6),
            ("script", "section", 8, 19),
            ("cancelOrder", "function", 16, 18),
            ("style", "section", 21, 25),
        ]) {
            assert!(got.contains(&want), "vue: {want:?} not in {got:?}");
        }
        let cancel = vue
            .definitions
            .iter()
            .find(|d| d.name == "cancelOrder")
            .unwrap();
        assert_eq!(cancel.scope.as_deref(), Some("script"));
        assert_eq!(
            cancel.doc.as_deref(),
            Some("Cancels an order after the user confirmed it.")
        );

        let blade = run("orders.blade.php");
        assert_eq!(
            names(&blade),
            own(&[
                ("content", "section", 5, 13),
                ("scripts", "section", 15, 17)
            ])
        );
        let refs: Vec<(String, String)> = blade
            .references
            .iter()
            .map(|r| (r.kind.clone(), r.name.clone()))
            .collect();
        for want in [
            ("view", "layouts.app"),
            ("component", "x-order-table"),
            ("component", "x-forms.search-input"),
            ("livewire", "order-filter"),
            ("route", "orders.create"),
            ("view", "orders.partials.summary"),
        ] {
            assert!(
                refs.contains(&(want.0.to_string(), want.1.to_string())),
                "blade: {want:?} not in {refs:?}"
            );
        }

        let scss = run("theme.scss");
        let got = names(&scss);
        assert!(
            got.iter()
                .any(|d| d.1 == "mixin" && d.0.starts_with("@mixin button-variant")),
            "{got:?}"
        );
        assert!(
            got.contains(&("&:hover".into(), "rule".into(), 11, 13)),
            "{got:?}"
        );
        assert!(got.iter().any(|d| d.1 == "media"), "{got:?}");

        let go = run("server.go");
        assert_eq!(
            names(&go),
            own(&[
                ("Store", "interface", 6, 8),
                ("Order", "class", 11, 14),
                ("Handler", "class", 17, 19),
                ("ServeHTTP", "method", 22, 26),
                ("NewHandler", "function", 29, 31),
            ])
        );
        assert_eq!(
            go.definitions[0].doc.as_deref(),
            Some("Store persists orders.")
        );
        assert!(
            go.references
                .iter()
                .any(|r| r.name == "Save" && r.kind == "call")
        );

        let java = run("OrderService.java");
        assert_eq!(
            names(&java),
            own(&[
                ("OrderService", "class", 6, 19),
                ("repository", "field", 7, 7),
                ("OrderService", "method", 9, 11),
                ("cancel", "method", 14, 16),
                ("Status", "enum", 18, 18),
            ])
        );
        assert_eq!(
            java.definitions[3].doc.as_deref(),
            Some("Cancels the order with the given id.")
        );

        let rust = run("orders.rs");
        assert_eq!(
            names(&rust),
            own(&[
                ("Order", "class", 5, 8),
                ("Store", "trait", 11, 13),
                ("save", "method", 12, 12),
                ("MemoryStore", "class", 15, 17),
                ("MemoryStore", "impl", 19, 24),
                ("save", "method", 21, 23),
                ("total", "function", 26, 28),
            ])
        );
        assert_eq!(
            rust.definitions[0].doc.as_deref(),
            Some("One customer order.")
        );
        assert_eq!(rust.definitions[5].scope.as_deref(), Some("MemoryStore"));
    }
}
