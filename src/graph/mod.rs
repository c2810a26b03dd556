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

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::classify::FileClass;
pub use facts::{FileFacts, Ref, RefKind};

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

impl Edge {
    /// Where the reference is: `file:line`, or the file alone for a table,
    /// convention or event ↔ listener edge (a model and a migration name
    /// the same table, a model and its factory are tied by name, a
    /// listener's whole class is the tie; no line is the reference).
    fn site(&self) -> String {
        if self.line == 0 {
            self.from.clone()
        } else {
            format!("{}:{}", self.from, self.line)
        }
    }
}

/// Edges by source and by target.
#[derive(Debug, Default)]
pub struct Graph {
    out: HashMap<String, Vec<Edge>>,
    inn: HashMap<String, Vec<Edge>>,
    edges: usize,
    /// Controller FQCN → the requests that reach one of its actions.
    requests: HashMap<String, Vec<ActionRequest>>,
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

impl Graph {
    /// Resolves every file's facts against the repository's files (`files`:
    /// every walked file, repo-relative).
    pub fn build(facts: &BTreeMap<String, FileFacts>, files: &BTreeSet<String>) -> Graph {
        let mut r = Resolver::new(facts, files);
        r.vue_globals = r.vue_globals(facts);
        let mut g = Graph::default();
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
            .filter_map(|route| Some((route.controller, route.action?)))
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
        let class = class.trim_start_matches('\\');
        let suffix = format!("\\{class}");
        let mut out: Vec<&ActionRequest> = self
            .requests
            .iter()
            .filter(|(fq, _)| fq.as_str() == class || fq.ends_with(&suffix))
            .flat_map(|(_, list)| list.iter().filter(|a| a.action == action))
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

    /// Edges in all (before de-duplication).
    pub fn len(&self) -> usize {
        self.edges
    }

    /// True when no edge was resolved.
    pub fn is_empty(&self) -> bool {
        self.edges == 0
    }
}

/// A route with a controller, as the resolver matches requests to it
/// ([`facts::Endpoint`] with its URI split into segments).
struct Route<'a> {
    method: &'a str,
    segments: Vec<&'a str>,
    controller: &'a str,
    action: Option<&'a str>,
}

/// Finds the files a reference points at.
struct Resolver<'a> {
    files: &'a BTreeSet<String>,
    /// FQCN → defining files.
    classes: HashMap<&'a str, Vec<&'a str>>,
    /// Route name → files defining it.
    routes: HashMap<&'a str, Vec<&'a str>>,
    /// Lowercase file stem → config files (`config/app.php`, `app/Config/app.php`).
    configs: HashMap<String, Vec<&'a str>>,
    /// Translation group (`auth` of `__('auth.failed')`) → the indexed
    /// files of it (`lang/en/auth.php`, `resources/lang/ja/auth.php`): the
    /// application's own locales, since other locales are `l10n` and not
    /// indexed (`Config::index_locales`).
    translations: HashMap<&'a str, Vec<&'a str>>,
    /// Roots of `@/` aliases found by a file-name suffix (see `script`), tried
    /// before the next scan.
    alias_roots: std::cell::RefCell<Vec<String>>,
    /// Vue globally registered names (`v-koel-focus`, `icon-layers`) → the
    /// registered files ([`RefKind::Registers`]).
    vue_globals: HashMap<String, Vec<String>>,
    /// Global function name (lower-case) → the files that define it.
    functions: HashMap<&'a str, Vec<&'a str>>,
    /// Every route with a controller.
    endpoints: Vec<Route<'a>>,
    /// Route name → controller FQCNs.
    route_controllers: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> Resolver<'a> {
    fn new(facts: &'a BTreeMap<String, FileFacts>, files: &'a BTreeSet<String>) -> Resolver<'a> {
        let mut classes: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut routes: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut translations: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut functions: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut endpoints = Vec::new();
        let mut route_controllers: HashMap<&str, Vec<&str>> = HashMap::new();
        for (file, f) in facts {
            for e in &f.endpoints {
                endpoints.push(Route {
                    method: e.method.as_str(),
                    segments: e.uri.split('/').filter(|s| !s.is_empty()).collect(),
                    controller: e.controller.as_str(),
                    action: e.action.as_deref(),
                });
                if let Some(name) = &e.name {
                    route_controllers
                        .entry(name.as_str())
                        .or_default()
                        .push(e.controller.as_str());
                }
            }
            let in_lang = file
                .strip_prefix("lang/")
                .or_else(|| file.strip_prefix("resources/lang/"));
            if let Some((_, group)) = in_lang.and_then(|r| r.split_once('/'))
                && let Some(group) = group.strip_suffix(".php")
            {
                translations.entry(group).or_default().push(file.as_str());
            }
            for d in &f.defines {
                classes.entry(d.as_str()).or_default().push(file.as_str());
            }
            for n in &f.route_names {
                routes.entry(n.as_str()).or_default().push(file.as_str());
            }
            for n in &f.functions {
                functions.entry(n.as_str()).or_default().push(file.as_str());
            }
        }
        let mut configs: HashMap<String, Vec<&str>> = HashMap::new();
        for f in files {
            let lower = f.to_ascii_lowercase();
            let Some(stem) = lower.strip_suffix(".php") else {
                continue;
            };
            let (dir, name) = stem.rsplit_once('/').unwrap_or(("", stem));
            if dir == "config" || dir.ends_with("/config") {
                configs
                    .entry(name.to_string())
                    .or_default()
                    .push(f.as_str());
            }
        }
        Resolver {
            files,
            classes,
            routes,
            configs,
            translations,
            alias_roots: std::cell::RefCell::new(Vec::new()),
            vue_globals: HashMap::new(),
            functions,
            endpoints,
            route_controllers,
        }
    }

    /// The files of every Vue global registration, by the name templates
    /// use.
    fn vue_globals(&self, facts: &BTreeMap<String, FileFacts>) -> HashMap<String, Vec<String>> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        for (from, f) in facts {
            for r in f.refs.iter().filter(|r| r.kind == RefKind::Registers) {
                if let Some((name, path)) = r.target.split_once(' ') {
                    out.entry(name.to_string())
                        .or_default()
                        .extend(self.script(from, path));
                }
            }
        }
        out
    }

    fn existing(&self, candidates: impl IntoIterator<Item = String>) -> Vec<String> {
        candidates
            .into_iter()
            .find(|c| self.files.contains(c))
            .into_iter()
            .collect()
    }

    fn resolve(&self, from: &str, r: &Ref) -> Vec<String> {
        let t = r.target.as_str();
        match r.kind {
            RefKind::Import if from.ends_with(".py") => self.python(from, t),
            RefKind::Import if !from.ends_with(".php") => self.script(from, t),
            RefKind::Import | RefKind::Extends | RefKind::Class => files_of(&self.classes, t),
            RefKind::View => {
                if t.contains("::") {
                    return Vec::new();
                }
                let path = t.replace('.', "/");
                let mut c = vec![
                    format!("resources/views/{path}.blade.php"),
                    format!("resources/views/{path}.php"),
                    format!("resources/views/{path}/index.blade.php"),
                ];
                // Inertia pages: `Inertia::render('Users/Show')`.
                for ext in ["vue", "jsx", "tsx", "js", "svelte"] {
                    c.push(format!("resources/js/Pages/{t}.{ext}"));
                    c.push(format!("resources/js/pages/{t}.{ext}"));
                }
                self.existing(c)
            }
            RefKind::Registers | RefKind::Unknown => Vec::new(),
            RefKind::Global => self.vue_globals.get(t).cloned().unwrap_or_default(),
            RefKind::Component => {
                let name = t.split("::").last().unwrap_or(t);
                let path = name.replace('.', "/");
                let mut out = self.existing([
                    format!("resources/views/components/{path}.blade.php"),
                    format!("resources/views/components/{path}/index.blade.php"),
                ]);
                let class = format!("App\\View\\Components\\{}", studly_path(name));
                out.extend(
                    self.classes
                        .get(class.as_str())
                        .into_iter()
                        .flatten()
                        .map(|s| (*s).to_string()),
                );
                out
            }
            RefKind::Livewire => {
                let class = studly_path(t);
                let mut out: Vec<String> = [
                    format!("App\\Livewire\\{class}"),
                    format!("App\\Http\\Livewire\\{class}"),
                ]
                .iter()
                .flat_map(|c| self.classes.get(c.as_str()).into_iter().flatten())
                .map(|s| (*s).to_string())
                .collect();
                out.extend(self.existing([format!(
                    "resources/views/livewire/{}.blade.php",
                    t.replace('.', "/")
                )]));
                out
            }
            RefKind::Config => files_of(&self.configs, &t.to_ascii_lowercase()),
            RefKind::Trans => files_of(&self.translations, t),
            RefKind::RouteName => {
                // The files defining the name and the controller it routes to.
                let mut out = files_of(&self.routes, t);
                for c in self.route_controllers.get(t).into_iter().flatten() {
                    out.extend(files_of(&self.classes, c));
                }
                out.sort();
                out.dedup();
                out
            }
            RefKind::Function => files_of(&self.functions, t),
            RefKind::Url => self.controller_files(&self.routes_matching(t)),
        }
    }

    /// The files of the controllers `routes` run.
    fn controller_files(&self, routes: &[&Route]) -> Vec<String> {
        let mut out: Vec<String> = routes
            .iter()
            .flat_map(|r| files_of(&self.classes, r.controller))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The routes a request (`METHOD path`, [`RefKind::Url`]) matches best.
    /// Paths match by their ends, since neither the client's base URL nor
    /// the routes' group prefixes are followed: segment by segment from the
    /// last, a `{}` on either side matches any one segment, at least one
    /// literal segment must be equal, and the part of the longer path left
    /// over must hold no `{}` (a literal prefix such as `api`). Best: most
    /// equal literal segments, then fewest `{}` matched against a literal,
    /// then the closest lengths; every route that ties is kept. Methods must
    /// agree unless either is `*`.
    fn routes_matching(&self, target: &str) -> Vec<&Route<'a>> {
        let Some((method, path)) = target.split_once(' ') else {
            return Vec::new();
        };
        let request: Vec<&str> = path.split('/').collect();
        let mut best: Option<(i32, i32, i32)> = None;
        let mut routes: Vec<&Route<'a>> = Vec::new();
        for r in &self.endpoints {
            let (m, route) = (r.method, &r.segments);
            if method != "*" && m != "*" && m != method {
                continue;
            }
            let n = request.len().min(route.len());
            let (rest, ours) = if request.len() > route.len() {
                (&request[..request.len() - n], &route[..])
            } else {
                (&route[..route.len() - n], &route[route.len() - n..])
            };
            if n == 0 || rest.contains(&"{}") {
                continue;
            }
            let theirs = &request[request.len() - n..];
            let (mut equal, mut wild) = (0, 0);
            let fits = theirs.iter().zip(ours).all(|(a, b)| {
                if *a == "{}" || *b == "{}" {
                    wild += i32::from(*a != *b);
                    true
                } else {
                    equal += 1;
                    a == b
                }
            });
            if !fits || equal == 0 {
                continue;
            }
            let key = (equal, -wild, -(rest.len() as i32));
            match best {
                Some(b) if b > key => continue,
                Some(b) if b == key => {}
                _ => routes.clear(),
            }
            best = Some(key);
            routes.push(r);
        }
        routes
    }

    /// A JS/TS import: relative to the file, or `@/` / `~/` from the
    /// usual source roots (Laravel's `resources/js`, before 5.7
    /// `resources/assets/js`, …); with the usual extensions and `index`
    /// files. An alias whose root is none of those (a `tsconfig.json`
    /// `paths` entry of its own) resolves when exactly one file in the
    /// repository ends with the imported path; its root is then tried first
    /// for the next imports, so the repository is scanned about once per
    /// alias.
    fn script(&self, from: &str, target: &str) -> Vec<String> {
        let dir = from.rsplit_once('/').map_or("", |(d, _)| d);
        let alias = target.strip_prefix("@/").or(target.strip_prefix("~/"));
        let bases: Vec<String> = if let Some(rest) = alias {
            [
                "resources/js",
                "resources/ts",
                "resources/assets/js",
                "resources/assets/ts",
                "src",
                "assets/js",
                "app/javascript",
            ]
            .iter()
            .map(|r| (*r).to_string())
            .chain(self.alias_roots.borrow().iter().cloned())
            .map(|r| format!("{r}/{rest}"))
            .collect()
        } else if target.starts_with('.') {
            vec![normalize(&format!("{dir}/{target}"))]
        } else {
            vec![target.trim_start_matches('/').to_string()]
        };
        let found = bases
            .iter()
            .flat_map(|b| script_candidates(b))
            .find(|c| self.files.contains(c));
        if let (None, Some(rest)) = (&found, alias) {
            let suffixes: Vec<String> = script_candidates(rest)
                .into_iter()
                .map(|c| format!("/{c}"))
                .collect();
            let mut hits = self.files.iter().filter_map(|f| {
                suffixes
                    .iter()
                    .find(|s| f.ends_with(s.as_str()))
                    .map(|s| (f, &f[..f.len() - s.len()]))
            });
            return match (hits.next(), hits.next()) {
                (Some((one, root)), None) => {
                    self.alias_roots.borrow_mut().push(root.to_string());
                    vec![one.clone()]
                }
                _ => Vec::new(),
            };
        }
        found.into_iter().collect()
    }

    /// A Python import: `pkg.mod`, `pkg:name` (`from pkg import name`: a
    /// submodule or a name in `pkg`), relative (`.mod`) from the file's
    /// package; from the root or `src/`.
    fn python(&self, from: &str, target: &str) -> Vec<String> {
        let (module, name) = match target.split_once(':') {
            Some((m, n)) => (m, Some(n)),
            None => (target, None),
        };
        let dots = module.len() - module.trim_start_matches('.').len();
        let rest = module.trim_start_matches('.').replace('.', "/");
        let roots: Vec<String> = if dots > 0 {
            let mut dir: Vec<&str> = from.split('/').collect();
            dir.pop();
            for _ in 1..dots {
                dir.pop();
            }
            vec![dir.join("/")]
        } else {
            vec![String::new(), "src".to_string()]
        };
        let mut out = Vec::new();
        for root in roots {
            let base = [root.as_str(), rest.as_str()]
                .iter()
                .filter(|s| !s.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("/");
            let mut c = Vec::new();
            if let Some(n) = name {
                let sub = if base.is_empty() {
                    n.to_string()
                } else {
                    format!("{base}/{n}")
                };
                c.push(format!("{sub}.py"));
                c.push(format!("{sub}/__init__.py"));
            }
            if !base.is_empty() {
                c.push(format!("{base}.py"));
                c.push(format!("{base}/__init__.py"));
            }
            out.extend(self.existing(c));
            if !out.is_empty() {
                break;
            }
        }
        out
    }
}

