//! The code graph: file → file edges resolved from every file's
//! [`FileFacts`] (imports, inheritance, class references, Laravel views,
//! components, Livewire, config and translation groups, route names, model
//! ↔ migration tables, JS/TS and Python imports, Vue templates to the
//! directives and components registered globally), and co-change history
//! mined from git ([`cochange`]). [`related`] ranks the files likely to
//! change with a set of files from both.
//!
//! Facts are derived per file by the sync (incremental with it: a changed
//! file re-derives its own); resolution is global and cheap (hash lookups
//! over the facts in `sync_state.json`), so it is redone when the facts
//! change, never stored.

pub mod cochange;
pub mod facts;
mod related;
mod resolve;
mod tests_for;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::classify::FileClass;
pub use facts::{FileFacts, Ref, RefKind};
pub use related::{
    CONVERGENT_MIN_FILES, Direction, Related, Site, Tie, best_first, convergent, counterparts,
    related, with_callers,
};
use resolve::{Resolver, Route};
pub use tests_for::tests_for;

/// What an edge stands for: a [`RefKind`] resolved to a file, or a table
/// shared by a model and a migration.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Import,
    Extends,
    Class,
    View,
    Component,
    Livewire,
    Config,
    Trans,
    Route,
    /// A model and a migration of the same table.
    Table,
    /// A model and the factory or policy Laravel finds for it by name
    /// ([`model_conventions`]).
    Convention,
    /// An event and its listener (a listener under `Listeners\` that names
    /// the event class), and a file that uses the event (dispatches it) to
    /// that listener.
    Listener,
    /// A call of a global function to the file that defines it
    /// ([`RefKind::Function`]).
    Call,
    /// A request (a script's `http.get(…)`, a view's `url(…)`) to the
    /// controller of the route it matches ([`RefKind::Url`] →
    /// [`facts::Endpoint`]).
    Endpoint,
    /// The create and edit forms of one thing, both ways
    /// ([`Graph::add_counterparts`]).
    Counterpart,
    /// A PHP class whose JSON a TypeScript type declares: an API resource
    /// or an Eloquent model and the `.ts` file declaring its type
    /// ([`Graph::add_shapes`]).
    Shape,
    /// A `Model::factory()` call to the model's factory
    /// ([`RefKind::Factory`]): a seeder or a test to the factories it uses.
    Factory,
    /// An Artisan command run by its name to the file defining it
    /// ([`RefKind::Command`]): a test, a schedule or another command to the
    /// command class.
    Command,
}

impl EdgeKind {
    fn of(kind: RefKind) -> EdgeKind {
        match kind {
            RefKind::Import => EdgeKind::Import,
            RefKind::Extends => EdgeKind::Extends,
            RefKind::Class => EdgeKind::Class,
            RefKind::View => EdgeKind::View,
            RefKind::Component | RefKind::Registers | RefKind::Global | RefKind::Unknown => {
                EdgeKind::Component
            }
            RefKind::Livewire => EdgeKind::Livewire,
            RefKind::Config => EdgeKind::Config,
            RefKind::Trans => EdgeKind::Trans,
            RefKind::RouteName => EdgeKind::Route,
            RefKind::Function => EdgeKind::Call,
            RefKind::Url => EdgeKind::Endpoint,
            RefKind::Factory => EdgeKind::Factory,
            RefKind::Command => EdgeKind::Command,
        }
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Import => "import",
            EdgeKind::Extends => "extends",
            EdgeKind::Class => "class",
            EdgeKind::View => "view",
            EdgeKind::Component => "component",
            EdgeKind::Livewire => "livewire",
            EdgeKind::Config => "config",
            EdgeKind::Trans => "trans",
            EdgeKind::Route => "route",
            EdgeKind::Table => "table",
            EdgeKind::Convention => "convention",
            EdgeKind::Listener => "listener",
            EdgeKind::Call => "call",
            EdgeKind::Endpoint => "endpoint",
            EdgeKind::Counterpart => "counterpart",
            EdgeKind::Shape => "shape",
            EdgeKind::Factory => "factory",
            EdgeKind::Command => "command",
        }
    }
}

