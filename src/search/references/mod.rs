//! Reference search: whole-word uses of a name found with the text engine,
//! definitions excluded, each classified by the tags query (call, class,
//! type, implementation; `text` where the grammar says nothing), placed in
//! its enclosing definition and, for `Class::name`, resolved to the class
//! where the line and the file's imports allow (otherwise left out and
//! counted), so `ProductForm::configure` does not count every `configure`.
//! PHP files resolve the way Laravel code calls ([`php`]): receivers'
//! declared classes, subclasses and trait users, facades, route actions.
//! Measured on a hand-labelled set of 57 methods (`bench/run.sh
//! references`, `bench/sets/references.json`).

mod declarations;
mod livewire;
mod php;
mod routes;

use serde::Serialize;

use crate::config::Config;
use crate::repo::Repo;
use crate::search::symbols::SymbolCache;
use crate::search::text::{self, TextSearch, TextSearchError};
use php::{Family, Views};

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
    /// `call`, `class`, `type`, `implementation` (from the tags query), `route` (a PHP route line whose action runs the method without spelling it: `Route::resource`, an invokable controller), `request` (an HTTP request to its route), `livewire` / `component` (a Blade view embeds the class: `<livewire:feed />`, `@livewire('feed')`, `<x-user-card />`), `view` (a file renders or includes the Blade view asked for: `view('…')`, `@include`, `@extends`), or `text` (a whole-word match the grammar does not classify: comments, strings, imports, files without a grammar).
    pub kind: String,
    pub enclosing: Option<Enclosing>,
    /// How the use was tied to the symbol: `qualified` (`Class::name`,
    /// `Class.name` on the line; PHP: also a subclass that inherits it),
    /// `self` (`$this->name`, `self::`, `static::`, `self.`, `this.` inside
    /// the class; PHP: also in subclasses and trait users that inherit it,
    /// and `parent::name` in those that override it), `typed` (PHP: a
    /// member call whose receiver the file declares as the class or an
    /// inheriting subclass: typed property or parameter, `new`, `app()`),
    /// `supertype` (PHP: the receiver is declared as a parent class or
    /// interface; the call may dispatch here), `facade` (a Laravel facade
    /// whose docblock `@see`s the class), `route` (a route action:
    /// `[Class::class, 'name']`, `'Class@name'`, a resource route or an
    /// invokable controller), `livewire` (its component's view:
    /// `wire:click="name(…)"`, `$wire.name`), `named` (a Blade view's call on a variable named after the class: `$link->shortTitle()` for `Link`; probable), `imported` (a member call `->name(` /
    /// `.name(` whose receiver's class is not known, in a file that imports
    /// the class or shares its namespace; probable), `request` (a script or
    /// view requests its route), `livewire` / `component` (a view embeds
    /// the component class by its tag), or `name` (the bare name only: no
    /// class was given).
    pub resolution: String,
}

/// Result of `find_references`.
#[derive(Debug, Default, Serialize, schemars::JsonSchema)]
pub struct ReferenceList {
    pub references: Vec<Reference>,
    /// Uses found (resolved ones when a class was given).
    pub total: usize,
    /// Of `total`, the uses the parsed code names as a reference (kind other
    /// than `text`: a call, an import, a route action, a request, a
    /// component tag); a `text` use is a line that holds the name in a
    /// string, a URL or a comment (`'profiles/{username}/follow'` for
    /// `follow`). Risk counts these outside test files (`session::risk`);
    /// not in the reply.
    #[serde(skip)]
    #[schemars(skip)]
    pub parsed: usize,
    pub truncated: bool,
    /// Bare-name matches that did not resolve to the given class (left out).
    pub unresolved: usize,
    /// When no use resolved but some bare-name matches did not
    /// (`unresolved` > 0), the first [`UNCERTAIN_SHOWN`] of them (resolution
    /// `unresolved`): "no uses" is then uncertain, and these are the lines
    /// to look at.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uncertain: Vec<Reference>,
    /// The classes a class name given without its namespace names, when it
    /// names more than one (`ListController` of `API`, `Guest` and
    /// `Models`): the uses of each are listed. Said in the reply's text.
    #[serde(skip)]
    #[schemars(skip)]
    pub classes: Vec<String>,
    /// When no use resolved to a member's class: the classes and
    /// interfaces it extends, implements or uses that are not in the
    /// repository (a package's, the framework's). A method it overrides
    /// is called from there, which is not searched: a trial's
    /// `Transactions::map` (Maatwebsite Excel's `WithMapping`) and
    /// `Handler::unauthenticated` (Laravel's handler) had no caller and
    /// the reply did not say why (bench/README.md § Honest agent trial).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outside_parents: Vec<String>,
}

/// Unresolved bare-name matches listed when no use resolved.
pub const UNCERTAIN_SHOWN: usize = 10;

/// Whether a reference counts among [`ReferenceList::parsed`]: the parsed
/// code names it (not `text`) outside a test file. Uses in tests say how a
/// symbol is tested, not how far a change to it ripples: a controller
/// action with a route and nine HTTP calls of one feature test was "10
/// uses" and MEDIUM risk in the honest agent trial (bench/README.md §
/// Honest agent trial).
fn counts_for_risk(file: &str, kind: &str) -> bool {
    kind != "text" && !crate::classify::is_test_path(file)
}

