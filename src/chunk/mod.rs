//! AST chunking: one chunk per function, method and class-like definition
//! (members elided from their container), CSS rule sets / @media /
//! @keyframes, HTML sectioning elements and elements with an id, one module
//! summary per file for what no definition covers, and 50-line windows for
//! files without a grammar (or in `lightweight_mode`).

pub mod facts;

use crate::util::split_identifier;
use serde::Serialize;

pub use facts::Facts;

use crate::search::symbols::{Definition, FileSymbols};

/// Lines per fallback window for files without a grammar.
pub const WINDOW_LINES: usize = 50;

/// One unit of the `forest` index. Lines are 1-based, inclusive.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Chunk {
    /// Repo-relative path with `/`.
    pub file: String,
    /// Language name, or `text` for files without a grammar.
    pub language: String,
    /// Definition kind (`function`, `method`, `class`, `rule`, …), `module`
    /// for a file's top-level code, `window` for line windows.
    pub kind: String,
    /// Symbol name (for `module` and `window`: the file name).
    pub name: String,
    pub scope: Option<String>,
    pub fqcn: Option<String>,
    pub signature: String,
    pub doc: Option<String>,
    pub start_line: usize,
    pub end_line: usize,
    /// The source lines of the chunk; a container's members are reduced to
    /// their first line followed by ` …`.
    pub content: String,
    /// Framework facts (empty when none) — see `crate::framework`.
    pub meta: Facts,
    /// Symbols this chunk points at: PHP FQCNs (injected dependencies,
    /// related models, Blade components), `table:<name>`, `route:<name>`,
    /// `view:<name>`.
    pub related: Vec<String>,
}

impl Chunk {
    /// The passage text that is embedded: a header with the language, kind
    /// and symbol name with its scope (`ProductForm.configure`), split into
    /// words (camelCase / snake_case), the docblock, a line of framework facts (`fields: name, stock; model:
    /// Product`, at most 400 chars), then the content; the E5 `passage: `
    /// prefix is added by the embedder. The path is left out of definition chunks so that moving or
    /// renaming a file reuses their vectors; module and window chunks are
    /// named by their file name, which is all that identifies them.
    pub fn embedding_text(&self) -> String {
        let name = match &self.scope {
            Some(scope) if self.kind != "module" && self.kind != "window" => {
                format!("{scope}.{}", self.name)
            }
            _ => self.name.clone(),
        };
        let mut s = format!("{} {} {name}", self.language, self.kind);
        let words = split_identifier(&name);
        if !words.is_empty() && words != name {
            s.push_str(&format!(" ({words})"));
        }
        s.push('\n');
        if let Some(doc) = &self.doc {
            s.push_str(doc);
            s.push('\n');
        }
        let facts = self.meta.summary(META_SUMMARY_CHARS);
        if !facts.is_empty() {
            s.push_str(&facts);
            s.push('\n');
        }
        s.push_str(&self.content);
        s
    }

    /// SHA-256 (hex) of [`Chunk::embedding_text`]: equal hashes share one
    /// embedding, so an unchanged chunk is never embedded twice.
    pub fn content_hash(&self) -> String {
        crate::util::sha256_hex(self.embedding_text().as_bytes())
    }
}

/// Version of the chunking rules: a sync after it changes reads every
/// file again (vectors are reused by content hash). 2: minified lines
/// ([`crate::classify::MINIFIED_LINE_BYTES`]) are left out of chunks. 3:
/// a migration's foreign keys say what deleting the referenced row does
/// (`ForeignKey::on_delete`).
pub const CHUNKING_VERSION: u32 = 3;

/// Longest facts line in chars, in the embedded text and in `query`'s
/// keyword matching alike.
pub const META_SUMMARY_CHARS: usize = 400;

