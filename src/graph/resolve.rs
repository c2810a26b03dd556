//! Resolution: what a [`Ref`] names, as files of the repository (PHP
//! classes by FQCN and by the namespace they are used in, views, components,
//! config and translation groups, routes and the requests that reach them,
//! JS/TS and Python imports).

use super::*;

/// A route with a controller, as the resolver matches requests to it
/// ([`facts::Endpoint`] with its URI split into segments).
#[derive(Debug, Clone)]
pub(super) struct Route {
    method: String,
    segments: Vec<String>,
    pub(super) controller: String,
    pub(super) action: Option<String>,
}

/// Finds the files a reference points at.
pub(super) struct Resolver<'a> {
    files: &'a BTreeSet<String>,
    /// FQCN → defining files.
    pub(super) classes: HashMap<&'a str, Vec<&'a str>>,
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
    pub(super) vue_globals: HashMap<String, Vec<String>>,
    /// Global function name (lower-case) → the files that define it.
    functions: HashMap<&'a str, Vec<&'a str>>,
    /// Every route with a controller.
    pub(super) endpoints: Vec<Route>,
    /// Route name → controller FQCNs.
    route_controllers: HashMap<&'a str, Vec<&'a str>>,
    /// Artisan command name → the files defining it.
    commands: HashMap<&'a str, Vec<&'a str>>,
    /// Blade component alias (`app-layout`) → the files of its view or
    /// class ([`FileFacts::component_aliases`]).
    pub(super) component_aliases: HashMap<String, Vec<String>>,
}