/// Files whose text names things without calling the application's code:
/// lock files, generated and vendored files, docs and other locales'
/// translations ([`crate::classify::classify_path`]).
fn cannot_call(file: &str) -> bool {
    use crate::classify::FileClass;
    matches!(
        crate::classify::classify_path(file).class,
        FileClass::Lock
            | FileClass::Generated
            | FileClass::Vendored
            | FileClass::Docs
            | FileClass::L10n
    )
}

/// Adds `uses` (repo-relative file, 1-based line and kind of each, as the
/// code graph resolves them: the requests that reach a controller action
/// over HTTP, `graph::Graph::requests_of`, kind `request`; the views that
/// embed a Livewire or Blade component and the code that runs an Artisan
/// command by its name, `index::uses_by_name`, kind `livewire`,
/// `component` or `command`) to `list` as references of that kind and
/// resolution, unless one is listed at that line already or lies outside
/// `scope`'s path, while `list` holds fewer than `max`; `total` counts
/// every one added, and a use added makes "no uses" certain (`uncertain`
/// is emptied). The line's text is read from the file; a file that cannot
/// be read is skipped.
pub fn add_uses(
    repo: &Repo,
    list: &mut ReferenceList,
    uses: &[(String, u64, &str)],
    scope: &Within,
    max: usize,
) {
    let under = scope.path.trim_start_matches("./").trim_end_matches('/');
    let under = if under == "." { "" } else { under };
    for &(ref file, line, kind) in uses {
        let inside = under.is_empty()
            || file == under
            || file.strip_prefix(under).is_some_and(|r| r.starts_with('/'));
        if !inside
            || list
                .references
                .iter()
                .any(|r| &r.file == file && r.line == line)
        {
            continue;
        }
        let Some(content) = std::fs::read_to_string(repo.root().join(file))
            .ok()
            .and_then(|t| {
                t.lines()
                    .nth(line.saturating_sub(1) as usize)
                    .map(str::to_string)
            })
        else {
            continue;
        };
        list.total += 1;
        list.parsed += usize::from(counts_for_risk(file, kind));
        list.uncertain.clear();
        if list.references.len() >= max {
            list.truncated = true;
            continue;
        }
        let column = content.chars().take_while(|c| c.is_whitespace()).count() + 1;
        list.references.push(Reference {
            file: file.clone(),
            line,
            column,
            content,
            kind: kind.to_string(),
            enclosing: None,
            resolution: kind.to_string(),
        });
    }
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

/// The namespace of the class a `find_references` argument names, when it
/// is qualified (`App\Reports\ProfitLoss::setTotals` → `App\Reports`).
pub fn namespace(symbol: &str) -> Option<String> {
    let (qualifier, _) = crate::search::symbols::split_qualified(symbol);
    let q = qualifier?;
    let (ns, _) = q.trim_start_matches('\\').rsplit_once('\\')?;
    (!ns.is_empty()).then(|| ns.to_string())
}

/// What the name searched for belongs to.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'a> {
    /// A bare name: every whole-word use.
    Any,
    /// A member of a class (`Class::name`, `Class.name`, `Ns\Class::name`):
    /// the class's short name and, when the argument was qualified, its
    /// namespace.
    Member {
        class: &'a str,
        namespace: Option<&'a str>,
    },
    /// The class a qualified name gives
    /// (`App\Abstracts\View\Components\Transactions\Template`), its FQCN.
    Class(&'a str),
}

/// Uses of `name` within `scope`, at most `max` (`total` counts all). Of
/// an [`Owner::Member`], only uses that resolve to that class are kept
/// ([`Reference::resolution`]; PHP files by the receiver's declared class
/// and the class's [`Family`], other files by the line and the file's
/// imports); `unresolved` counts the bare-name matches left out. PHP route
/// actions that do not spell the method (`Route::resource`, invokable
/// controllers) are added for a controller's actions. Of an
/// [`Owner::Class`], a match counts only in a PHP file where PHP's name
/// resolution (the qualified name written, the file's imports, its
/// namespace) makes the word that class; other matches are another class
/// of the same short name or text, and are left out: a trial agent's
/// search for a class by its FQCN got 111 lines of language strings, CSS
/// and other `Template` classes (bench/README.md § Honest agent trial).
///
/// # Errors
/// A path outside the repository or an unknown file type.
pub fn find(
    repo: &Repo,
    config: &Config,
    symbols: &SymbolCache,
    name: &str,
    owner: Owner<'_>,
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
    let (class, of_class) = match owner {
        Owner::Any => (None, None),
        Owner::Member { class, namespace } => (Some((class, namespace)), None),
        Owner::Class(fq) => (None, Some(fq)),
    };
    let mut views = Views::new(repo, config, symbols);
    let family = match class {
        Some((c, ns)) if hits.matches.iter().any(|m| is_php(&m.file)) || is_php_scope(scope) => {
            Some(Family::find(&mut views, c, ns, name)?)
        }
        _ => None,
    };
    let mut refs = Vec::new();
    let mut unresolved = 0;
    let mut uncertain = Vec::new();
    for m in hits.matches {
        let view = views.get(&m.file);
        let line = m.line as usize;
        if let Some(fq) = of_class
            && !(is_php(&m.file) && view.fqcn_of(name, &m.content).eq_ignore_ascii_case(fq))
        {
            continue;
        }
        let (kind, enclosing) = match &view.symbols {
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
                (kind, view.enclosing(line))
            }
            None => ("text".to_string(), None),
        };
        // `None`: a bare-name match that does not resolve to the class.
        let resolution = match (class, &family) {
            (None, _) => Some("name"),
            (Some((c, _)), fam) => match fam {
                Some(fam) if is_php(&m.file) => fam.resolve(&mut views, &m.file, name, line),
                _ => {
                    let view = views.get(&m.file);
                    let defines = view
                        .symbols
                        .as_ref()
                        .is_some_and(|s| s.definitions.iter().any(|d| d.name == c));
                    resolve(&m.content, c, name, defines, imports_class(&view.text, c))
                }
            },
        };
        // A route action is a string to the grammar (`text`) or sits on a
        // line whose `Route::delete(` call has the method's name (`call`):
        // what it resolved as says what it is.
        let kind = if resolution == Some("route") {
            "route".to_string()
        } else {
            kind
        };
        // A lock file, a built bundle or a copied vendor file calls no
        // method of the application's: its bare-name match is not a doubt
        // (a trial's `Handler::handle` was "uncertain" over 38 matches in
        // `composer.lock` and minified `public/dist` files; bench/README.md
        // § Honest agent trial).
        if resolution.is_none() && cannot_call(&m.file) {
            continue;
        }
        // Nor is a stylesheet's or script's match of a PHP class's member
        // (`.drag-handle` for `Handler::handle`): PHP is called from PHP
        // and Blade; a script's request to a controller action is a
        // `request` use, added apart (`index::action_requests`).
        if resolution.is_none() && !is_php(&m.file) && family.as_ref().is_some_and(Family::declared)
        {
            continue;
        }
        if resolution.is_none() {
            unresolved += 1;
            if uncertain.len() >= UNCERTAIN_SHOWN {
                continue;
            }
        }
        let r = Reference {
            file: m.file,
            line: m.line,
            column: m.column,
            content: m.content.trim().to_string(),
            kind,
            enclosing,
            resolution: resolution.unwrap_or("unresolved").to_string(),
        };
        if resolution.is_some() {
            refs.push(r);
        } else {
            uncertain.push(r);
        }
    }
    if let Some(fam) = &family {
        for r in fam.routes(name) {
            let inside = scope.path.is_empty()
                || r.file == scope.path
                || r.file
                    .starts_with(&format!("{}/", scope.path.trim_end_matches('/')));
            if inside && !refs.iter().any(|x| x.file == r.file && x.line == r.line) {
                refs.push(Reference {
                    enclosing: views.get(&r.file).enclosing(r.line as usize),
                    file: r.file.clone(),
                    line: r.line,
                    column: r.column,
                    content: r.content.trim().to_string(),
                    kind: "route".to_string(),
                    resolution: "route".to_string(),
                });
            }
        }
    }
    let total = refs.len();
    let parsed = refs
        .iter()
        .filter(|r| counts_for_risk(&r.file, &r.kind))
        .count();
    refs.truncate(max);
    if total > 0 {
        uncertain.clear();
    }
    let classes = match (&family, class) {
        (Some(fam), Some((_, None))) => fam.classes(),
        _ => Vec::new(),
    };
    Ok(ReferenceList {
        truncated: total > refs.len(),
        references: refs,
        total,
        parsed,
        unresolved,
        uncertain,
        classes: if classes.len() > 1 {
            classes
        } else {
            Vec::new()
        },
        outside_parents: Vec::new(),
    })
}

fn is_php(file: &str) -> bool {
    file.ends_with(".php")
}

fn is_php_scope(scope: &Within) -> bool {
    scope.language.as_deref() == Some("php") || is_php(&scope.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Risk counts parsed uses outside tests: a route counts, a feature
    /// test's HTTP call and a string holding the name do not.
    #[test]
    fn uses_in_tests_do_not_count_for_risk() {
        assert!(counts_for_risk("routes/api.php", "route"));
        assert!(counts_for_risk("app/Http/Controllers/A.php", "call"));
        assert!(!counts_for_risk(
            "tests/Feature/Api/User/UpdateUserTest.php",
            "request"
        ));
        assert!(!counts_for_risk("resources/js/a.spec.ts", "call"));
        assert!(!counts_for_risk("routes/api.php", "text"));
    }

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
    fn a_qualified_class_gives_its_namespace() {
        assert_eq!(
            namespace("App\\Reports\\ProfitLoss::setTotals").as_deref(),
            Some("App\\Reports")
        );
        assert_eq!(namespace("\\App\\Page::render").as_deref(), Some("App"));
        assert_eq!(namespace("ProfitLoss::setTotals"), None);
        assert_eq!(namespace("render"), None);
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
