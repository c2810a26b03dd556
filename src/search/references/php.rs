//! PHP references the way Laravel code calls: a method `Class::name` is
//! reached through the class's [`Family`] (its subclasses and trait users
//! that inherit `name`, its parents and interfaces, the facades whose
//! docblock points at it), through receivers whose declared class the file
//! says ([`crate::search::receivers`]; properties inherited from a parent
//! class included), and through route actions (`[X::class, 'name']`,
//! `'X@name'`, `Route::resource`, invokable controllers). Classes are told
//! apart by their fully qualified names where the file says which one it
//! means (a `use` import, a qualified name, its own namespace), so
//! `Widgets\ProfitLoss` is not taken for `Reports\ProfitLoss`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use regex::Regex;

use super::declarations::{declaration, has_word_start};
use super::routes::{route_string, with_continuation, written_controller};
use super::{Enclosing, livewire};
use crate::config::Config;
use crate::repo::Repo;
use crate::search::receivers::{self, Receiver};
use crate::search::symbols::{FileSymbols, SymbolCache};
use crate::search::text::{self, TextMatch, TextSearch, TextSearchError};

/// Most classes a [`Family`] follows (a framework base class can have
/// hundreds of descendants; past this the rest resolve by imports only).
const MAX_FAMILY: usize = 60;

/// Levels of `extends` followed up and down from the class.
const MAX_DEPTH: usize = 4;

/// One file as the resolution reads it: its text, tags, namespace and
/// imports.
pub(super) struct FileView {
    pub(super) text: String,
    pub(super) symbols: Option<Arc<FileSymbols>>,
    namespace: Option<String>,
    /// Short name (or alias) → the imported FQCN, without a leading `\`.
    imports: HashMap<String, String>,
}