/// One resolved edge, from the file that holds the reference.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// 1-based line of the reference in `from` (0 for table, convention
    /// and event ↔ listener edges).
    pub line: u32,
}

/// Edges by source and by target.
#[derive(Debug, Default)]
pub struct Graph {
    out: HashMap<String, Vec<Edge>>,
    inn: HashMap<String, Vec<Edge>>,
    edges: usize,
    /// Controller FQCN → the requests that reach one of its actions.
    requests: HashMap<String, Vec<ActionRequest>>,
    /// Every file of the working tree the graph was built from
    /// (repo-relative): what a reply may name.
    files: BTreeSet<String>,
    /// Test files by the name of what they test ([`tests_for::subject_key`]).
    tests_by_subject: HashMap<String, Vec<String>>,
    /// Blade views among `files`.
    views: usize,
    /// Class FQCN → the files that define it (the facts' `defines`).
    classes: HashMap<String, Vec<String>>,
    /// Every route with a controller, for requests a query names
    /// ([`Graph::url_files`]).
    endpoints: Vec<resolve::Route>,
}

/// A request ([`RefKind::Url`]) whose best routes all run one controller
/// action: the action and where the request is made.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ActionRequest {
    pub action: String,
    pub file: String,
    /// 1-based line of the request.
    pub line: u32,
}

/// Whether a FQCN is `class` (a FQCN, or a class name that ends one:
/// `SongController`, `API\SongController`; a leading `\\` ignored).
fn names_class(class: &str) -> impl Fn(&str) -> bool + '_ {
    let class = class.trim_start_matches('\\');
    let suffix = format!("\\{class}");
    move |fq: &str| fq == class || fq.ends_with(&suffix)
}

impl Graph {
    /// Resolves every file's facts against the repository's files (`files`:
    /// every walked file, repo-relative).
    pub fn build(facts: &BTreeMap<String, FileFacts>, files: &BTreeSet<String>) -> Graph {
        let mut r = Resolver::new(facts, files);
        r.vue_globals = r.vue_globals(facts);
        r.component_aliases = r.component_aliases(facts);
        let mut g = Graph {
            files: files.clone(),
            views: files.iter().filter(|f| f.ends_with(".blade.php")).count(),
            ..Graph::default()
        };
        g.tests_by_subject = tests_for::by_subject(files);
        for (file, f) in facts {
            for d in &f.defines {
                g.classes.entry(d.clone()).or_default().push(file.clone());
            }
        }
        for (from, f) in facts {
            for reference in &f.refs {
                // A request's routes give both its edges and its action.
                let targets = if reference.kind == RefKind::Url {
                    let routes = r.routes_matching(&reference.target);
                    g.add_request(&routes, from, reference);
                    r.controller_files(&routes)
                } else {
                    r.resolve(from, reference)
                };
                for to in targets {
                    if to != *from {
                        g.add(Edge {
                            from: from.clone(),
                            to,
                            kind: EdgeKind::of(reference.kind),
                            line: reference.line,
                        });
                    }
                }
            }
        }
        // Models and migrations of the same table, both ways.
        let mut by_table: HashMap<&str, Vec<&str>> = HashMap::new();
        for (file, f) in facts {
            for t in &f.tables {
                by_table.entry(t.as_str()).or_default().push(file.as_str());
            }
        }
        for members in by_table.values() {
            let (migrations, others): (Vec<&str>, Vec<&str>) =
                members.iter().partition(|f| is_migration(f));
            for m in &migrations {
                for o in &others {
                    g.add_both_ways(o, m, EdgeKind::Table);
                }
            }
        }
        g.add_model_conventions(facts, &r);
        g.add_named_after_models(facts, &r);
        g.add_listeners(facts, &r);
        g.add_counterparts(files);
        g.add_shapes(facts);
        for v in g.out.values_mut().chain(g.inn.values_mut()) {
            v.sort();
            v.dedup_by(|a, b| a.from == b.from && a.to == b.to && a.kind == b.kind);
        }
        g.endpoints = std::mem::take(&mut r.endpoints);
        g
    }

