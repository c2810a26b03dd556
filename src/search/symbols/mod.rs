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

mod cache;
mod extract;
mod markup;
mod naming;

pub use cache::*;
pub use extract::*;
use markup::*;
pub use naming::*;

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

    /// A class's imports, types, static scopes and `::class` are parsed
    /// references of it by its short name (an alias is not the class).
    #[test]
    fn php_class_references_by_kind() {
        let src = "<?php\nnamespace App\\Http;\n\nuse App\\Requests\\FeedRequest;\nuse App\\Requests\\FeedRequest as Feed2;\n\nclass A extends \\Base\\Controller implements \\C\\Lists\n{\n    public function feed(FeedRequest $r): ?Article\n    {\n        try { $x = FeedRequest::class; } catch (\\E\\BadFeed $e) {}\n        return Article::query()->first();\n    }\n}\n";
        let syms = extract(Lang::Php, src, "app/Http/A.php");
        let mut got: Vec<(usize, &str, &str)> = syms
            .references
            .iter()
            .filter(|r| r.kind != "call")
            .map(|r| (r.line, r.kind.as_str(), r.name.as_str()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                (4, "import", "FeedRequest"),
                (5, "import", "FeedRequest"),
                (7, "class", "Controller"),
                (7, "implementation", "Lists"),
                (9, "type", "Article"),
                (9, "type", "FeedRequest"),
                (11, "class", "FeedRequest"),
                (11, "type", "BadFeed"),
                (12, "class", "Article"),
            ]
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
            ("script", "section", 8, 20),
            // A `<script setup>`'s top-level refs are named too, each name
            // a destructuring binds among them.
            ("title", "constant", 12, 12),
            ("orders", "constant", 13, 13),
            ("customers", "constant", 14, 14),
            ("isLoading", "constant", 14, 14),
            ("cancelOrder", "function", 17, 19),
            ("style", "section", 22, 26),
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
