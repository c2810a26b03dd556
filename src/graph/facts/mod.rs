//! What one file says about other files, before resolution: the classes it
//! defines (PHP FQCNs), the references it makes (classes, Laravel views,
//! components, config and translation groups, route names, JS/TS and
//! Python imports, Vue global registrations and their uses), the tables it is about and the route names it defines.
//! Derived from the text the sync already read for chunking; comments are
//! blanked first, and class references come from code outside strings.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

mod endpoints;
pub use endpoints::request_target;
mod php;
#[cfg(test)]
mod proptests;
mod scripts;
#[cfg(test)]
mod tests;

use endpoints::*;
use php::*;
use scripts::*;

/// How a file refers to something. The resolved edge keeps the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// PHP `use` import, JS/TS `import`/`require`, Python `import`.
    Import,
    /// `extends`, `implements`, a trait `use` inside a class.
    Extends,
    /// Any other use of a class in code: `X::`, `new X`, type hints,
    /// `X::class`, `'X@method'` route actions.
    Class,
    /// `view('a.b')`, `@include`, `@extends`, `@component`, `@each`,
    /// `Inertia::render`.
    View,
    /// A Blade component tag `<x-a.b>`.
    Component,
    /// `@livewire('a')`, `<livewire:a>`.
    Livewire,
    /// `config('a.b')`: the config group `a`.
    Config,
    /// `__('a.b')`, `trans`, `@lang`: the translation group `a`.
    Trans,
    /// `route('a.b')`, `->route('a.b')`, `to_route`.
    RouteName,
    /// A Vue app's global registration, `.directive('koel-focus', focus)`
    /// or `.component('IconLayers', X)` with the identifier imported in the
    /// same file: target `<name> <import path>`, the name as templates
    /// write it (`v-koel-focus`, `icon-layers`). Resolves to no edge itself
    /// (the file imports the registered one); it tells [`RefKind::Global`]
    /// where a name lives.
    Registers,
    /// A Vue template's use of a custom directive (`v-koel-focus`) or of a
    /// component tag its own script does not import (`icon-layers`): a
    /// globally registered one, if any file [`RefKind::Registers`] it.
    Global,
    /// A PHP call of a plain function, `koel_version()` (target lower-case:
    /// PHP function names are case-insensitive): the files that define a
    /// global function of that name ([`FileFacts::functions`], an app's
    /// `app/Helpers.php` that composer's `autoload.files` loads), if any.
    /// PHP's own functions resolve to nothing.
    Function,
    /// A request to a path the application may route: a script's
    /// `http.get(`songs/${id}`)`, `axios.post('/api/users')`, `fetch('/x')`,
    /// a view's or PHP file's `url('/books')`. Target `METHOD path`
    /// ([`request_target`]): method upper-case (`*` when the call does not
    /// say), path without scheme, host, query or leading `/`, each
    /// interpolation a `{}` segment. Resolves to the controllers of the
    /// matching [`Endpoint`]s.
    Url,
    /// `Product::factory()`, the static that Eloquent's `HasFactory` gives
    /// a model (seeders and tests call it): target the model's FQCN;
    /// resolves to the factory Laravel finds for the model by name
    /// ([`crate::graph::model_factory`]).
    Factory,
    /// An Artisan command run by its name: `$this->artisan('links:check')`
    /// in a test, `Artisan::call`, `Artisan::queue`, a schedule's
    /// `->command(…)`, a command's `$this->call(…)`: target the name (up to
    /// the first space, as a signature starts). Resolves to the files that
    /// define a command of that name ([`FileFacts::commands`]).
    Command,
    /// A kind a later version wrote (a state read by an older binary):
    /// resolves to nothing, instead of failing the whole `sync_state.json`
    /// and re-embedding the repository.
    #[serde(other)]
    Unknown,
}

/// One reference: its kind, the target as written (a FQCN resolved against
/// the file's namespace and imports for classes), and its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Ref {
    pub kind: RefKind,
    pub target: String,
    pub line: u32,
}

/// What one file says about others, as stored in `sync_state.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileFacts {
    /// FQCNs of the classes, interfaces, traits and enums the file defines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub defines: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refs: Vec<Ref>,
    /// Tables the file is about: a migration's created or altered tables,
    /// an Eloquent model's table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<String>,
    /// Route names the file defines (`->name('a.b')`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub route_names: Vec<String>,
    /// Global functions the file defines (a PHP file without a class:
    /// `function name(`, also inside `if (! function_exists(...))`),
    /// lower-case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<String>,
    /// Routes the file defines with a controller action
    /// ([`route_endpoints`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<Endpoint>,
    /// Artisan command names the file defines: a command class's
    /// `$signature` (its first word) or `$name`, `#[AsCommand(name: …)]`,
    /// a closure command's `Artisan::command('name …', …)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// TypeScript interfaces and type aliases a `.ts` file declares
    /// (`interface Song extends Playable {`, `export type Album = {`),
    /// capitalised names only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ts_types: Vec<String>,
    /// Blade component aliases the file registers:
    /// `Blade::component('front.layouts.app', 'app-layout')` (a view's
    /// name), `Blade::component('ad', AdComponent::class)` (a class, its
    /// FQCN; Laravel takes the arguments in either order), as (alias,
    /// view name or FQCN).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub component_aliases: Vec<(String, String)>,
}