    /// Each Eloquent model (a file with a table that is not a migration)
    /// and the factory and policy classes Laravel resolves for it by name,
    /// both ways, unless a reference already ties the pair: koel's 13
    /// factories name no model (`$model` is optional since Laravel 8).
    fn add_model_conventions(&mut self, facts: &BTreeMap<String, FileFacts>, r: &Resolver) {
        for (file, model) in models(facts) {
            for fq in model_conventions(model) {
                for other in r.classes.get(fq.as_str()).into_iter().flatten() {
                    // A factory's `$model` or a policy's type hints
                    // already tie the pair.
                    let linked = |a: &str, b: &str| self.out(a).iter().any(|e| e.to == b);
                    if *other == file.as_str() || linked(other, file) || linked(file, other) {
                        continue;
                    }
                    self.add_both_ways(file, other, EdgeKind::Convention);
                }
            }
        }
    }

    /// Each Eloquent model and the classes named after it with the
    /// suffixes `artisan make:` and common layering give (`UserResource`,
    /// `UserObserver`, `UserRepository` for `User`: [`NAMED_AFTER_MODEL`]):
    /// one edge from the file to the model (a tie both ways would count
    /// twice and rank a `UserController` above the model's migrations),
    /// even when a reference ties them already: the model is a hub many
    /// files use, and these are the files about it.
    fn add_named_after_models(&mut self, facts: &BTreeMap<String, FileFacts>, r: &Resolver) {
        let mut by_short: HashMap<&str, Vec<&str>> = HashMap::new();
        for (fq, files) in &r.classes {
            let short = fq.rsplit('\\').next().unwrap_or(fq);
            by_short
                .entry(short)
                .or_default()
                .extend(files.iter().copied());
        }
        for (file, model) in models(facts) {
            let short = model.rsplit('\\').next().unwrap_or(model);
            for suffix in NAMED_AFTER_MODEL {
                for other in by_short
                    .get(format!("{short}{suffix}").as_str())
                    .into_iter()
                    .flatten()
                {
                    if *other != file.as_str() {
                        self.add(Edge {
                            from: (*other).to_string(),
                            to: file.clone(),
                            kind: EdgeKind::Convention,
                            line: 0,
                        });
                    }
                }
            }
        }
    }

    /// Events and their listeners: a listener (a class under a
    /// `Listeners` namespace) that names an event class (under `Events`)
    /// is tied to it both ways, and every other file that uses the event
    /// class in code (dispatches it, registers it) points at the listener,
    /// at the line of that use. Laravel's event discovery ties a listener
    /// to the event its `handle` method's parameter names; the class
    /// reference is how the facts see that parameter.
    fn add_listeners(&mut self, facts: &BTreeMap<String, FileFacts>, r: &Resolver) {
        let in_ns = |f: &FileFacts, ns: &str| f.defines.iter().any(|d| d.contains(ns));
        let mut listeners: HashMap<&str, Vec<&str>> = HashMap::new();
        for (file, f) in facts.iter().filter(|(_, f)| in_ns(f, "\\Listeners\\")) {
            for reference in f.refs.iter().filter(|x| x.kind == RefKind::Class) {
                for event in r
                    .classes
                    .get(reference.target.as_str())
                    .into_iter()
                    .flatten()
                {
                    if facts.get(*event).is_some_and(|e| in_ns(e, "\\Events\\")) {
                        listeners.entry(event).or_default().push(file.as_str());
                    }
                }
            }
        }
        for v in listeners.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        for (event, ls) in &listeners {
            for l in ls {
                self.add_both_ways(event, l, EdgeKind::Listener);
            }
        }
        let users: Vec<(String, String, u32)> = self
            .inn
            .iter()
            .filter_map(|(to, es)| listeners.get(to.as_str()).map(|ls| (es, ls)))
            .flat_map(|(es, ls)| {
                es.iter()
                    .filter(|e| e.kind == EdgeKind::Class && !ls.contains(&e.from.as_str()))
                    .flat_map(move |e| {
                        ls.iter()
                            .map(move |l| (e.from.clone(), l.to_string(), e.line))
                    })
            })
            .collect();
        for (from, to, line) in users {
            if from != to {
                self.add(Edge {
                    from,
                    to,
                    kind: EdgeKind::Listener,
                    line,
                });
            }
        }
    }