impl<'a> Resolver<'a> {
    pub(super) fn new(
        facts: &'a BTreeMap<String, FileFacts>,
        files: &'a BTreeSet<String>,
    ) -> Resolver<'a> {
        let mut classes: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut routes: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut translations: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut functions: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut commands: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut endpoints = Vec::new();
        let mut route_controllers: HashMap<&str, Vec<&str>> = HashMap::new();
        for (file, f) in facts {
            for e in &f.endpoints {
                endpoints.push(Route {
                    method: e.method.clone(),
                    segments: e
                        .uri
                        .split('/')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect(),
                    controller: e.controller.clone(),
                    action: e.action.clone(),
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
            for n in &f.commands {
                commands.entry(n.as_str()).or_default().push(file.as_str());
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
            component_aliases: HashMap::new(),
            functions,
            commands,
            endpoints,
            route_controllers,
        }
    }

    /// The files of every Vue global registration, by the name templates
    /// use.
    pub(super) fn vue_globals(
        &self,
        facts: &BTreeMap<String, FileFacts>,
    ) -> HashMap<String, Vec<String>> {
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

    /// The files of every Blade component alias, by the alias templates
    /// use (`<x-app-layout>`): a view's file or a class's.
    pub(super) fn component_aliases(
        &self,
        facts: &BTreeMap<String, FileFacts>,
    ) -> HashMap<String, Vec<String>> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        for (from, f) in facts {
            for (alias, target) in &f.component_aliases {
                let files = if target.contains('\\') {
                    files_of(&self.classes, target)
                } else {
                    let view = Ref {
                        kind: RefKind::View,
                        target: target.clone(),
                        line: 0,
                    };
                    self.resolve(from, &view)
                };
                out.entry(alias.clone()).or_default().extend(files);
            }
        }
        for files in out.values_mut() {
            files.sort();
            files.dedup();
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

    pub(super) fn resolve(&self, from: &str, r: &Ref) -> Vec<String> {
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
                // A registered alias wins over the conventions, as in Laravel.
                if let Some(files) = self.component_aliases.get(name) {
                    return files.clone();
                }
                let path = name.replace('.', "/");
                let mut out = self.existing(crate::util::anonymous_component_files(&path));
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
            RefKind::Factory => files_of(&self.classes, &model_factory(t)),
            RefKind::Command => files_of(&self.commands, t),
        }
    }

    /// The files of the controllers `routes` run.
    pub(super) fn controller_files(&self, routes: &[&Route]) -> Vec<String> {
        let mut out: Vec<String> = routes
            .iter()
            .flat_map(|r| files_of(&self.classes, &r.controller))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    pub(super) fn routes_matching(&self, target: &str) -> Vec<&Route> {
        routes_matching(&self.endpoints, target, false)
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

/// The files a JS/TS import of `base` may name: as written, with the usual
/// extensions, or the directory's `index` file.
fn script_candidates(base: &str) -> Vec<String> {
    const EXTS: [&str; 8] = ["", ".js", ".ts", ".tsx", ".jsx", ".vue", ".mjs", ".svelte"];
    EXTS.iter()
        .map(|e| format!("{base}{e}"))
        .chain(["index.js", "index.ts", "index.tsx", "index.jsx"].map(|i| format!("{base}/{i}")))
        .collect()
}

impl Graph {
    /// A chunk's `related` names (`Chunk::related`) as a reply may show
    /// them. A Blade view's components are named by the classes Laravel's
    /// convention gives them (`<x-icon.lock>` →
    /// `App\View\Components\Icon\Lock`, `<livewire:home.feed>` →
    /// `App\Livewire\Home\Feed`), which need not exist: an anonymous
    /// component is its view (`resources/views/components/icon/lock.blade.php`),
    /// a Livewire 2 component is under `App\Http\Livewire`, and a package's
    /// component has nothing in the working tree, so it is left out. Other
    /// names pass unchanged; the order is kept.
    pub fn existing_related(&self, related: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::with_capacity(related.len());
        for name in related {
            let blade = name.strip_prefix("App\\View\\Components\\");
            let livewire = name.strip_prefix("App\\Livewire\\");
            let Some(rest) = blade.or(livewire) else {
                out.push(name.clone());
                continue;
            };
            let defined = |fq: &str| self.classes.contains_key(fq);
            let path: Vec<String> = rest.split('\\').map(crate::util::kebab).collect();
            let path = path.join("/");
            let found = if defined(name) {
                Some(name.clone())
            } else if livewire.is_some() {
                let v2 = format!("App\\Http\\Livewire\\{rest}");
                let view = format!("resources/views/livewire/{path}.blade.php");
                if defined(&v2) {
                    Some(v2)
                } else {
                    self.files.contains(&view).then_some(view)
                }
            } else {
                crate::util::anonymous_component_files(&path)
                    .into_iter()
                    .find(|v| self.files.contains(v))
            };
            if let Some(f) = found.filter(|f| !out.contains(f)) {
                out.push(f);
            }
        }
        out
    }
}

impl Graph {
    /// The controller files of the routes a request (`METHOD path`, as
    /// [`facts::request_target`] writes it; method `*` for any) matches
    /// best, as a script's request is resolved but with group prefixes
    /// that hold parameters allowed ([`routes_matching`]'s `open_prefix`):
    /// a ticket's `GET /api/v1/organizations/{o}/projects/{p}` names the
    /// controller that serves it.
    pub fn url_files(&self, target: &str) -> Vec<String> {
        let mut out: Vec<String> = routes_matching(&self.endpoints, target, true)
            .iter()
            .filter_map(|r| self.classes.get(&r.controller))
            .flatten()
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }
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
///
/// With `open_prefix`, the left-over part of the longer path may hold
/// `{}`: a URL a ticket names whole (`api/v1/organizations/{}/projects/{}`)
/// against a route under a group prefix with a parameter
/// (`Route::prefix('/organizations/{organization}')`, not followed). A
/// script's request is matched without it.
pub(super) fn routes_matching<'r>(
    endpoints: &'r [Route],
    target: &str,
    open_prefix: bool,
) -> Vec<&'r Route> {
    let Some((method, path)) = target.split_once(' ') else {
        return Vec::new();
    };
    let request: Vec<&str> = path.split('/').collect();
    let mut best: Option<(i32, i32, i32)> = None;
    let mut routes: Vec<&Route> = Vec::new();
    for r in endpoints {
        let (m, route) = (r.method.as_str(), &r.segments);
        if method != "*" && m != "*" && m != method {
            continue;
        }
        let n = request.len().min(route.len());
        // What is left of the longer path past the shorter's length.
        let (rest_len, rest_has_param) = if request.len() > route.len() {
            let rest = &request[..request.len() - n];
            (rest.len(), rest.contains(&"{}"))
        } else {
            let rest = &route[..route.len() - n];
            (rest.len(), rest.iter().any(|s| s == "{}"))
        };
        let ours = &route[route.len() - n..];
        if n == 0 || (!open_prefix && rest_has_param) {
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
        let key = (equal, -wild, -(rest_len as i32));
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