/// Chunks one file. `symbols` is `None` for files without a grammar.
/// `max_chars` bounds the content of one chunk; longer definitions are split
/// at line boundaries into parts that each keep the signature in their
/// header. Never fails.
pub fn chunk_file(
    file: &str,
    source: &str,
    symbols: Option<&FileSymbols>,
    max_chars: usize,
    lightweight: bool,
) -> Vec<Chunk> {
    let lines: Vec<&str> = source.lines().collect();
    let language = symbols.map_or("text", |s| s.lang.name()).to_string();
    let file_name = file.rsplit('/').next().unwrap_or(file).to_string();
    let symbols = symbols.filter(|_| !lightweight);
    let Some(symbols) = symbols else {
        return windows(file, &language, &file_name, &lines, max_chars);
    };
    let defs = &symbols.definitions;
    let worthy = chunk_worthy(defs);
    let mut out = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        if !worthy[i] {
            continue;
        }
        let children: Vec<&Definition> = defs
            .iter()
            .enumerate()
            .filter(|(j, c)| worthy[*j] && c.parent == Some(i) && c.line > d.line)
            .map(|(_, c)| c)
            .collect();
        let content = elide(&lines, d.line, d.end_line, &children);
        let base = Chunk {
            file: file.to_string(),
            language: language.clone(),
            kind: d.kind.clone(),
            name: d.name.clone(),
            scope: d.scope.clone(),
            fqcn: d.fqcn.clone(),
            signature: d.signature.clone(),
            doc: d.doc.clone(),
            start_line: d.line,
            end_line: d.end_line,
            content: String::new(),
            meta: Facts::default(),
            related: Vec::new(),
        };
        out.extend(split(base, content, max_chars));
    }
    // Module summary: top-level lines no chunk covers, with each top-level
    // definition reduced to its first line.
    let top: Vec<&Definition> = defs
        .iter()
        .enumerate()
        .filter(|(i, d)| worthy[*i] && d.parent.is_none_or(|p| !worthy[p]))
        .map(|(_, d)| d)
        .collect();
    let module = elide(&lines, 1, lines.len(), &top);
    let meaningful = module
        .iter()
        .filter(|(_, l)| {
            let t = l.trim();
            t.len() > 3 && t != "<?php" && !is_elided(t)
        })
        .count();
    if meaningful > 0 {
        let first = module
            .iter()
            .find(|(_, l)| !l.trim().is_empty())
            .map_or(1, |(n, _)| *n);
        let last = module
            .iter()
            .rev()
            .find(|(_, l)| !l.trim().is_empty())
            .map_or(1, |(n, _)| *n);
        let trimmed: Vec<(usize, String)> = module
            .into_iter()
            .filter(|(n, _)| *n >= first && *n <= last)
            .collect();
        let base = Chunk {
            file: file.to_string(),
            language,
            kind: "module".into(),
            name: file_name,
            scope: None,
            fqcn: None,
            signature: file.to_string(),
            doc: None,
            start_line: first,
            end_line: last,
            content: String::new(),
            meta: Facts::default(),
            related: Vec::new(),
        };
        out.extend(split(base, trimmed, max_chars));
    }
    out.sort_by_key(|c| (c.start_line, c.end_line));
    out
}

/// Which definitions become chunks: callables, containers and CSS/HTML
/// nodes, unless nested in something that is itself not a container chunk
/// (a closure stays inside its function). Namespaces are transparent.
fn chunk_worthy(defs: &[Definition]) -> Vec<bool> {
    let mut worthy = vec![false; defs.len()];
    let mut open = vec![false; defs.len()]; // children may be chunks
    for (i, d) in defs.iter().enumerate() {
        let parent_open = d.parent.is_none_or(|p| open[p]);
        if d.kind == "module" {
            open[i] = parent_open;
            continue;
        }
        let kind_ok = !matches!(d.kind.as_str(), "constant" | "field");
        worthy[i] = parent_open && kind_ok;
        open[i] = worthy[i] && d.is_container();
    }
    worthy
}

/// What ends the line that stands for an elided member ([`elide`]): its
/// first line, then this.
pub const ELISION: &str = " …";

/// Whether a line of a chunk's content stands for an elided member
/// ([`ELISION`]): the chunk's lines after it are not the file's lines at
/// the same offsets.
pub fn is_elided(line: &str) -> bool {
    line.ends_with(ELISION)
}

/// Lines `from..=to` (1-based) with each child's lines replaced by its
/// first line plus [`ELISION`]. Returns (line number, text) pairs.
fn elide(lines: &[&str], from: usize, to: usize, children: &[&Definition]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut n = from;
    let to = to.min(lines.len());
    while n <= to {
        if let Some(c) = children.iter().find(|c| c.line == n && c.end_line > c.line) {
            out.push((n, format!("{}{ELISION}", lines[n - 1].trim_end())));
            n = c.end_line + 1;
            continue;
        }
        if let Some(c) = children.iter().find(|c| c.line < n && n <= c.end_line) {
            n = c.end_line + 1;
            continue;
        }
        out.push((n, lines[n - 1].to_string()));
        n += 1;
    }
    out
}

/// Fills `base` with `lines`, split at line boundaries into parts of at most
/// `max_chars`; a single longer line is cut (minified code).
fn split(base: Chunk, lines: Vec<(usize, String)>, max_chars: usize) -> Vec<Chunk> {
    let mut parts = Vec::new();
    let mut cur: Vec<(usize, String)> = Vec::new();
    let mut size = 0;
    let had_lines = !lines.is_empty();
    // A minified line (inline normalize.css in Laravel's stock
    // `welcome.blade.php`, a base64 image) says nothing a request asks
    // for, and its embedding sat near every request: in an agent trial
    // (bench/README.md § Honest agent trial) it took a ranked slot at
    // vector score 1.00 on unrelated tickets. It is left out of chunks;
    // read_file and search_text still show it.
    let lines = lines
        .into_iter()
        .filter(|(_, l)| l.len() <= crate::classify::MINIFIED_LINE_BYTES);
    for (n, mut l) in lines {
        if l.len() > max_chars {
            let cut = l.char_indices().nth(max_chars).map_or(l.len(), |(i, _)| i);
            l.truncate(cut);
            l.push('…');
        }
        if size + l.len() + 1 > max_chars && !cur.is_empty() {
            parts.push(std::mem::take(&mut cur));
            size = 0;
        }
        size += l.len() + 1;
        cur.push((n, l));
    }
    if !cur.is_empty() || (parts.is_empty() && !had_lines) {
        parts.push(cur);
    }
    let single = parts.len() == 1;
    parts
        .into_iter()
        .map(|p| {
            let mut c = base.clone();
            if !single && let (Some(f), Some(l)) = (p.first(), p.last()) {
                c.start_line = f.0;
                c.end_line = l.0;
            }
            c.content = p.into_iter().map(|(_, l)| l).collect::<Vec<_>>().join("\n");
            c
        })
        .collect()
}