impl FileView {
    pub(super) fn read(
        repo: &Repo,
        config: &Config,
        symbols: &SymbolCache,
        file: &str,
    ) -> FileView {
        let abs = repo.root().join(file);
        let symbols = symbols.get(repo, &abs, config.max_file_size).ok().flatten();
        let bytes = crate::repo::read_regular(&abs).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let namespace = text.lines().find_map(|l| {
            l.trim()
                .strip_prefix("namespace ")
                .map(|n| n.trim_end_matches([';', '{', ' ']).trim().to_string())
        });
        // Top-level `use` lines only (unindented): an indented one is a
        // trait used inside a class body.
        let imports = text
            .lines()
            .filter_map(|l| l.strip_prefix("use "))
            .flat_map(|l| {
                let l = l.trim_end_matches(';');
                // A group import `use App\Models\{User, Post as P};`.
                let (prefix, list) = match (l.find('{'), l.rfind('}')) {
                    (Some(a), Some(b)) if a < b => (&l[..a], &l[a + 1..b]),
                    _ => ("", l),
                };
                list.split(',')
                    .map(|part| format!("{prefix}{}", part.trim()))
                    .filter_map(|part| {
                        let part = part.trim().trim_start_matches('\\');
                        let (path, alias) = match part.split_once(" as ") {
                            Some((p, a)) => (p.trim(), a.trim()),
                            None => (part, part.rsplit('\\').next()?),
                        };
                        (!alias.is_empty()).then(|| (alias.to_string(), path.to_string()))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        FileView {
            text,
            symbols,
            namespace,
            imports,
        }
    }

    pub(super) fn enclosing(&self, line: usize) -> Option<Enclosing> {
        self.symbols.as_ref()?.enclosing(line).map(|d| Enclosing {
            name: d.name.clone(),
            kind: d.kind.clone(),
            line: d.line,
            fqcn: d.fqcn.clone(),
        })
    }

    /// The FQCN of a class this file declares.
    fn declared_fqcn(&self, short: &str) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}\\{short}"),
            None => short.to_string(),
        }
    }

    /// The FQCN `short` stands for on `line`: the qualified name written
    /// there (`\App\Models\Page`, `Models\Page`), else the file's import,
    /// else a class of the file's own namespace.
    pub(super) fn fqcn_of(&self, short: &str, line: &str) -> String {
        let qualified = Regex::new(&format!(r"([\w\\]*)\\{}\b", regex::escape(short)))
            .ok()
            .and_then(|re| {
                re.captures(line)
                    .map(|c| c[1].trim_start_matches('\\').to_string())
            });
        if let Some(q) = qualified.filter(|q| !q.is_empty()) {
            return match self.imports.get(q.split('\\').next().unwrap_or(&q)) {
                // `Models\Page` with `use App\Models;`.
                Some(base) if !line.contains(&format!("\\{q}\\{short}")) => {
                    let rest = q
                        .split_once('\\')
                        .map_or(String::new(), |(_, r)| format!("\\{r}"));
                    format!("{base}{rest}\\{short}")
                }
                _ => format!("{q}\\{short}"),
            };
        }
        self.imports
            .get(short)
            .cloned()
            .unwrap_or_else(|| self.declared_fqcn(short))
    }

    /// Whether the file imports a class named `short` (under that name).
    fn imports_short(&self, short: &str) -> Option<&str> {
        self.imports.get(short).map(String::as_str)
    }

    /// The class, trait, interface or enum whose body holds 1-based `line`.
    fn class_at(&self, line: usize) -> Option<&str> {
        let s = self.symbols.as_ref()?;
        s.definitions
            .iter()
            .filter(|d| {
                matches!(d.kind.as_str(), "class" | "trait" | "interface" | "enum")
                    && d.line <= line
                    && line <= d.end_line
            })
            .min_by_key(|d| d.end_line - d.line)
            .map(|d| d.name.as_str())
    }

    /// The first 0-based line of the function holding 1-based `line` (0
    /// outside functions).
    fn function_start(&self, line: usize) -> usize {
        self.symbols
            .as_ref()
            .and_then(|s| s.enclosing(line))
            .filter(|d| d.is_callable())
            .map_or(0, |d| d.line - 1)
    }

    /// Whether `class` declares a method `name` itself (not inherited).
    fn declares(&self, class: &str, name: &str) -> bool {
        self.symbols.as_ref().is_some_and(|s| {
            s.definitions.iter().any(|d| {
                d.name == name
                    && d.parent
                        .and_then(|p| s.definitions.get(p))
                        .is_some_and(|p| p.name == class)
            })
        })
    }
}

/// Files read once per `find_references` call.
pub(super) struct Views<'a> {
    repo: &'a Repo,
    config: &'a Config,
    symbols: &'a SymbolCache,
    files: HashMap<String, FileView>,
    /// [`declared`]'s answers by class.
    declared: HashMap<String, Option<(String, Vec<String>)>>,
}

impl<'a> Views<'a> {
    pub(super) fn new(repo: &'a Repo, config: &'a Config, symbols: &'a SymbolCache) -> Self {
        Views {
            repo,
            config,
            symbols,
            files: HashMap::new(),
            declared: HashMap::new(),
        }
    }

    pub(super) fn get(&mut self, file: &str) -> &FileView {
        let (repo, config, symbols) = (self.repo, self.config, self.symbols);
        self.files
            .entry(file.to_string())
            .or_insert_with(|| FileView::read(repo, config, symbols, file))
    }

    fn search_php(&self, word: &str) -> Result<Vec<TextMatch>, TextSearchError> {
        let q = TextSearch {
            pattern: word.to_string(),
            literal: true,
            word: true,
            file_type: Some("php".to_string()),
            max_results: usize::MAX,
            ..Default::default()
        };
        Ok(text::search(self.repo, self.config, &q)?.matches)
    }
}