/// The classes Laravel resolves for an Eloquent model by name, as
/// `Factory::resolveFactoryName` and `Gate::guessPolicyName` do
/// (laravel/framework's `Illuminate/Database/Eloquent/Factories/Factory.php`
/// and `Illuminate/Auth/Access/Gate.php`, read at 0d3fc77521): the
/// factory `Database\Factories\` + the model's name after `App\Models\`
/// (or after `App\`) + `Factory`; the policy `P\Policies\{Name}Policy`
/// for every leading part `P` of the model's namespace, and for a model in
/// a sub-namespace of `Models` that namespace with `\Models\` replaced by
/// `\Policies\` or `\Models\Policies\`. Fully qualified names, no
/// leading backslash.
pub fn model_conventions(model: &str) -> Vec<String> {
    let rest = model
        .strip_prefix("App\\Models\\")
        .or_else(|| model.strip_prefix("App\\"))
        .unwrap_or(model);
    let (dir, short) = model.rsplit_once('\\').unwrap_or(("", model));
    let mut out = vec![format!("Database\\Factories\\{rest}Factory")];
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
fn is_migration(path: &str) -> bool {
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
        .map(|seg| {
            seg.split(['-', '_'])
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect::<String>())
                        .unwrap_or_default()
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\\")
}

/// One file related to the seeds, with why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Related {
    pub file: String,
    /// The file's class by its path (source, test, config, …).
    pub class: FileClass,
    /// Higher is closer: `edge_score` plus co-change confidence (weighted),
    /// times a class factor (source first).
    #[serde(serialize_with = "crate::util::round4")]
    pub score: f32,
    /// The edges' part: their weights summed (a hub counts less).
    #[serde(serialize_with = "crate::util::round4")]
    pub edge_score: f32,
    /// Edges that connect it to a seed: `view ← app/Http/Controllers/X.php:18`.
    pub edges: Vec<String>,
    /// Co-change confidence P(file changes | a seed changes), 0-1, with the
    /// decayed count of commits that changed both.
    pub cochange: Option<f32>,
    pub cochange_commits: Option<f32>,
}

/// The files a JS/TS import of `base` may name: as written, with the usual
/// extensions, or the directory's `index` file.
fn script_candidates(base: &str) -> Vec<String> {
    const EXTS: [&str; 8] = ["", ".js", ".ts", ".tsx", ".jsx", ".vue", ".mjs", ".svelte"];
    EXTS.iter()
        .map(|e| format!("{base}{e}"))
        .chain(["index.js", "index.ts", "index.tsx", "index.jsx"].map(|i| format!("{base}/{i}")))
        .collect()
}

/// Weight of an edge kind when ranking related files: Laravel's
/// conventions and inheritance say "changes together" more often than a
/// mention of a class in code does (from the change-set development sets,
/// bench/changeset.py).
fn kind_weight(kind: EdgeKind) -> f32 {
    match kind {
        EdgeKind::View | EdgeKind::Component | EdgeKind::Livewire => 1.0,
        EdgeKind::Table | EdgeKind::Convention | EdgeKind::Counterpart => 1.0,
        EdgeKind::Listener => 0.8,
        EdgeKind::Extends => 0.8,
        EdgeKind::Route | EdgeKind::Config | EdgeKind::Trans => 0.7,
        EdgeKind::Import => 0.6,
        // Chosen, not fitted (stop 38): no development set has enough
        // commits that change a requester with its controller, or a
        // resource with its type, to fit them (bench/README.md § Change sets).
        EdgeKind::Endpoint | EdgeKind::Shape => 0.8,
        EdgeKind::Class | EdgeKind::Call => 0.5,
    }
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

/// Children of one parent beyond which siblings are not related files.
const MAX_SIBLINGS: usize = 20;
/// A sibling's weight before damping: half an `extends` edge (0.8).
const SIBLING_WEIGHT: f32 = 0.4;

/// Tests, docs and the like change with code too, but the files a change
/// needs are source first (as `query`'s class prior says).
fn class_factor(class: FileClass) -> f32 {
    match class {
        FileClass::Source | FileClass::Config => 1.0,
        FileClass::Test => 0.6,
        _ => 0.4,
    }
}

/// Co-change confidence counts this much against one edge of weight 1. At
/// 1.0 / 2.0 / 3.0 the change-set development sets (bench/README.md §
/// Change sets) found all files of koel 0.226 / 0.226 / 0.214 of its
/// multi-file commits and of filamentphp/demo 0.375 / 0.425 / 0.425.
const COCHANGE_WEIGHT: f32 = 2.0;

/// Files likely to change with `seeds`, best first, each with its reasons:
/// graph neighbours one hop away in either direction (a hub, a file with
/// many edges, counts less) and co-change partners. Seeds are left out.
pub fn related(
    graph: &Graph,
    history: Option<&cochange::CoChange>,
    seeds: &[String],
    limit: usize,
) -> Vec<Related> {
    let seed_set: BTreeSet<&str> = seeds.iter().map(String::as_str).collect();
    let mut acc: BTreeMap<String, Related> = BTreeMap::new();
    fn entry<'m>(
        acc: &'m mut BTreeMap<String, Related>,
        seeds: &BTreeSet<&str>,
        file: &str,
    ) -> Option<&'m mut Related> {
        if seeds.contains(file) {
            return None;
        }
        Some(
            acc.entry(file.to_string())
                .or_insert_with(|| Related::new(file)),
        )
    }
    for seed in seeds {
        for e in graph.out(seed) {
            // A file most of the repository points at says little.
            let fan = graph.inn(&e.to).len() as f32;
            let w = kind_weight(e.kind) / (1.0 + (fan / 10.0).ln_1p());
            if let Some(r) = entry(&mut acc, &seed_set, &e.to) {
                r.score += w;
                r.edge_score += w;
                r.edges.push(format!("{} → {}", e.kind.name(), e.site()));
            }
        }
        for e in graph.inn(seed) {
            let fan = graph.out(&e.from).len() as f32;
            let w = kind_weight(e.kind) / (1.0 + (fan / 20.0).ln_1p());
            // A tie both ways with no line (a shared table, counterparts)
            // counts both ways but is said once, by the out-edge: its site
            // names the seed, this one's would repeat the file.
            let both_ways = e.line == 0
                && graph
                    .out(seed)
                    .iter()
                    .any(|o| o.to == e.from && o.kind == e.kind && o.line == 0);
            if let Some(r) = entry(&mut acc, &seed_set, &e.from) {
                r.score += w;
                r.edge_score += w;
                if !both_ways {
                    r.edges.push(format!("{} ← {}", e.kind.name(), e.site()));
                }
            }
        }
        // Siblings: other implementations of the seed's parent class,
        // interface or trait (storage drivers, strategies), which a change
        // to the contract touches together. A parent with many children
        // (every controller's `Controller`) says nothing and is skipped.
        for up in graph
            .out(seed)
            .iter()
            .filter(|e| e.kind == EdgeKind::Extends)
        {
            let children: Vec<&Edge> = graph
                .inn(&up.to)
                .iter()
                .filter(|e| e.kind == EdgeKind::Extends && e.from != *seed)
                .collect();
            if children.len() > MAX_SIBLINGS {
                continue;
            }
            let w = SIBLING_WEIGHT / (1.0 + (children.len() as f32 / 5.0).ln_1p());
            for e in children {
                if let Some(r) = entry(&mut acc, &seed_set, &e.from) {
                    r.score += w;
                    r.edge_score += w;
                    r.edges.push(format!("sibling ({}) ← {}", up.to, e.site()));
                }
            }
        }
        if let Some(h) = history {
            for (partner, conf, commits) in h.partners(seed, 20) {
                if let Some(r) = entry(&mut acc, &seed_set, &partner) {
                    r.score += COCHANGE_WEIGHT * conf;
                    r.cochange = Some(r.cochange.map_or(conf, |c| c.max(conf)));
                    r.cochange_commits =
                        Some(r.cochange_commits.map_or(commits, |c| c.max(commits)));
                }
            }
        }
    }
    let mut out: Vec<Related> = acc.into_values().collect();
    for r in &mut out {
        r.score *= class_factor(r.class);
        r.edges.sort();
        r.edges.dedup();
        r.edges.truncate(4);
    }
    best_first(&mut out, limit);
    out
}