fn windows(file: &str, language: &str, name: &str, lines: &[&str], max_chars: usize) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (w, block) in lines.chunks(WINDOW_LINES).enumerate() {
        if block.iter().all(|l| l.trim().is_empty()) {
            continue;
        }
        let start = w * WINDOW_LINES + 1;
        let base = Chunk {
            file: file.to_string(),
            language: language.to_string(),
            kind: "window".into(),
            name: name.to_string(),
            scope: None,
            fqcn: None,
            signature: format!("{file}:{start}-{}", start + block.len() - 1),
            doc: None,
            start_line: start,
            end_line: start + block.len() - 1,
            content: String::new(),
            meta: Facts::default(),
            related: Vec::new(),
        };
        let numbered = block
            .iter()
            .enumerate()
            .map(|(i, l)| (start + i, (*l).to_string()))
            .collect();
        out.extend(split(base, numbered, max_chars));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Lang;
    use crate::search::symbols::extract;

    fn kinds(chunks: &[Chunk]) -> Vec<(String, String, usize, usize)> {
        chunks
            .iter()
            .map(|c| (c.kind.clone(), c.name.clone(), c.start_line, c.end_line))
            .collect()
    }

    #[test]
    fn split_identifiers() {
        for (input, expected) in [
            ("getUserByID", "get user by id"),
            ("load_config", "load config"),
            ("HTTPServer", "http server"),
            ("App\\Http\\LoginController", "app http login controller"),
            ("parse2Json", "parse2 json"),
        ] {
            assert_eq!(split_identifier(input), expected, "{input}");
        }
    }

    #[test]
    fn python_class_methods_module() {
        let src = "import os\n\nclass Auth:\n    limit = 3\n\n    def login(self):\n        def inner():\n            pass\n        return 1\n\n    def logout(self):\n        return 2\n\nif __name__ == '__main__':\n    Auth().login()\n";
        let syms = extract(Lang::Python, src, "auth.py");
        let chunks = chunk_file("auth.py", src, Some(&syms), 1500, false);
        assert_eq!(
            kinds(&chunks),
            vec![
                ("module".into(), "auth.py".into(), 1, 15),
                ("class".into(), "Auth".into(), 3, 12),
                ("method".into(), "login".into(), 6, 9),
                ("method".into(), "logout".into(), 11, 12),
            ]
        );
        let class = &chunks[1];
        assert!(class.content.contains("limit = 3"));
        assert!(class.content.contains("def login(self): …"));
        assert!(!class.content.contains("return 1"));
        assert!(chunks[2].content.contains("def inner"));
        assert!(
            chunks[0].content.contains("import os") && chunks[0].content.contains("class Auth: …")
        );
        assert!(chunks[0].content.contains("__main__"));
    }

    #[test]
    fn long_definition_splits_and_windows_fallback() {
        let body: String = (0..100).map(|i| format!("    x{i} = {i}\n")).collect();
        let src = format!("def big():\n{body}");
        let syms = extract(Lang::Python, &src, "big.py");
        let chunks = chunk_file("big.py", &src, Some(&syms), 300, false);
        assert!(chunks.len() > 3);
        assert!(
            chunks
                .iter()
                .all(|c| c.name == "big" && c.content.len() <= 300)
        );
        assert_eq!(chunks[0].start_line, 1);
        assert_eq!(chunks.last().unwrap().end_line, 101);

        let text: String = (0..120).map(|i| format!("line {i}\n")).collect();
        let w = chunk_file("notes.txt", &text, None, 5000, false);
        assert_eq!(
            kinds(&w),
            vec![
                ("window".into(), "notes.txt".into(), 1, 50),
                ("window".into(), "notes.txt".into(), 51, 100),
                ("window".into(), "notes.txt".into(), 101, 120),
            ]
        );
    }

    #[test]
    fn hash_changes_only_with_content() {
        let src = "def a():\n    return 1\n\ndef b():\n    return 2\n";
        let edited = "def a():\n    return 1\n\ndef b():\n    return 3\n";
        let h = |s: &str| {
            let syms = extract(Lang::Python, s, "m.py");
            chunk_file("m.py", s, Some(&syms), 1500, false)
                .iter()
                .map(Chunk::content_hash)
                .collect::<Vec<_>>()
        };
        let (before, after) = (h(src), h(edited));
        assert_eq!(before.len(), 2);
        assert_eq!(before[0], after[0]);
        assert_ne!(before[1], after[1]);
    }
}