/// The PHP classes through which a call can run `class::name`, found from
/// their declarations (`extends`, `implements`, trait `use`) by word
/// searches for the class names.
#[derive(Debug, Default)]
pub(super) struct Family {
    class: String,
    /// FQCNs of the class: the one asked for, or every declaration of the
    /// short name when no namespace was given.
    class_fq: HashSet<String>,
    /// Short names and FQCNs of the class and its subclasses (users of a
    /// trait, implementers of an interface) that inherit `name`: a call on
    /// any of them runs it.
    runs: HashSet<String>,
    runs_fq: HashSet<String>,
    /// FQCNs of subclasses that declare `name` themselves: `parent::name()`
    /// in them runs the class's, a call on them does not.
    overriding_fq: HashSet<String>,
    /// Parent classes and interfaces (short names): a call on them may
    /// dispatch here.
    supertypes: HashSet<String>,
    /// The class's namespace(s): code there uses it without a `use` line.
    namespaces: HashSet<String>,
    /// Laravel facades whose docblock says `@see \…\Class` (`File` for
    /// `Filesystem`): `File::name()` runs the class's `name`.
    facades: HashSet<String>,
    /// Blade views of the class when it is a Livewire component: the views
    /// its file names (`view('livewire.notifications')`) and the one
    /// Livewire's convention gives it (`App\Livewire\Home\Feed` →
    /// `resources/views/livewire/home/feed.blade.php`); their `wire:click`,
    /// `wire:submit`, `wire:model`, … and `$wire.` calls reach its members.
    views: HashSet<String>,
    /// Lines that name the class as a route's controller without naming a
    /// method (`Route::resource`, an invokable `Route::get('/x', C::class)`),
    /// with their `->only(…)` / `->except(…)` continuation lines appended.
    route_lines: Vec<TextMatch>,
}

impl Family {
    /// The family of `class` (of `namespace` when given) for method `name`.
    ///
    /// # Errors
    /// The text search's (an unreadable repository).
    /// The class is declared in a PHP file of the repository (the one asked
    /// for, or one of the short name's).
    pub(super) fn declared(&self) -> bool {
        !self.class_fq.is_empty()
    }