/// The counterparts ([`EdgeKind::Counterpart`]) of `files` that are not
/// among them, each scored as one such edge (times its class factor) with
/// its `counterpart → file` reason (as [`related`] gives it), best first.
pub fn counterparts(graph: &Graph, files: &[String]) -> Vec<Related> {
    let mut out: Vec<Related> = Vec::new();
    for f in files {
        for e in graph
            .out(f)
            .iter()
            .filter(|e| e.kind == EdgeKind::Counterpart)
        {
            if files.contains(&e.to) || out.iter().any(|r| r.file == e.to) {
                continue;
            }
            let mut r = Related::new(&e.to);
            r.edge_score = kind_weight(e.kind);
            r.score = r.edge_score * class_factor(r.class);
            r.edges.push(format!("{} → {}", e.kind.name(), e.site()));
            out.push(r);
        }
    }
    best_first(&mut out, usize::MAX);
    out
}

impl Related {
    /// A file with no reason yet (score 0), classed by its path.
    fn new(file: &str) -> Related {
        Related {
            file: file.to_string(),
            class: crate::classify::classify_path(file).class,
            score: 0.0,
            edge_score: 0.0,
            edges: Vec::new(),
            cochange: None,
            cochange_commits: None,
        }
    }
}

/// Sorts by score, best first (ties by path), and keeps `limit`.
fn best_first(related: &mut Vec<Related>, limit: usize) {
    related.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.file.cmp(&b.file))
    });
    related.truncate(limit);
}

