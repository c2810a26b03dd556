//! The language table: id, file extensions, tree-sitter grammar and tags
//! query. Adding a language is one row here, one `queries/<lang>/tags.scm`
//! and one fixture.
//!
//! Two languages are compositions rather than grammars of their own: a Vue
//! single-file component is parsed with the HTML grammar and its `<script>`
//! block again as TypeScript or JavaScript; a Blade template
//! (`.blade.php`) is parsed with the HTML grammar, and its directives
//! (`@section`, `@livewire`, `<x-…>` components) are read by
//! `search::symbols` on top. SCSS uses the CSS grammar (tree-sitter-css
//! parses nested rule sets; `$variables` and `@mixin` come back as
//! declarations and at-rules).

use std::path::Path;
use std::sync::OnceLock;

use tree_sitter::{Language, Query};

/// A language code-intel parses with tree-sitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    Python,
    Php,
    JavaScript,
    TypeScript,
    Tsx,
    Css,
    Scss,
    Html,
    Vue,
    Blade,
    Go,
    Java,
    Rust,
}

impl Lang {
    /// Every supported language, in table order.
    pub const fn all() -> &'static [Lang] {
        &[
            Lang::Python,
            Lang::Php,
            Lang::JavaScript,
            Lang::TypeScript,
            Lang::Tsx,
            Lang::Css,
            Lang::Scss,
            Lang::Html,
            Lang::Vue,
            Lang::Blade,
            Lang::Go,
            Lang::Java,
            Lang::Rust,
        ]
    }

    /// The name used in tool parameters and results (`tsx` reports as
    /// `typescript`).
    pub const fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Php => "php",
            Lang::JavaScript => "javascript",
            Lang::TypeScript | Lang::Tsx => "typescript",
            Lang::Css => "css",
            Lang::Scss => "scss",
            Lang::Html => "html",
            Lang::Vue => "vue",
            Lang::Blade => "blade",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::Rust => "rust",
        }
    }

    /// The distinct language names, in table order (for messages).
    pub fn names() -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for l in Lang::all() {
            if !out.contains(&l.name()) {
                out.push(l.name());
            }
        }
        out
    }

    /// File extensions (without the dot, lowercase).
    pub const fn extensions(self) -> &'static [&'static str] {
        match self {
            Lang::Python => &["py", "pyi"],
            Lang::Php => &["php"],
            Lang::JavaScript => &["js", "mjs", "cjs", "jsx"],
            Lang::TypeScript => &["ts", "mts", "cts"],
            Lang::Tsx => &["tsx"],
            Lang::Css => &["css"],
            Lang::Scss => &["scss"],
            Lang::Html => &["html", "htm"],
            Lang::Vue => &["vue"],
            // Matched on the double extension by `from_path`.
            Lang::Blade => &["blade.php"],
            Lang::Go => &["go"],
            Lang::Java => &["java"],
            Lang::Rust => &["rs"],
        }
    }

    /// The language of a path, by extension (`x.blade.php` is Blade, not
    /// PHP).
    pub fn from_path(path: &Path) -> Option<Lang> {
        let file = path.file_name()?.to_str()?.to_ascii_lowercase();
        if file.ends_with(".blade.php") {
            return Some(Lang::Blade);
        }
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Lang::all()
            .iter()
            .copied()
            .find(|l| l.extensions().contains(&ext.as_str()))
    }

    /// True when `filter` (a language name as accepted by the tools,
    /// case-insensitive; `ts`/`js`/`py` shorthands too) selects this language.
    pub fn matches_filter(self, filter: &str) -> bool {
        let f = filter.to_ascii_lowercase();
        f == self.name() || self.extensions().contains(&f.as_str())
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Css | Lang::Scss => tree_sitter_css::LANGUAGE.into(),
            Lang::Html | Lang::Vue | Lang::Blade => tree_sitter_html::LANGUAGE.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }

    /// Source of the tags query (`queries/<lang>/tags.scm`; TypeScript's is
    /// its own file followed by JavaScript's, SCSS's is followed by CSS's,
    /// Vue's and Blade's by HTML's).
    pub fn tags_source(self) -> String {
        const PY: &str = include_str!("../queries/python/tags.scm");
        const PHP: &str = include_str!("../queries/php/tags.scm");
        const JS: &str = include_str!("../queries/javascript/tags.scm");
        const TS: &str = include_str!("../queries/typescript/tags.scm");
        const CSS: &str = include_str!("../queries/css/tags.scm");
        const HTML: &str = include_str!("../queries/html/tags.scm");
        const SCSS: &str = include_str!("../queries/scss/tags.scm");
        const VUE: &str = include_str!("../queries/vue/tags.scm");
        const BLADE: &str = include_str!("../queries/blade/tags.scm");
        const GO: &str = include_str!("../queries/go/tags.scm");
        const JAVA: &str = include_str!("../queries/java/tags.scm");
        const RUST: &str = include_str!("../queries/rust/tags.scm");
        match self {
            Lang::Python => PY.into(),
            Lang::Php => PHP.into(),
            Lang::JavaScript => JS.into(),
            Lang::TypeScript | Lang::Tsx => format!("{TS}\n{JS}"),
            Lang::Css => CSS.into(),
            Lang::Html => HTML.into(),
            Lang::Scss => format!("{SCSS}\n{CSS}"),
            Lang::Vue => format!("{VUE}\n{HTML}"),
            Lang::Blade => format!("{BLADE}\n{HTML}"),
            Lang::Go => GO.into(),
            Lang::Java => JAVA.into(),
            Lang::Rust => RUST.into(),
        }
    }

    /// The compiled tags query, built once per process.
    ///
    /// # Panics
    /// If a bundled query does not compile against its grammar; the test
    /// `every_tags_query_compiles` guards this.
    pub fn tags_query(self) -> &'static Query {
        static CELLS: [OnceLock<Query>; 13] = [const { OnceLock::new() }; 13];
        CELLS[self as usize].get_or_init(|| {
            Query::new(&self.grammar(), &self.tags_source())
                .unwrap_or_else(|e| panic!("bundled tags query for {self:?} is invalid: {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tags_query_compiles() {
        for lang in Lang::all() {
            let q = Query::new(&lang.grammar(), &lang.tags_source());
            assert!(q.is_ok(), "{lang:?}: {:?}", q.err());
        }
    }

    #[test]
    fn extensions_map() {
        assert_eq!(Lang::from_path(Path::new("a/b.PY")), Some(Lang::Python));
        assert_eq!(Lang::from_path(Path::new("x.tsx")), Some(Lang::Tsx));
        assert_eq!(Lang::from_path(Path::new("x.blade.php")), Some(Lang::Blade));
        assert_eq!(Lang::from_path(Path::new("x.php")), Some(Lang::Php));
        assert_eq!(Lang::from_path(Path::new("App.vue")), Some(Lang::Vue));
        assert_eq!(Lang::from_path(Path::new("main.rs")), Some(Lang::Rust));
        assert_eq!(Lang::from_path(Path::new("a.scss")), Some(Lang::Scss));
        assert_eq!(Lang::all().len(), 13);
        assert_eq!(Lang::from_path(Path::new("README")), None);
        assert!(Lang::Tsx.matches_filter("TypeScript"));
        assert!(Lang::Python.matches_filter("py"));
    }
}