    pub(super) fn find(
        views: &mut Views,
        class: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Family, TextSearchError> {
        let mut fam = Family {
            class: class.to_string(),
            ..Default::default()
        };
        fam.runs.insert(class.to_string());
        // Short name → the FQCNs of it that belong to the family.
        let mut known: HashMap<String, HashSet<String>> = HashMap::new();
        let mut down = vec![(class.to_string(), 0)];
        let mut up: Vec<(String, usize)> = Vec::new();
        let mut searched = HashSet::new();
        while let Some((c, depth)) = down.pop().or_else(|| up.pop()) {
            if !searched.insert(c.clone()) || searched.len() > MAX_FAMILY {
                continue;
            }
            let hits = views.search_php(&c)?;
            let root = c == fam.class;
            // Declarations of `c` first: the subclasses below are checked
            // against the FQCNs they give.
            let (decls, uses): (Vec<_>, Vec<_>) = hits
                .into_iter()
                .partition(|m| declaration(&m.content).is_some_and(|(d, _)| d == c));
            for m in decls {
                let Some((_, parents)) = declaration(&m.content) else {
                    continue;
                };
                let view = views.get(&m.file);
                let fq = view.declared_fqcn(&c);
                if root {
                    // `Settings\ProfileController` names the class of any
                    // namespace ending in `Settings`.
                    let named = |ns: &str| {
                        let written = format!("{}\\{c}", ns.trim_start_matches('\\'));
                        fq == written || fq.ends_with(&format!("\\{written}"))
                    };
                    if namespace.is_some_and(|ns| !named(ns)) {
                        continue;
                    }
                    fam.views.extend(livewire::views(&view.text, &fq, &parents));
                    fam.class_fq.insert(fq.clone());
                    fam.runs_fq.insert(fq.clone());
                    fam.namespaces.extend(view.namespace.clone());
                    known.entry(c.clone()).or_default().insert(fq);
                }
                if root || fam.supertypes.contains(&c) {
                    for p in parents {
                        if p != fam.class && fam.supertypes.insert(p.clone()) {
                            up.push((p, depth + 1));
                        }
                    }
                }
            }
            if fam.supertypes.contains(&c) && !root {
                continue;
            }
            let members = known.get(&c).cloned().unwrap_or_default();
            let ours = |view: &FileView, line: &str| {
                members.is_empty() || members.contains(&view.fqcn_of(&c, line))
            };
            for m in uses {
                let line = m.content.as_str();
                let sub = if let Some((defined, parents)) = declaration(line) {
                    parents.contains(&c).then_some(defined)
                } else if line.len() > line.trim_start().len()
                    && line.trim_start().starts_with("use ")
                {
                    // A trait used inside a class body.
                    views
                        .get(&m.file)
                        .class_at(m.line as usize)
                        .map(str::to_string)
                } else {
                    None
                };
                if let Some(sub) = sub.filter(|s| *s != c) {
                    let view = views.get(&m.file);
                    if !ours(view, line) {
                        continue;
                    }
                    let fq = view.declared_fqcn(&sub);
                    if view.declares(&sub, name) {
                        fam.overriding_fq.insert(fq);
                    } else {
                        fam.runs.insert(sub.clone());
                        fam.runs_fq.insert(fq.clone());
                        known.entry(sub.clone()).or_default().insert(fq);
                        if depth < MAX_DEPTH {
                            down.push((sub, depth + 1));
                        }
                    }
                    continue;
                }
                if !root {
                    continue;
                }
                // `use …\LambdaSongController as S3SongController;`: the
                // file's routes name the class by its alias.
                if let Some(alias) = line.strip_prefix("use ").and_then(|l| l.split_once(" as ")) {
                    let alias = alias.1.trim().trim_end_matches(';').trim();
                    let view = views.get(&m.file);
                    if !alias.is_empty() && ours(view, &view.fqcn_of(alias, "")) {
                        let named: Vec<TextMatch> = view
                            .text
                            .lines()
                            .enumerate()
                            .filter(|(_, l)| has_word_start(l, &format!("{alias}::class")))
                            .map(|(i, l)| TextMatch {
                                line: i as u64 + 1,
                                column: 1,
                                content: l.to_string(),
                                ..m.clone()
                            })
                            .collect();
                        for n in named {
                            fam.route_lines.push(with_continuation(&view.text, n));
                        }
                    }
                    continue;
                }
                if line.contains("@see") {
                    let view = views.get(&m.file);
                    let see = line.split("@see").nth(1).unwrap_or("").trim();
                    let points_here = members.is_empty()
                        || members
                            .contains(see.trim_start_matches('\\').trim_end_matches(['.', ' ']));
                    let facade = view.text.lines().find_map(|l| {
                        declaration(l).filter(|(_, parents)| parents.iter().any(|p| p == "Facade"))
                    });
                    if points_here {
                        fam.facades.extend(facade.map(|(f, _)| f));
                    }
                    continue;
                }
                let view = views.get(&m.file);
                // `TagController::class` names the family's class only where
                // the file's imports make it so (routes/web.php may import
                // another `TagController`); a string route is relative to
                // the routes' namespace.
                let names_class = (line.contains(&format!("{c}::class")) && ours(view, line))
                    || (line.contains("resource")
                        && (line.contains(&format!("\\{c}'")) || line.contains(&format!("'{c}'"))));
                if names_class {
                    fam.route_lines
                        .push(with_continuation(&view.text, m.clone()));
                }
            }
        }
        Ok(fam)
    }

    /// The FQCNs of the classes the family was asked for, sorted (several
    /// when a short name was given that classes of several namespaces
    /// share).
    pub(super) fn classes(&self) -> Vec<String> {
        let mut out: Vec<String> = self.class_fq.iter().cloned().collect();
        out.sort();
        out
    }

    /// Whether a controller written in a route string (`Common\Items`,
    /// relative to the routes' namespace) can be the class.
    fn fits(&self, written: &str) -> bool {
        self.class_fq.is_empty()
            || self
                .class_fq
                .iter()
                .any(|fq| fq == written || fq.ends_with(&format!("\\{written}")))
    }

    /// Whether the class `short`, as `view` names it on `line`, is one that
    /// runs the method: by FQCN when the file imports or qualifies it,
    /// else by the short name.
    /// An alias (`use …\ProfileController as ProfileSettingsController`)
    /// counts by the class it imports.
    fn runs_here(&self, view: &FileView, short: &str, line: &str) -> bool {
        let qualified = line.contains(&format!("\\{short}"));
        if view.imports_short(short).is_some() || qualified {
            return self.runs_fq.contains(&view.fqcn_of(short, line));
        }
        self.runs.contains(short)
    }

    /// The names `view` writes the family's classes under: their short
    /// names and the `use … as` aliases it gives any of them.
    fn names_in(&self, view: &FileView) -> Vec<String> {
        let aliases = view
            .imports
            .iter()
            .filter(|(alias, fq)| !self.runs.contains(*alias) && self.runs_fq.contains(*fq))
            .map(|(alias, _)| alias.clone());
        self.runs.iter().cloned().chain(aliases).collect()
    }

    /// How 1-based `line` of a PHP file uses `name` of the family's class,
    /// if it does: `route`, `facade`, `qualified`, `self`, `supertype`,
    /// `typed`, `named` or `imported` ([`super::Reference::resolution`]).
    pub(super) fn resolve(
        &self,
        views: &mut Views,
        file: &str,
        name: &str,
        line: usize,
    ) -> Option<&'static str> {
        let view = views.get(file);
        let text = view.text.lines().nth(line - 1)?.to_string();
        if self.views.contains(file) {
            return livewire::calls(&text, name).then_some("livewire");
        }
        let c = &self.class;
        let names = self.names_in(view);
        let spelt_route = |n: &String| {
            [
                format!("{n}::class, '{name}'"),
                format!("{n}::class, \"{name}\""),
                format!("{n}::class.'@{name}'"),
                format!("{n}::class . '@{name}'"),
            ]
            .iter()
            .any(|r| has_word_start(&text, r))
        };
        let routed = names
            .iter()
            .filter(|n| *n == c || !self.runs.contains(*n))
            .any(|n| spelt_route(n) && self.runs_here(view, n, &text));
        if routed {
            return Some("route");
        }
        if route_string(&text, c, name).is_some_and(|w| self.fits(&w)) {
            return Some("route");
        }
        if self
            .facades
            .iter()
            .any(|f| has_word_start(&text, &format!("{f}::{name}(")))
        {
            return Some("facade");
        }
        let statics = names
            .iter()
            .filter(|r| has_word_start(&text, &format!("{r}::{name}(")))
            .any(|r| self.runs_here(view, r, &text));
        if statics {
            return Some("qualified");
        }
        let here = view.class_at(line).map(str::to_string);
        let here_fq = here.as_deref().map(|h| view.declared_fqcn(h));
        let own = ["$this->", "self::", "static::"]
            .iter()
            .any(|p| text.contains(&format!("{p}{name}(")))
            || text.contains(&format!("[$this, '{name}']"));
        if let (Some(here), Some(here_fq)) = (&here, &here_fq) {
            if own && self.runs_fq.contains(here_fq) {
                return Some("self");
            }
            if own && self.supertypes.contains(here) {
                return Some("supertype");
            }
            if text.contains(&format!("parent::{name}("))
                && (self.overriding_fq.contains(here_fq) || self.runs_fq.contains(here_fq))
                && !self.class_fq.contains(here_fq)
            {
                return Some("self");
            }
        }
        let start = view.function_start(line);
        let calls: Vec<String> = receivers::member_calls(&text, name)
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut probable = false;
        for expr in calls {
            let view = views.get(file);
            let lines: Vec<&str> = view.text.lines().collect();
            let mut receiver = receivers::receiver(&lines, start, line - 1, &expr);
            if let (Receiver::Unknown, Some(prop), Some(here)) =
                (&receiver, expr.strip_prefix("$this->"), &here)
                && let Some(class) = inherited_property(views, file, here, prop)
            {
                receiver = Receiver::Class(class);
            }
            let view = views.get(file);
            match receiver {
                Receiver::Class(t) if self.runs_here(view, &t, "") => return Some("typed"),
                Receiver::Class(t) if self.supertypes.contains(&t) => return Some("supertype"),
                // A Blade view imports nothing and declares no types: a
                // variable named after the class (`$link->shortTitle()` for
                // `Link`, Laravel's naming of what a view is given) is the
                // class's object.
                Receiver::Unknown if file.ends_with(".blade.php") && self.named_after(&expr) => {
                    return Some("named");
                }
                Receiver::Unknown => {
                    probable |= !self.names_another_class(view, &expr, here_fq.as_deref());
                }
                Receiver::Class(_) | Receiver::This => {}
            }
        }
        let view = views.get(file);
        let visible = view.imports.values().any(|i| self.runs_fq.contains(i))
            || view.imports.keys().any(|i| self.supertypes.contains(i))
            || view
                .namespace
                .as_ref()
                .is_some_and(|n| self.namespaces.contains(n));
        (probable && visible).then_some("imported")
    }