/// One route to a controller, as a Laravel routes file defines it:
/// `Route::post('playlists/{playlist}/songs/move', MovePlaylistSongsController::class)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Endpoint {
    /// HTTP method, upper-case; `*` for `any` and `match`.
    pub method: String,
    /// The URI as written, without leading `/`, each `{param}` as `{}`.
    /// Group prefixes (`Route::prefix('api')->group(…)`) are not followed:
    /// requests match by the end of their path.
    pub uri: String,
    /// FQCN of the controller class.
    pub controller: String,
    /// The controller method the route runs: the action's `'m'`,
    /// `__invoke` for an invokable controller, a resource route's
    /// `index`/`store`/`show`/`update`/`destroy` (and `create`/`edit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The route's name (`->name('auth.login')` in the same statement; a
    /// resource's `playlists.index` …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl FileFacts {
    /// True when the file says nothing about others.
    pub fn is_empty(&self) -> bool {
        self.defines.is_empty()
            && self.refs.is_empty()
            && self.tables.is_empty()
            && self.route_names.is_empty()
            && self.functions.is_empty()
            && self.endpoints.is_empty()
            && self.ts_types.is_empty()
            && self.component_aliases.is_empty()
    }
}

/// Version of what [`extract`] derives; part of the index's admission
/// rules, so that a change re-reads every file once (chunks' vectors are
/// reused by content hash). 2: Vue global registrations and their uses;
/// 3: PHP global functions and their calls; 4 to 7 (while they were
/// written): routes' endpoints with their actions and names, scripts' and
/// views' requests, TypeScript type declarations; 8: `Model::factory()`
/// calls; 9: a Laravel test's HTTP calls (`$this->postJson('/api/x')`);
/// 10: every line of a request, not only a file's first to its target;
/// 11: Artisan commands by name; 12: Blade component aliases,
/// `Route::view`, an import on its own line.
pub const FACTS_VERSION: u32 = 12;

/// Most references kept per file (a generated file can name thousands).
const MAX_REFS: usize = 400;

/// The facts of `text`, a file at repo-relative `rel`.
pub fn extract(rel: &str, text: &str) -> FileFacts {
    let lower = rel.to_ascii_lowercase();
    let mut f = if lower.ends_with(".blade.php") {
        blade(text)
    } else if lower.ends_with(".php") {
        php(text)
    } else if [
        ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".vue", ".svelte",
    ]
    .iter()
    .any(|e| lower.ends_with(e))
    {
        let mut f = scripts(text, lower.ends_with(".vue"));
        if lower.ends_with(".ts") {
            f.ts_types = ts_types(text);
        }
        f
    } else if lower.ends_with(".py") {
        python(text)
    } else {
        FileFacts::default()
    };
    f.refs.sort();
    // One reference per target, except requests: `find_references` on a
    // controller action lists every line that calls its route
    // ([`crate::graph::Graph::requests_of`]), and a store calls one
    // endpoint from several methods.
    f.refs.dedup_by(|a, b| {
        a.kind == b.kind && a.target == b.target && (a.kind != RefKind::Url || a.line == b.line)
    });
    f.refs.truncate(MAX_REFS);
    f.defines.sort();
    f.defines.dedup();
    f.tables.sort();
    f.tables.dedup();
    f.route_names.sort();
    f.route_names.dedup();
    f.functions.sort();
    f.functions.dedup();
    f.endpoints.sort();
    f.endpoints.dedup();
    f.ts_types.sort();
    f.ts_types.dedup();
    f
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern"))
}

/// Byte offset → 1-based line.
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        Lines(
            std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
        )
    }
    fn at(&self, offset: usize) -> u32 {
        (self.0.partition_point(|&s| s <= offset)).max(1) as u32
    }
}

fn python(text: &str) -> FileFacts {
    let lines = Lines::new(text);
    let mut f = FileFacts::default();
    static FROM: OnceLock<Regex> = OnceLock::new();
    for c in re(
        &FROM,
        r"(?m)^[ \t]*from\s+([\w.]+)\s+import(?:\s*\(([^)]*)\)|[ \t]+([\w \t,]+))",
    )
    .captures_iter(text)
    {
        let m = c.get(1).expect("group 1");
        let module = m.as_str();
        let names = c.get(2).or(c.get(3)).map_or("", |n| n.as_str());
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let name = name.split_whitespace().next().unwrap_or(name);
            // `from pkg import mod` may name a submodule: both are tried.
            f.refs.push(Ref {
                kind: RefKind::Import,
                target: format!("{module}:{name}"),
                line: lines.at(m.start()),
            });
        }
    }
    static IMPORT: OnceLock<Regex> = OnceLock::new();
    for c in re(&IMPORT, r"(?m)^[ \t]*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)").captures_iter(text) {
        let m = c.get(1).expect("group 1");
        for module in m.as_str().split(',') {
            f.refs.push(Ref {
                kind: RefKind::Import,
                target: module.trim().to_string(),
                line: lines.at(m.start()),
            });
        }
    }
    f
}
