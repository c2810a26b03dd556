//! Reference search: whole-word uses of a name found with the text engine,
//! definitions excluded, each classified by the tags query (call, class,
//! type, implementation; `text` where the grammar says nothing), placed in
//! its enclosing definition and, for `Class::name`, resolved to the class
//! where the line and the file's imports allow (otherwise left out and
//! counted), so `ProductForm::configure` does not count every `configure`.

use serde::Serialize;

use crate::config::Config;
use crate::repo::Repo;
use crate::search::symbols::SymbolCache;
use crate::search::text::{self, TextSearch, TextSearchError};

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
    /// How the use was tied to the symbol: `qualified` (`Class::name`,
    /// `Class.name` on the line), `self` (`$this->name`, `self::`, `static::`,
    /// `self.`, `this.` inside the class's own file), `imported` (a member
    /// call `->name(` / `.name(` in a file that imports the
    /// class; probable, as the receiver's type is not known), or `name` (the
    /// bare name only: no class was given).
    pub resolution: String,
}

/// Result of `find_references`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ReferenceList {
    pub references: Vec<Reference>,
    /// Uses found (resolved ones when a class was given).
    pub total: usize,
    pub truncated: bool,
    /// Bare-name matches that did not resolve to the given class (left out).
    pub unresolved: usize,
}

/// Where to look.
#[derive(Debug, Clone, Default)]
pub struct Within {
    /// Repo-relative file or directory (`""`: the repository).
    pub path: String,
    /// A language or ripgrep file type.
    pub language: Option<String>,
}

/// The name and the class a `find_references` argument asks for:
/// `Class::method` / `Class.method` / `Ns\Class::method` → the member and
/// its class; a namespace or module qualifier (`App\Models\Order`,
/// `os.path`) or a capitalised member (`Ns\Order`) names no class of the
/// member. `None` when the name is not an identifier (letters, digits, `_`,
/// `$`, `-`).
pub fn target(symbol: &str) -> Option<(String, Option<String>)> {
    let (qualifier, name) = crate::search::symbols::split_qualified(symbol);
    let class = qualifier
        .as_deref()
        .map(|q| q.rsplit(['\\', '.', ':']).next().unwrap_or(q).to_string())
        .filter(|c| {
            c.starts_with(|ch: char| ch.is_uppercase())
                && !name.starts_with(|ch: char| ch.is_uppercase())
        });
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '-');
    valid.then_some((name, class))
}

/// How a use on `line` of a file resolves to `class::name`, if it does.
/// `defines` tells whether the file defines the class, `imports` whether it
/// imports it (PHP `use …\Class`, JS/TS/Python `import`).
fn resolve(
    line: &str,
    class: &str,
    name: &str,
    defines: bool,
    imports: bool,
) -> Option<&'static str> {
    if [
        format!("{class}::{name}"),
        format!("{class}.{name}"),
        format!("{class}->{name}"),
    ]
    .iter()
    .any(|q| line.contains(q.as_str()))
    {
        return Some("qualified");
    }
    let own = ["$this->", "self::", "static::", "self.", "this.", "cls."];
    if defines && own.iter().any(|p| line.contains(&format!("{p}{name}"))) {
        return Some("self");
    }
    // Instance calls only: a static call names its class and is `qualified`.
    let member = ["->", "?->", "."];
    if imports && member.iter().any(|p| line.contains(&format!("{p}{name}("))) {
        return Some("imported");
    }
    None
}

/// Whether `source` imports `class` (PHP `use A\B\Class;` / `as`, JS/TS
/// `import … Class …`, Python `from … import … Class`).
fn imports_class(source: &str, class: &str) -> bool {
    source.lines().any(|l| {
        let l = l.trim();
        (l.starts_with("use ") || l.starts_with("import ") || l.starts_with("from "))
            && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == class)
    })
}

/// Uses of `name` within `scope`, at most `max` (`total` counts all). With
/// `class` (from `Class::name`, `Class.name` or `Ns\Class::name`), only uses
/// that resolve to that class are kept ([`Reference::resolution`]);
/// `unresolved` counts the bare-name matches left out.
///
/// # Errors
/// A path outside the repository or an unknown file type.
pub fn find(
    repo: &Repo,
    config: &Config,
    symbols: &SymbolCache,
    name: &str,
    class: Option<&str>,
    scope: &Within,
    max: usize,
) -> Result<ReferenceList, TextSearchError> {
    let q = TextSearch {
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
    let mut unresolved = 0;
    // Per file: (defines the class, imports it).
    let mut file_facts: std::collections::HashMap<String, (bool, bool)> = Default::default();
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
        let resolution = match class {
            None => "name",
            Some(c) => {
                let (defines, imports) = *file_facts.entry(m.file.clone()).or_insert_with(|| {
                    let defines = syms
                        .as_ref()
                        .is_some_and(|s| s.definitions.iter().any(|d| d.name == c));
                    let source = crate::repo::read_regular(&abs).unwrap_or_default();
                    (defines, imports_class(&String::from_utf8_lossy(&source), c))
                });
                match resolve(&m.content, c, name, defines, imports) {
                    Some(r) => r,
                    None => {
                        unresolved += 1;
                        continue;
                    }
                }
            }
        };
        refs.push(Reference {
            file: m.file,
            line: m.line,
            column: m.column,
            content: m.content.trim().to_string(),
            kind,
            enclosing,
            resolution: resolution.to_string(),
        });
    }
    let total = refs.len();
    refs.truncate(max);
    Ok(ReferenceList {
        truncated: total > refs.len(),
        references: refs,
        total,
        unresolved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_name_a_class_only_for_members() {
        let t = |s: &str| target(s);
        for (arg, want) in [
            ("render", Some(("render", None))),
            ("Page::render", Some(("render", Some("Page")))),
            ("App\\Models\\Page::render", Some(("render", Some("Page")))),
            ("Widget.draw", Some(("draw", Some("Widget")))),
            ("os.path", Some(("path", None))),
            ("App\\Models\\Order", Some(("Order", None))),
            ("$user", Some(("$user", None))),
            ("a b", None),
            ("", None),
            ("foo()", None),
        ] {
            let want =
                want.map(|(n, c): (&str, Option<&str>)| (n.to_string(), c.map(str::to_string)));
            assert_eq!(t(arg), want, "{arg}");
        }
    }

    #[test]
    fn uses_resolve_to_the_class_where_the_line_or_imports_allow() {
        let r =
            |line, defines, imports| resolve(line, "ProductForm", "configure", defines, imports);
        assert_eq!(
            r("return ProductForm::configure($schema);", false, false),
            Some("qualified")
        );
        assert_eq!(r("$x = $this->configure($s);", true, false), Some("self"));
        assert_eq!(r("$x = $this->configure($s);", false, false), None);
        assert_eq!(r("$form->configure($s);", false, true), Some("imported"));
        assert_eq!(
            r("return OrderForm::configure($schema);", false, true),
            None
        );
        let php = "<?php\nnamespace App;\nuse App\\Filament\\ProductForm;\n";
        assert!(imports_class(php, "ProductForm"));
        assert!(!imports_class(php, "Product"));
        assert!(imports_class(
            "from app.forms import ProductForm, X\n",
            "ProductForm"
        ));
    }
}