    /// Whether `expr` is a plain variable named after a class of the family
    /// (`$link` for `Link`).
    fn named_after(&self, expr: &str) -> bool {
        expr.strip_prefix('$')
            .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .is_some_and(|v| self.runs.contains(&crate::util::upper_first(v)))
    }

    /// Whether an untyped receiver `expr` is, by Laravel's naming, not the
    /// family's class: `$comment` (or `$this->comment`) where the file
    /// imports a `Comment` outside the family, or a `$this->prop` inside
    /// the class itself (`$this->notification->markAsRead()` in
    /// `Notifications` calls the property's object, not the component:
    /// the class calls its own method as `$this->markAsRead()`).
    fn names_another_class(&self, view: &FileView, expr: &str, here_fq: Option<&str>) -> bool {
        let own_property = expr.starts_with("$this->")
            && here_fq.is_some_and(|h| self.class_fq.contains(h) || self.runs_fq.contains(h));
        let var = expr.rsplit(['>', '$']).next().unwrap_or("");
        let class = crate::util::upper_first(var);
        let other_import = view
            .imports_short(&class)
            .is_some_and(|fq| !self.runs_fq.contains(fq) && !self.runs.contains(&class));
        own_property || other_import
    }

    /// Route lines that run `name` without spelling it: a resource route's
    /// standard actions (`Route::resource` all seven, `apiResource` five,
    /// honouring `->only(…)` / `->except(…)`) and an invokable controller's
    /// `__invoke`.
    pub(super) fn routes(&self, name: &str) -> Vec<&TextMatch> {
        const RESOURCE: &[&str] = &[
            "index", "create", "store", "show", "edit", "update", "destroy",
        ];
        const API: &[&str] = &["index", "store", "show", "update", "destroy"];
        let quoted =
            |l: &str| l.contains(&format!("'{name}'")) || l.contains(&format!("\"{name}\""));
        self.route_lines
            .iter()
            .filter(|m| {
                let l = m.content.as_str();
                let resource = if l.contains("apiResource") {
                    API.contains(&name)
                } else {
                    l.contains("resource(") && RESOURCE.contains(&name)
                };
                let listed = if l.contains("->only(") {
                    quoted(l)
                } else {
                    !(l.contains("->except(") && quoted(l))
                };
                // A string controller (`'Modals\Items'`) must fit the
                // class's namespace when that is known.
                let fits = written_controller(l, &self.class).is_none_or(|w| self.fits(&w));
                if !fits {
                    return false;
                }
                // `[X::class, 'name']` names its method: not invokable.
                static ACTION: OnceLock<Regex> = OnceLock::new();
                let action = ACTION.get_or_init(|| {
                    Regex::new(r"\[\s*[\w\\]+::class\s*,").expect("a valid pattern")
                });
                let invokable = name == "__invoke"
                    && (l.contains("Route::") || l.contains("$router->"))
                    && !action.is_match(l);
                (resource && listed) || invokable
            })
            .collect()
    }
}