/// A caller's weight: a file that calls a changed method changes with it
/// as often as a view does with its controller (weight 1.0). Chosen, not
/// fitted: the change-set benchmark asks `related_files` about files, not
/// methods, so no set measures it yet.
const CALLER_WEIGHT: f32 = 1.0;

/// `related` (best first, `limit` long) with the files holding `callers`
/// (repo-relative file and 1-based line of each call, as `find_references`
/// resolved them to the seed method) added or raised, each with a
/// `call ← file:line` reason. Seeds are left out.
pub fn with_callers(
    mut related: Vec<Related>,
    callers: &[(String, u64)],
    seeds: &[String],
    limit: usize,
) -> Vec<Related> {
    let mut seen = BTreeSet::new();
    for (file, line) in callers {
        if seeds.contains(file) || !seen.insert(file.as_str()) {
            continue;
        }
        let at = related
            .iter()
            .position(|r| &r.file == file)
            .unwrap_or_else(|| {
                related.push(Related::new(file));
                related.len() - 1
            });
        let r = &mut related[at];
        let w = CALLER_WEIGHT * class_factor(r.class);
        r.score += w;
        r.edge_score += w;
        r.edges.insert(0, format!("call ← {file}:{line}"));
        r.edges.truncate(4);
    }
    best_first(&mut related, limit);
    related
}

#[cfg(test)]
mod tests;