    /// The create and edit sides of one form, which a new field changes
    /// together: files of one directory and extension whose names differ
    /// only by one word, a [`CREATE_VERBS`] word on one side and an
    /// [`EDIT_VERBS`] word on the other, wherever it stands in the name
    /// ([`counterpart_key`]): `CreatePlaylistForm.vue` ↔ `EditPlaylistForm.vue`,
    /// `AddUserForm.vue` ↔ `EditUserForm.vue`, `StoreUserRequest.php` ↔
    /// `UpdateUserRequest.php`, koel's `PlaylistFolderStoreRequest.php` ↔
    /// `PlaylistFolderUpdateRequest.php`, Filament's `CreateProduct.php` ↔
    /// `EditProduct.php`, `create.blade.php` ↔ `edit.blade.php`; both ways.
    fn add_counterparts(&mut self, files: &BTreeSet<String>) {
        let mut sides: HashMap<(&str, &str, String), [Vec<&str>; 2]> = HashMap::new();
        for f in files {
            let (dir, name) = f.rsplit_once('/').unwrap_or(("", f));
            let Some((stem, ext)) = name.split_once('.') else {
                continue;
            };
            if let Some((side, key)) = counterpart_key(stem) {
                sides.entry((dir, ext, key)).or_default()[side].push(f.as_str());
            }
        }
        for [creates, edits] in sides.values() {
            for c in creates {
                for e in edits {
                    self.add_both_ways(c, e, EdgeKind::Counterpart);
                }
            }
        }
    }

    /// The TypeScript types of the application's JSON: each API resource
    /// (`App\Http\Resources\SongResource`) and each Eloquent model
    /// (`App\Models\Song`) to the `.ts` files that declare a type of
    /// that name (`interface Song` in koel's `types.d.ts`), which a new
    /// field changes too. One edge, from the PHP file.
    fn add_shapes(&mut self, facts: &BTreeMap<String, FileFacts>) {
        let mut declared: HashMap<&str, Vec<&str>> = HashMap::new();
        for (file, f) in facts {
            for t in &f.ts_types {
                declared.entry(t.as_str()).or_default().push(file.as_str());
            }
        }
        if declared.is_empty() {
            return;
        }
        let short = |fq: &str| fq.rsplit('\\').next().unwrap_or(fq).to_string();
        let mut pairs: Vec<(&str, String)> = models(facts)
            .map(|(file, model)| (file.as_str(), short(model)))
            .collect();
        for (file, f) in facts {
            for d in f.defines.iter().filter(|d| d.contains("\\Resources\\")) {
                if let Some(name) = short(d).strip_suffix("Resource").filter(|n| !n.is_empty()) {
                    pairs.push((file.as_str(), name.to_string()));
                }
            }
        }
        for (file, name) in pairs {
            for ts in declared.get(name.as_str()).into_iter().flatten() {
                self.add(Edge {
                    from: file.to_string(),
                    to: (*ts).to_string(),
                    kind: EdgeKind::Shape,
                    line: 0,
                });
            }
        }
    }

    /// Records `reference` (a [`RefKind::Url`] in `from`, matching `routes`)
    /// as a request of the one controller action those routes run; a
    /// request several actions may serve (`url('/books')`: `index` and
    /// `store`) is left out.
    fn add_request(&mut self, routes: &[&Route], from: &str, reference: &Ref) {
        let mut actions: Vec<(&str, &str)> = routes
            .iter()
            .filter_map(|route| Some((route.controller.as_str(), route.action.as_deref()?)))
            .collect();
        actions.sort_unstable();
        actions.dedup();
        if let [(controller, action)] = actions[..] {
            self.requests
                .entry(controller.to_string())
                .or_default()
                .push(ActionRequest {
                    action: action.to_string(),
                    file: from.to_string(),
                    line: reference.line,
                });
        }
    }