/// Where `class` is declared: the first file whose declaration line names
/// it, with its parents (short names).
fn declared(views: &mut Views, class: &str) -> Option<(String, Vec<String>)> {
    if let Some(hit) = views.declared.get(class) {
        return hit.clone();
    }
    let hit = views.search_php(class).ok().and_then(|hits| {
        hits.into_iter().find_map(|m| {
            declaration(&m.content)
                .filter(|(d, _)| d == class)
                .map(|(_, parents)| (m.file, parents))
        })
    });
    views.declared.insert(class.to_string(), hit.clone());
    hit
}

/// The class of `$this->prop` in class `here` of `file` when one of its
/// parent classes (up to [`MAX_DEPTH`] levels) declares the property
/// (`$this->files` of every generator command is declared in their parent).
fn inherited_property(views: &mut Views, file: &str, here: &str, prop: &str) -> Option<String> {
    let mut parents = views
        .get(file)
        .text
        .lines()
        .find_map(|l| declaration(l).filter(|(d, _)| d == here))
        .map(|(_, p)| p)?;
    for _ in 0..MAX_DEPTH {
        let parent = parents.first()?.clone();
        let (pfile, grand) = declared(views, &parent)?;
        let pv = views.get(&pfile);
        let lines: Vec<&str> = pv.text.lines().collect();
        if let Receiver::Class(c) = receivers::receiver(&lines, 0, 0, &format!("$this->{prop}")) {
            return Some(c);
        }
        parents = grand;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_strings_name_their_controller() {
        assert_eq!(
            route_string(
                "Route::get('x', 'Common\\Items@enable');",
                "Items",
                "enable"
            )
            .as_deref(),
            Some("Common\\Items")
        );
        assert_eq!(
            route_string("'Items@enable'", "Items", "enable").as_deref(),
            Some("Items")
        );
        assert_eq!(route_string("'OtherItems@enable'", "Items", "enable"), None);
        assert_eq!(
            written_controller("Route::resource('items', 'Modals\\Items');", "Items").as_deref(),
            Some("Modals\\Items")
        );
        assert!(has_word_start("[Items::class, 'x']", "Items::class"));
        assert!(!has_word_start("[ModalItems::class, 'x']", "Items::class"));
    }

    #[test]
    fn a_short_name_stands_for_its_import_or_the_files_namespace() {
        let view = FileView {
            text: String::new(),
            symbols: None,
            namespace: Some("App\\Reports".into()),
            imports: [
                ("Report".to_string(), "App\\Abstracts\\Report".to_string()),
                ("Models".to_string(), "App\\Models".to_string()),
            ]
            .into(),
        };
        assert_eq!(
            view.fqcn_of("Report", "class A extends Report"),
            "App\\Abstracts\\Report"
        );
        assert_eq!(view.fqcn_of("ProfitLoss", ""), "App\\Reports\\ProfitLoss");
        assert_eq!(
            view.fqcn_of("Page", "x(\\App\\Models\\Page $p)"),
            "App\\Models\\Page"
        );
        assert_eq!(
            view.fqcn_of("Page", "x(Models\\Page $p)"),
            "App\\Models\\Page"
        );
    }

    #[test]
    fn imports_are_read_with_aliases_and_groups() {
        let dir = tempfile::tempdir().unwrap();
        let php = "<?php\nnamespace App;\nuse App\\Models\\{User, Post as P};\nuse Foo\\Bar as Baz, \\Qux\\Quux;\n";
        std::fs::write(dir.path().join("a.php"), php).unwrap();
        let repo = Repo::open(dir.path()).unwrap();
        let view = FileView::read(&repo, &Config::default(), &SymbolCache::default(), "a.php");
        let get = |k: &str| view.imports.get(k).map(String::as_str);
        assert_eq!(get("User"), Some("App\\Models\\User"));
        assert_eq!(get("P"), Some("App\\Models\\Post"));
        assert_eq!(get("Baz"), Some("Foo\\Bar"));
        assert_eq!(get("Quux"), Some("Qux\\Quux"));
        assert_eq!(view.namespace.as_deref(), Some("App"));
    }
}
