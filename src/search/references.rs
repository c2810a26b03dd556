//! Reference search: whole-word uses of a name found with the text engine,
//! definitions excluded, each classified by the tags query (call, class,
//! type, implementation; `text` where the grammar says nothing) and placed
//! in its enclosing definition.

use serde::Serialize;

use crate::config::Config;
use crate::repo::Repo;
use crate::search::symbols::SymbolCache;
use crate::search::text::{self, TextQuery, TextSearchError};

/// The definition enclosing a reference.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Enclosing {
    pub name: String,
    pub kind: String,
    /// 1-based first line.
    pub line: usize,
    pub fqcn: Option<String>,
}

/// One use of a symbol.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Reference {
    pub file: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column in chars.
    pub column: usize,
    pub content: String,
    /// `call`, `class`, `type`, `implementation` (from the tags query), or `text` (a whole-word match the grammar does not classify: comments, strings, imports, files without a grammar).
    pub kind: String,
    pub enclosing: Option<Enclosing>,
}

/// Result of `find_references`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReferenceList {
    pub references: Vec<Reference>,
    pub total: usize,
    pub truncated: bool,
}

/// Where to look.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Repo-relative file or directory (`""`: the repository).
    pub path: String,
    /// A language or ripgrep file type.
    pub language: Option<String>,
}

/// Uses of `name` within `scope`, at most `max` (`total` counts all).
///
/// # Errors
/// A path outside the repository or an unknown file type.
pub fn find(
    repo: &Repo,
    config: &Config,
    symbols: &SymbolCache,
    name: &str,
    scope: &Scope,
    max: usize,
) -> Result<ReferenceList, TextSearchError> {
    let q = TextQuery {
        pattern: name.to_string(),
        literal: true,
        word: true,
        path: scope.path.clone(),
        file_type: scope.language.clone(),
        max_results: usize::MAX,
        ..Default::default()
    };
    let hits = text::search(repo, config, &q)?;
    let mut refs = Vec::new();
    for m in hits.matches {
        let abs = repo.root().join(&m.file);
        let syms = symbols.get(repo, &abs, config.max_file_size).ok().flatten();
        let line = m.line as usize;
        let (kind, enclosing) = match &syms {
            Some(s) => {
                if s.definitions
                    .iter()
                    .any(|d| d.name == name && d.name_line == line)
                {
                    continue;
                }
                let kind = s
                    .references
                    .iter()
                    .find(|r| r.line == line && r.name == name)
                    .map_or("text".to_string(), |r| r.kind.clone());
                let enc = s.enclosing(line).map(|d| Enclosing {
                    name: d.name.clone(),
                    kind: d.kind.clone(),
                    line: d.line,
                    fqcn: d.fqcn.clone(),
                });
                (kind, enc)
            }
            None => ("text".to_string(), None),
        };
        refs.push(Reference {
            file: m.file,
            line: m.line,
            column: m.column,
            content: m.content.trim().to_string(),
            kind,
            enclosing,
        });
    }
    let total = refs.len();
    refs.truncate(max);
    Ok(ReferenceList {
        truncated: total > refs.len(),
        references: refs,
        total,
    })
}