    /// The requests that reach `action` of `class` (a FQCN, or a class name
    /// that ends one: `SongController`, `API\SongController`), by file and
    /// line.
    pub fn requests_of(&self, class: &str, action: &str) -> Vec<&ActionRequest> {
        let named = names_class(class);
        let mut out: Vec<&ActionRequest> = self
            .requests
            .iter()
            .filter(|(fq, _)| named(fq))
            .flat_map(|(_, list)| list.iter().filter(|a| a.action == action))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The files that define `class` (a FQCN, or a class name that ends
    /// one, as for [`Graph::requests_of`]), in path order.
    pub fn class_files(&self, class: &str) -> Vec<&str> {
        let named = names_class(class);
        let mut out: Vec<&str> = self
            .classes
            .iter()
            .filter(|(fq, _)| named(fq))
            .flat_map(|(_, files)| files.iter().map(String::as_str))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// An edge each way between `a` and `b` with no line: a tie no single
    /// reference makes (a shared table, a naming convention, a listener).
    fn add_both_ways(&mut self, a: &str, b: &str, kind: EdgeKind) {
        for (from, to) in [(a, b), (b, a)] {
            self.add(Edge {
                from: from.to_string(),
                to: to.to_string(),
                kind,
                line: 0,
            });
        }
    }

    fn add(&mut self, e: Edge) {
        self.edges += 1;
        self.inn.entry(e.to.clone()).or_default().push(e.clone());
        self.out.entry(e.from.clone()).or_default().push(e);
    }

    /// Edges from `file`.
    pub fn out(&self, file: &str) -> &[Edge] {
        self.out.get(file).map_or(&[], Vec::as_slice)
    }

    /// Edges to `file`.
    pub fn inn(&self, file: &str) -> &[Edge] {
        self.inn.get(file).map_or(&[], Vec::as_slice)
    }

    /// Every file of the working tree the graph was built from
    /// (repo-relative), in path order.
    pub fn files(&self) -> impl Iterator<Item = &String> {
        self.files.iter()
    }

    /// True when `file` (repo-relative) is in the working tree the graph
    /// was built from: co-change history remembers deleted files.
    pub fn has_file(&self, file: &str) -> bool {
        self.files.contains(file)
    }

    /// True when `file` is included (a `view`, `component` or `livewire`
    /// edge) by more than a fifth of the repository's Blade views, and by
    /// [`HUB_MIN_VIEWS`] at least: a layout, an icon, a generic input that
    /// a change to one page rarely touches, and that `query`'s "also
    /// check" leaves out (bench/README.md § Change sets).
    pub fn is_view_hub(&self, file: &str) -> bool {
        let includers: BTreeSet<&str> = self
            .inn(file)
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EdgeKind::View | EdgeKind::Component | EdgeKind::Livewire
                ) && e.from.ends_with(".blade.php")
            })
            .map(|e| e.from.as_str())
            .collect();
        includers.len() >= HUB_MIN_VIEWS && includers.len() * 5 > self.views
    }

    /// Edges in all (before de-duplication).
    pub fn len(&self) -> usize {
        self.edges
    }

    /// True when no edge was resolved.
    pub fn is_empty(&self) -> bool {
        self.edges == 0
    }
}

/// Views that must include a file before [`Graph::is_view_hub`] calls it
/// a hub (in a repository of a dozen views a fifth is two).
const HUB_MIN_VIEWS: usize = 5;

/// The classes Laravel resolves for an Eloquent model by name, as
/// `Factory::resolveFactoryName` and `Gate::guessPolicyName` do
/// (laravel/framework's `Illuminate/Database/Eloquent/Factories/Factory.php`
/// and `Illuminate/Auth/Access/Gate.php`, read at 0d3fc77521): the
/// factory [`model_factory`]; the policy `P\Policies\{Name}Policy`
/// for every leading part `P` of the model's namespace, and for a model in
/// a sub-namespace of `Models` that namespace with `\Models\` replaced by
/// `\Policies\` or `\Models\Policies\`. Fully qualified names, no
/// leading backslash.
pub fn model_conventions(model: &str) -> Vec<String> {
    let (dir, short) = model.rsplit_once('\\').unwrap_or(("", model));
    let mut out = vec![model_factory(model)];
    let parts: Vec<&str> = dir.split('\\').filter(|p| !p.is_empty()).collect();
    for n in 1..=parts.len() {
        out.push(format!(
            "{}\\Policies\\{short}Policy",
            parts[..n].join("\\")
        ));
    }
    if dir.contains("\\Models\\") {
        for to in ["\\Policies\\", "\\Models\\Policies\\"] {
            out.push(format!("{}\\{short}Policy", dir.replace("\\Models\\", to)));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The factory class Laravel resolves for an Eloquent model by name
/// (`Factory::resolveFactoryName`, see [`model_conventions`]): the name
/// after the application's namespace and then `Models\`, under
/// `Database\Factories\`. The application's namespace is taken to be the
/// model's first segment (`App\`; BookStack's `BookStack\`):
/// `App\Models\Shop\Product` → `Database\Factories\Shop\ProductFactory`,
/// `App\User` → `Database\Factories\UserFactory`,
/// `BookStack\Entities\Models\Page` →
/// `Database\Factories\Entities\Models\PageFactory`. A model that names
/// its own factory (`newFactory()`, `#[UseFactory]`) is not followed.
pub fn model_factory(model: &str) -> String {
    let rest = model.split_once('\\').map_or(model, |(_, rest)| rest);
    let rest = rest.strip_prefix("Models\\").unwrap_or(rest);
    format!("Database\\Factories\\{rest}Factory")
}

/// The files a resolver map holds for `key`, owned (none when absent).
fn files_of<K>(map: &HashMap<K, Vec<&str>>, key: &str) -> Vec<String>
where
    K: std::borrow::Borrow<str> + std::hash::Hash + Eq,
{
    map.get(key)
        .map(|v| v.iter().map(|s| (*s).to_string()).collect())
        .unwrap_or_default()
}

/// Each Eloquent model class with its file: the classes a file with a
/// table that is not a migration defines.
fn models(facts: &BTreeMap<String, FileFacts>) -> impl Iterator<Item = (&String, &String)> {
    facts
        .iter()
        .filter(|(file, f)| !f.tables.is_empty() && !is_migration(file))
        .flat_map(|(file, f)| f.defines.iter().map(move |model| (file, model)))
}

/// Whether a repo-relative path is a Laravel migration (under a
/// `migrations/` directory).
pub(crate) fn is_migration(path: &str) -> bool {
    path.contains("migrations/")
}

/// `a/./b/../c` → `a/c`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// `admin.user-table` → `Admin\UserTable`.
fn studly_path(name: &str) -> String {
    name.split('.')
        .map(crate::util::studly)
        .collect::<Vec<_>>()
        .join("\\")
}

/// Words that name a create form ([`Graph::add_counterparts`]).
const CREATE_VERBS: &[&str] = &["Create", "Add", "New", "Store"];
/// Words that name an edit form.
const EDIT_VERBS: &[&str] = &["Edit", "Update"];

/// A file name's side (0 create, 1 edit) and its words with the verb
/// replaced by `*` (`PlaylistFolderStoreRequest` → (0, `playlist folder *
/// request`)): words as [`crate::util::split_identifier`] splits them, the
/// first that is a create or edit verb counts. `None` when none is one
/// (`Address` is not `Add`).
fn counterpart_key(stem: &str) -> Option<(usize, String)> {
    let words = crate::util::split_identifier(stem);
    let mut words: Vec<&str> = words.split(' ').collect();
    let (at, side) = words.iter().enumerate().find_map(|(i, w)| {
        [CREATE_VERBS, EDIT_VERBS]
            .iter()
            .position(|verbs| verbs.iter().any(|v| v.eq_ignore_ascii_case(w)))
            .map(|side| (i, side))
    })?;
    words[at] = "*";
    Some((side, words.join(" ")))
}

/// Class-name suffixes of the files about a model ([`Graph::add_named_after_models`]):
/// the `artisan make:` defaults (resource, collection, observer, seeder,
/// controller, request) and the repository/service layering of Laravel
/// applications.
const NAMED_AFTER_MODEL: &[&str] = &[
    "Resource",
    "Collection",
    "ResourceCollection",
    "Observer",
    "Seeder",
    "Controller",
    "Repository",
    "Service",
];

#[cfg(test)]
mod tests;
