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
    /// TypeScript interfaces and type aliases a `.ts` file declares
    /// (`interface Song extends Playable {`, `export type Album = {`),
    /// capitalised names only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ts_types: Vec<String>,
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
    }
}

/// Version of what [`extract`] derives; part of the index's admission
/// rules, so that a change re-reads every file once (chunks' vectors are
/// reused by content hash). 2: Vue global registrations and their uses;
/// 3: PHP global functions and their calls; 4 to 7 (while they were
/// written): routes' endpoints with their actions and names, scripts' and
/// views' requests, TypeScript type declarations.
pub const FACTS_VERSION: u32 = 7;

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
    f.refs
        .dedup_by(|a, b| a.kind == b.kind && a.target == b.target);
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

/// PHP source with comments blanked (`keep_strings`) or comments and the
/// contents of string literals blanked; lengths and newlines are kept, so
/// offsets and lines stay those of the original.
fn blank(text: &str, keep_strings: bool) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank_to = |out: &mut Vec<u8>, from: &[u8]| {
        out.extend(from.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank_to(&mut out, &b[i..end]);
                i = end;
            }
            b'#' if b.get(i + 1) != Some(&b'[') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank_to(&mut out, &b[i..end]);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                blank_to(&mut out, &b[i..end]);
                i = end;
            }
            q @ (b'\'' | b'"') => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = (j + 1).min(b.len());
                if keep_strings {
                    out.extend_from_slice(&b[i..end]);
                } else {
                    out.push(q);
                    blank_to(
                        &mut out,
                        &b[(i + 1).min(end)..end.saturating_sub(1).max(i + 1)],
                    );
                    if end > i + 1 {
                        out.push(q);
                    }
                }
                i = end;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out.truncate(b.len());
    String::from_utf8_lossy(&out).into_owned()
}

/// Laravel's string conventions, in PHP and Blade alike.
fn laravel_strings(code: &str, lines: &Lines, refs: &mut Vec<Ref>, route_names: &mut Vec<String>) {
    static PATTERNS: OnceLock<Vec<(RefKind, Regex)>> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        let q = r#"\(\s*['"]([\w\-./:]+)['"]"#;
        [
            (RefKind::View, format!(r"(?:\bview|View::make|View::first|->view|->markdown|->text|@include|@includeIf|@includeFirst|@extends|@component|@each){q}")),
            (RefKind::View, r#"Inertia::render\(\s*['"]([\w\-./]+)['"]"#.to_string()),
            (RefKind::View, r#"@include(?:When|Unless)\([^,]+,\s*['"]([\w\-./:]+)['"]"#.to_string()),
            (RefKind::Livewire, format!(r"@livewire{q}")),
            (RefKind::Livewire, r"<livewire:([\w\-.]+)".to_string()),
            (RefKind::Component, r"<x-([\w\-.:]+)".to_string()),
            (RefKind::Config, r#"(?:\bconfig|Config::get|Config::string|Config::integer|Config::boolean|Config::array)\(\s*['"]([\w\-]+)[.'"]"#.to_string()),
            (RefKind::Trans, r#"(?:\b__|\btrans|\btrans_choice|@lang|@choice|Lang::get|Lang::has)\(\s*['"]([\w\-]+)\.[\w\-.]+['"]"#.to_string()),
            (RefKind::RouteName, format!(r"(?:\broute|->route|\bto_route|Route::has|URL::route|->routeIs|request\(\)->routeIs){q}")),
        ]
        .into_iter()
        .map(|(k, p)| (k, Regex::new(&p).expect("a valid pattern")))
        .collect()
    });
    for (kind, re) in patterns {
        for c in re.captures_iter(code) {
            let m = c.get(1).expect("group 1");
            refs.push(Ref {
                kind: *kind,
                target: m.as_str().to_string(),
                line: lines.at(m.start()),
            });
        }
    }
    static NAME: OnceLock<Regex> = OnceLock::new();
    for c in re(&NAME, r#"->name\(\s*['"]([\w\-.]+)['"]"#).captures_iter(code) {
        route_names.push(c[1].to_string());
    }
}

/// `use A\B;`, `use A\B as C;`, `use A\{B, C as D};` → alias → FQCN.
fn php_imports(code: &str) -> BTreeMap<String, String> {
    static USE: OnceLock<Regex> = OnceLock::new();
    let mut out = BTreeMap::new();
    for c in re(
        &USE,
        r"(?m)^use\s+([\\\w]+\\)?(?:\{([^}]*)\}|([\w\\]+(?:\s+as\s+\w+)?))\s*;",
    )
    .captures_iter(code)
    {
        let prefix = c.get(1).map_or("", |m| m.as_str());
        let items = c.get(2).or(c.get(3)).map_or("", |m| m.as_str());
        for item in items.split(',') {
            let item = item.trim();
            if item.is_empty() || item.starts_with("function ") || item.starts_with("const ") {
                continue;
            }
            let (path, alias) = match item.split_once(" as ") {
                Some((p, a)) => (p.trim(), a.trim().to_string()),
                None => (item, item.rsplit('\\').next().unwrap_or(item).to_string()),
            };
            let fq = format!("{prefix}{path}")
                .trim_start_matches('\\')
                .to_string();
            out.insert(alias, fq);
        }
    }
    out
}

/// A class name as written in a PHP file → its FQCN.
fn resolve_php(name: &str, namespace: &str, imports: &BTreeMap<String, String>) -> String {
    if let Some(abs) = name.strip_prefix('\\') {
        return abs.to_string();
    }
    let (first, rest) = match name.split_once('\\') {
        Some((f, r)) => (f, Some(r)),
        None => (name, None),
    };
    if let Some(fq) = imports.get(first) {
        return match rest {
            Some(r) => format!("{fq}\\{r}"),
            None => fq.clone(),
        };
    }
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}\\{name}")
    }
}

/// Words that look like class names but are PHP's own.
const PHP_BUILTINS: &[&str] = &[
    "TRUE",
    "FALSE",
    "NULL",
    "PHP_EOL",
    "E_ALL",
    "DIRECTORY_SEPARATOR",
    "PHP_INT_MAX",
];

fn php(text: &str) -> FileFacts {
    let lines = Lines::new(text);
    let with_strings = blank(text, true);
    let code = blank(text, false);
    let mut f = FileFacts::default();
    static NS: OnceLock<Regex> = OnceLock::new();
    let namespace = re(&NS, r"(?m)^\s*namespace\s+([\w\\]+)\s*;")
        .captures(&code)
        .map_or(String::new(), |c| c[1].to_string());
    let imports = php_imports(&code);
    for (alias, fq) in &imports {
        let at = code.find(alias.as_str()).unwrap_or(0);
        f.refs.push(Ref {
            kind: RefKind::Import,
            target: fq.clone(),
            line: lines.at(at),
        });
    }
    let models = php_declarations(&code, &namespace, &imports, &lines, &mut f);
    php_class_uses(&code, &with_strings, &namespace, &imports, &lines, &mut f);
    laravel_strings(&with_strings, &lines, &mut f.refs, &mut f.route_names);
    php_requests(&with_strings, &lines, &mut f.refs);
    php_functions(&code, &lines, &mut f);
    if with_strings.contains("Route::") {
        f.endpoints = route_endpoints(&with_strings, &namespace, &imports);
    }
    // Tables: migrations create or alter them, models are about theirs.
    static SCHEMA: OnceLock<Regex> = OnceLock::new();
    for c in re(&SCHEMA, r#"Schema::(?:connection\([^)]*\)->)?(?:create|table|drop|dropIfExists|rename)\(\s*['"](\w+)['"]"#).captures_iter(&with_strings) {
        f.tables.push(c[1].to_string());
    }
    if !models.is_empty() {
        static TABLE: OnceLock<Regex> = OnceLock::new();
        match re(&TABLE, r#"\$table\s*=\s*['"](\w+)['"]"#).captures(&with_strings) {
            Some(c) => f.tables.push(c[1].to_string()),
            None => f
                .tables
                .extend(models.iter().map(|m| crate::util::plural_snake(m))),
        }
    }
    f
}

/// The routes `code` (PHP, comments blanked, strings kept) defines with a
/// controller action: `Route::get('uri', [X::class, 'm'])`, `X::class`
/// (invokable), `'X@m'`, the same after `Route::middleware(…)->`, and
/// `Route::resource`/`apiResource('a.b', X::class)` (its routes under
/// `a/{}/b`, [`RESOURCE_ACTIONS`]). Closures and `Route::view` name no controller
/// and give none; a bare `'X@m'` class resolves against the file's
/// namespace, or `App\Http\Controllers` when it has none (the
/// `RouteServiceProvider` namespace of Laravel before 8).
fn route_endpoints(
    code: &str,
    namespace: &str,
    imports: &BTreeMap<String, String>,
) -> Vec<Endpoint> {
    static VERB: OnceLock<Regex> = OnceLock::new();
    static RESOURCE: OnceLock<Regex> = OnceLock::new();
    let class = |name: &str, string_action: bool| {
        if string_action
            && namespace.is_empty()
            && !name.contains('\\')
            && !imports.contains_key(name)
        {
            format!("App\\Http\\Controllers\\{name}")
        } else {
            resolve_php(name, namespace, imports)
        }
    };
    let mut out = Vec::new();
    let verb = re(
        &VERB,
        r#"(?:Route::|->)(get|post|put|patch|delete|options|any|match\(\s*\[[^\]]*\]\s*,)\(?\s*['"]([^'"]*)['"]\s*,\s*(?:\[\s*([\\\w]+)::class\s*,\s*['"](\w+)['"]|([\\\w]+)::class|['"]([\\\w]+)@(\w+)['"])"#,
    );
    for c in verb.captures_iter(code) {
        let method = if c[1].starts_with("match") || &c[1] == "any" {
            "*".to_string()
        } else {
            c[1].to_ascii_uppercase()
        };
        let Some(name) = c.get(3).or(c.get(5)).or(c.get(6)) else {
            continue;
        };
        let action = match (c.get(4), c.get(5), c.get(7)) {
            (Some(m), _, _) | (_, _, Some(m)) => m.as_str(),
            _ => "__invoke",
        };
        out.push(Endpoint {
            method,
            uri: route_uri(&c[2]),
            controller: class(name.as_str(), c.get(6).is_some()),
            action: Some(action.to_string()),
            name: route_name(code, c.get(0).expect("group 0").end()),
        });
    }
    let resource = re(
        &RESOURCE,
        r#"(?:Route::|->)(resource|apiResource)\(\s*['"]([\w.\-/]+)['"]\s*,\s*([\\\w]+)::class"#,
    );
    for c in resource.captures_iter(code) {
        let mut uri = String::new();
        for (i, part) in c[2].split('.').enumerate() {
            if i > 0 {
                uri.push_str("/{}/");
            }
            uri.push_str(part.trim_matches('/'));
        }
        let api = &c[1] == "apiResource";
        let controller = class(&c[3], false);
        for (method, path, action) in RESOURCE_ACTIONS {
            if !api || !matches!(*action, "create" | "edit") {
                out.push(Endpoint {
                    method: (*method).to_string(),
                    uri: format!("{uri}{path}"),
                    controller: controller.clone(),
                    action: Some((*action).to_string()),
                    name: Some(format!("{}.{action}", &c[2])),
                });
            }
        }
    }
    out
}

/// The routes `Route::resource` registers, after its URI: method, rest of
/// the path, action (Laravel's `ResourceRegistrar`; `apiResource` leaves
/// out `create` and `edit`; `->only()`/`->except()` are not read).
const RESOURCE_ACTIONS: &[(&str, &str, &str)] = &[
    ("GET", "", "index"),
    ("GET", "/create", "create"),
    ("POST", "", "store"),
    ("GET", "/{}", "show"),
    ("GET", "/{}/edit", "edit"),
    ("PUT", "/{}", "update"),
    ("PATCH", "/{}", "update"),
    ("DELETE", "/{}", "destroy"),
];

/// The `->name('a.b')` of the route statement going on at byte `from` of
/// `code` (up to its `;`).
fn route_name(code: &str, from: usize) -> Option<String> {
    static NAME: OnceLock<Regex> = OnceLock::new();
    let rest = &code[from..];
    let statement = &rest[..rest.find(';').unwrap_or(rest.len())];
    re(&NAME, r#"->name\(\s*['"]([\w\-.]+)['"]"#)
        .captures(statement)
        .map(|c| c[1].to_string())
}

/// Requests a PHP file or Blade view makes to the application's own paths
/// ([`RefKind::Url`], method by [`request_method`]): `url('/books')`,
/// `url("/settings/users/{$user->id}")`, `url('images/' . $id)`,
/// `redirect('/login')`, `URL::to('/x')`. An interpolation is a `{}`
/// segment; a literal ending in `/` and followed by `.` gets one.
fn php_requests(code: &str, lines: &Lines, refs: &mut Vec<Ref>) {
    static CALL: OnceLock<Regex> = OnceLock::new();
    static INTERPOLATION: OnceLock<Regex> = OnceLock::new();
    let call = re(
        &CALL,
        r#"(?:\burl|\bredirect|URL::to)\(\s*(?:'([^'\n]*)'|"([^"\n]*)")(\s*\.)?"#,
    );
    for c in call.captures_iter(code) {
        let Some(path) = c.get(1).or(c.get(2)) else {
            continue;
        };
        let mut written = re(&INTERPOLATION, r"\{\$[^}]*\}|\$\w+(?:->\w+)*")
            .replace_all(path.as_str(), "{}")
            .into_owned();
        if c.get(3).is_some() && written.ends_with('/') {
            written.push_str("{}");
        }
        let method = request_method(code, c.get(0).expect("group 0").start());
        if let Some(target) = request_target(method, &written) {
            refs.push(Ref {
                kind: RefKind::Url,
                target,
                line: lines.at(path.start()),
            });
        }
    }
}

/// The HTTP method of a PHP or Blade request at byte `at` of `code`: `GET`
/// for a link (`href="{{ url(…) }}"`) or a `redirect(`; for a form's
/// `action="{{ url(…) }}"`, the method the form spoofs (`@method('PUT')`,
/// `method_field('delete')`, `name="_method" value="PUT"` before its
/// `</form>`), else its `method` attribute, else `GET` (HTML's default);
/// `*` otherwise.
fn request_method(code: &str, at: usize) -> &'static str {
    static SPOOF: OnceLock<Regex> = OnceLock::new();
    static ATTRIBUTE: OnceLock<Regex> = OnceLock::new();
    let before = code[..at]
        .trim_end()
        .trim_end_matches("{{")
        .trim_end_matches("{!!");
    let before = before.trim_end().trim_end_matches(['"', '\'']);
    let verb = |m: &str| match m.to_ascii_uppercase().as_str() {
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        _ => "GET",
    };
    if code[at..].starts_with("redirect") || before.ends_with("href=") {
        return "GET";
    }
    if !before.ends_with("action=") {
        return "*";
    }
    let Some(open) = code[..at].rfind("<form") else {
        return "*";
    };
    let close = code[at..].find("</form").map_or(code.len(), |i| at + i);
    let spoof = re(
        &SPOOF,
        r#"(?i)(?:@method\(\s*['"]|method_field\(\s*['"]|name=["']_method["']\s+value=["'])(\w+)"#,
    );
    if let Some(c) = spoof.captures(&code[at..close]) {
        return verb(&c[1]);
    }
    let tag_end = code[open..].find('>').map_or(close, |i| open + i);
    let attribute = re(&ATTRIBUTE, r#"(?i)\bmethod=["'](\w+)"#);
    attribute
        .captures(&code[open..tag_end.max(at)])
        .map_or("GET", |c| verb(&c[1]))
}

/// A route URI as [`Endpoint::uri`] keeps it: no leading or trailing `/`,
/// each `{param}` / `{param?}` as `{}`.
fn route_uri(uri: &str) -> String {
    uri.trim_matches('/')
        .split('/')
        .map(|seg| if seg.starts_with('{') { "{}" } else { seg })
        .collect::<Vec<_>>()
        .join("/")
}

/// A script's request target ([`RefKind::Url`]) from the method and the
/// path as written (a string or template literal's contents): `None` for
/// what is not a path of this application (another host's URL, a path
/// with spaces, an asset file, nothing but interpolations).
fn request_target(method: &str, written: &str) -> Option<String> {
    static INTERPOLATION: OnceLock<Regex> = OnceLock::new();
    let path = re(&INTERPOLATION, r"\$\{[^}]*\}").replace_all(written, "{}");
    let path = path.split(['?', '#']).next().unwrap_or("");
    if path.contains(char::is_whitespace) || path.contains("://") || path.starts_with("//") {
        return None;
    }
    let last = path.rsplit('/').next().unwrap_or("");
    if last.contains('.') && !last.contains("{}") {
        return None;
    }
    let segments: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| if s.contains("{}") { "{}" } else { s })
        .skip_while(|s| *s == "{}")
        .collect();
    if !segments.iter().any(|s| *s != "{}") {
        return None;
    }
    Some(format!(
        "{} {}",
        method.to_ascii_uppercase(),
        segments.join("/")
    ))
}

/// Words followed by `(` in PHP that are language constructs, not calls.
const PHP_CONSTRUCTS: &[&str] = &[
    "if",
    "elseif",
    "for",
    "foreach",
    "while",
    "switch",
    "match",
    "array",
    "list",
    "isset",
    "empty",
    "unset",
    "fn",
    "function",
    "return",
    "echo",
    "print",
    "exit",
    "die",
    "catch",
    "include",
    "include_once",
    "require",
    "require_once",
    "and",
    "or",
    "declare",
    "use",
];

/// Global functions: a file without a class defines the `function name(`
/// it holds ([`FileFacts::functions`]); every file's plain calls `name(`
/// (not `->name(`, `::name(`, `new name(`, a definition) are
/// [`RefKind::Function`] references, at their first line.
fn php_functions(code: &str, lines: &Lines, f: &mut FileFacts) {
    static DEF: OnceLock<Regex> = OnceLock::new();
    static CALL: OnceLock<Regex> = OnceLock::new();
    if f.defines.is_empty() {
        for c in re(&DEF, r"(?m)^[ \t]*function\s+&?\s*(\w+)\s*\(").captures_iter(code) {
            f.functions.push(c[1].to_ascii_lowercase());
        }
    }
    for c in re(&CALL, r"\b([a-z_]\w*)\s*\(").captures_iter(code) {
        let m = c.get(1).expect("group 1");
        let head = &code[..m.start()];
        let before = head.trim_end_matches('\\').trim_end();
        let name = m.as_str().to_ascii_lowercase();
        if PHP_CONSTRUCTS.contains(&name.as_str())
            || head.ends_with(['$', '>', ':'])
            || before.ends_with("function")
            || before.ends_with("new")
        {
            continue;
        }
        f.refs.push(Ref {
            kind: RefKind::Function,
            target: name,
            line: lines.at(m.start()),
        });
    }
}

/// Declarations: the classes, interfaces, traits and enums the file defines
/// (FQCNs into `f.defines`), their parents and interfaces, and the traits
/// their bodies use (`Extends` refs); returns the Eloquent models among them.
fn php_declarations(
    code: &str,
    namespace: &str,
    imports: &BTreeMap<String, String>,
    lines: &Lines,
    f: &mut FileFacts,
) -> Vec<String> {
    // Imports are the unindented `use` lines; a class body starts at the
    // first declaration (trait `use` lines are inside it).
    static FIRST: OnceLock<Regex> = OnceLock::new();
    let first_body = re(
        &FIRST,
        r"(?m)^[ \t]*(?:(?:final|abstract|readonly)\s+)*(?:class|interface|trait|enum)\s+\w+",
    )
    .find(code)
    .map_or(code.len(), |m| m.end());
    static DECL: OnceLock<Regex> = OnceLock::new();
    let mut models = Vec::new();
    for c in re(
        &DECL,
        r"(?m)^[ \t]*(?:(?:final|abstract|readonly)\s+)*(?:class|interface|trait|enum)\s+(\w+)(?:\s*:\s*\w+)?(?:\s+extends\s+([\w\\]+(?:\s*,\s*[\w\\]+)*))?(?:\s+implements\s+([\w\\]+(?:\s*,\s*[\w\\]+)*))?",
    )
    .captures_iter(code)
    {
        let name = &c[1];
        f.defines.push(if namespace.is_empty() {
            name.to_string()
        } else {
            format!("{namespace}\\{name}")
        });
        for group in [c.get(2), c.get(3)].into_iter().flatten() {
            for parent in group.as_str().split(',') {
                let parent = parent.trim();
                f.refs.push(Ref {
                    kind: RefKind::Extends,
                    target: resolve_php(parent, namespace, imports),
                    line: lines.at(group.start()),
                });
                if matches!(
                    parent.rsplit('\\').next(),
                    Some("Model" | "Authenticatable" | "Pivot" | "MorphPivot")
                ) {
                    models.push(name.to_string());
                }
            }
        }
    }
    // Traits used inside a class body.
    static TRAITS: OnceLock<Regex> = OnceLock::new();
    for c in re(
        &TRAITS,
        r"(?m)^\s+use\s+([\w\\]+(?:\s*,\s*[\w\\]+)*)\s*[;{]",
    )
    .captures_iter(&code[first_body..])
    {
        let m = c.get(1).expect("group 1");
        for t in m.as_str().split(',') {
            f.refs.push(Ref {
                kind: RefKind::Extends,
                target: resolve_php(t.trim(), namespace, imports),
                line: lines.at(first_body + m.start()),
            });
        }
    }
    models
}

/// Other class names in code (`X::`, `new X`, type hints, `X::class`,
/// real-time facades) and string route actions (`'UserController@index'`),
/// as `Class` refs resolved through the namespace and imports.
fn php_class_uses(
    code: &str,
    with_strings: &str,
    namespace: &str,
    imports: &BTreeMap<String, String>,
    lines: &Lines,
    f: &mut FileFacts,
) {
    // Other class names in code: `X::`, `new X`, type hints, `X::class`.
    static NAMES: OnceLock<Regex> = OnceLock::new();
    for m in re(
        &NAMES,
        r"(?:^|[^\w\\$>:])(\\?[A-Z][A-Za-z0-9_]*(?:\\[A-Za-z_][A-Za-z0-9_]*)*)\b",
    )
    .captures_iter(code)
    {
        let m = m.get(1).expect("group 1");
        let name = m.as_str();
        if PHP_BUILTINS.contains(&name) || name.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        {
            continue;
        }
        let fq = resolve_php(name, namespace, imports);
        // Real-time facades: `Facades\App\Services\X` is `App\Services\X`.
        let fq = fq
            .strip_prefix("Facades\\")
            .map_or(fq.clone(), str::to_string);
        f.refs.push(Ref {
            kind: RefKind::Class,
            target: fq,
            line: lines.at(m.start()),
        });
    }
    // Route actions as strings: 'UserController@index'.
    static ACTION: OnceLock<Regex> = OnceLock::new();
    for c in re(&ACTION, r#"['"]([A-Z][\w\\]*Controller)@\w+['"]"#).captures_iter(with_strings) {
        let m = c.get(1).expect("group 1");
        let name = m.as_str();
        let fq = if name.contains('\\') || !namespace.is_empty() {
            resolve_php(name, namespace, imports)
        } else {
            format!("App\\Http\\Controllers\\{name}")
        };
        f.refs.push(Ref {
            kind: RefKind::Class,
            target: fq,
            line: lines.at(m.start()),
        });
    }
}

fn blade(text: &str) -> FileFacts {
    let lines = Lines::new(text);
    let mut f = FileFacts::default();
    laravel_strings(text, &lines, &mut f.refs, &mut f.route_names);
    php_requests(text, &lines, &mut f.refs);
    // Qualified class names in Blade's PHP: `\App\Models\User::`, `App\Enums\X`.
    static NAMES: OnceLock<Regex> = OnceLock::new();
    for c in re(&NAMES, r"\\?\b([A-Z]\w*(?:\\[A-Z]\w*)+)\b").captures_iter(text) {
        let m = c.get(1).expect("group 1");
        f.refs.push(Ref {
            kind: RefKind::Class,
            target: m.as_str().to_string(),
            line: lines.at(m.start()),
        });
    }
    f
}

/// Vue's built-in directives (`v-if` …), never a global registration.
const VUE_DIRECTIVES: &[&str] = &[
    "if", "else", "else-if", "for", "show", "model", "bind", "on", "slot", "html", "text", "once",
    "pre", "cloak", "memo", "is",
];

/// `IconLayers`, `koelFocus` → `icon-layers`, `koel-focus`: how a Vue
/// template writes a registered name (Vue's `hyphenate`: every capital
/// after the first, so `HTTPLink` → `h-t-t-p-link`, unlike
/// `util::split_identifier`'s word split).
fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('-') {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Vue global registrations ([`RefKind::Registers`]) of a script, and the
/// custom directives and unimported component tags ([`RefKind::Global`]) of
/// a `.vue` file's template.
fn vue_globals(text: &str, lines: &Lines, vue: bool, f: &mut FileFacts) {
    // Most scripts register nothing: their imports need no second pass.
    if !vue && !text.contains(".directive(") && !text.contains(".component(") {
        return;
    }
    static NAMED: OnceLock<Regex> = OnceLock::new();
    static REGISTER: OnceLock<Regex> = OnceLock::new();
    static DIRECTIVE: OnceLock<Regex> = OnceLock::new();
    static TAG: OnceLock<Regex> = OnceLock::new();
    // Identifier → import path: `import X from 'p'`, `import { a, b as c } from 'p'`.
    let mut imported: BTreeMap<String, String> = BTreeMap::new();
    for c in re(
        &NAMED,
        r#"\bimport\s+(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s*['"]([^'"\n]+)['"]"#,
    )
    .captures_iter(text)
    {
        let path = c.get(3).expect("group 3").as_str();
        let names = c.get(2).map_or("", |m| m.as_str());
        let local = names
            .split(',')
            .filter_map(|n| n.split_whitespace().last())
            .chain(c.get(1).map(|m| m.as_str()));
        for n in local {
            imported.insert(n.to_string(), path.to_string());
        }
    }
    for c in re(
        &REGISTER,
        r#"\.(directive|component)\(\s*['"]([\w-]+)['"]\s*,\s*(\w+)"#,
    )
    .captures_iter(text)
    {
        let (what, name, ident) = (&c[1], &c[2], &c[3]);
        let Some(path) = imported.get(ident) else {
            continue;
        };
        let name = match what {
            "directive" => format!("v-{}", kebab(name)),
            _ => kebab(name),
        };
        f.refs.push(Ref {
            kind: RefKind::Registers,
            target: format!("{name} {path}"),
            line: lines.at(c.get(0).expect("match").start()),
        });
    }
    if !vue {
        return;
    }
    let Some(start) = text.find("<template") else {
        return;
    };
    let end = text.rfind("</template>").unwrap_or(text.len()).max(start);
    let template = &text[start..end];
    let local: Vec<String> = imported.keys().map(|k| kebab(k)).collect();
    for c in re(&DIRECTIVE, r"\sv-([a-z][a-z0-9-]*)").captures_iter(template) {
        let name = &c[1];
        if !VUE_DIRECTIVES.contains(&name) {
            f.refs.push(Ref {
                kind: RefKind::Global,
                target: format!("v-{name}"),
                line: lines.at(start + c.get(0).expect("match").start()),
            });
        }
    }
    for c in re(
        &TAG,
        r"<([A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*-[a-z0-9-]*)[\s/>]",
    )
    .captures_iter(template)
    {
        let name = kebab(&c[1]);
        if name != "template" && !local.contains(&name) {
            f.refs.push(Ref {
                kind: RefKind::Global,
                target: name,
                line: lines.at(start + c.get(0).expect("match").start()),
            });
        }
    }
}

/// A script's HTTP requests ([`RefKind::Url`]): the first argument, a
/// string or template literal, of `.get/.post/.put/.patch/.delete/.visit`
/// on a client-like receiver (`http`, `axios`, `api`, `client`, `this.$http`,
/// Inertia's `router`, `useForm`'s `form`, …, or one property of it,
/// `http.silently.post(…)`; a type argument such as
/// `http.get<Song[]>(…)` is allowed) and of `fetch`, `axios`, `useFetch`
/// (method `*`); and the route names of Ziggy's `route('a.b')`
/// ([`RefKind::RouteName`]).
fn script_requests(text: &str, lines: &Lines, f: &mut FileFacts) {
    static CALL: OnceLock<Regex> = OnceLock::new();
    let call = re(
        &CALL,
        r#"(?:\b(?:http|axios|api|client|Http|ky|request|router|Inertia|form)|\$http|\$inertia)(?:\.\w+)?\s*\.\s*(get|post|put|patch|delete|visit)\s*(?:<[^()'"`]*>)?\(\s*(?:'([^'\n]*)'|"([^"\n]*)"|`([^`]*)`)|\b(?:fetch|axios|useFetch|\$fetch)\(\s*(?:'([^'\n]*)'|"([^"\n]*)"|`([^`]*)`)"#,
    );
    for c in call.captures_iter(text) {
        let method = match c.get(1).map(|m| m.as_str()) {
            Some("visit") | None => "*",
            Some(m) => m,
        };
        let Some(path) = (2..=7).find_map(|i| c.get(i)) else {
            continue;
        };
        if let Some(target) = request_target(method, path.as_str()) {
            f.refs.push(Ref {
                kind: RefKind::Url,
                target,
                line: lines.at(path.start()),
            });
        }
    }
    // Ziggy's `route('users.update', user)`, how Inertia pages of Laravel's
    // starter kits (Breeze, Jetstream) name the routes they call.
    static ROUTE: OnceLock<Regex> = OnceLock::new();
    for c in re(&ROUTE, r#"\broute\(\s*['"]([\w\-.]+)['"]"#).captures_iter(text) {
        let m = c.get(1).expect("group 1");
        f.refs.push(Ref {
            kind: RefKind::RouteName,
            target: m.as_str().to_string(),
            line: lines.at(m.start()),
        });
    }
}

/// The capitalised interfaces and type aliases `text` (TypeScript)
/// declares at the start of a line ([`FileFacts::ts_types`]).
fn ts_types(text: &str) -> Vec<String> {
    static DECL: OnceLock<Regex> = OnceLock::new();
    re(
        &DECL,
        r"(?m)^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type)\s+([A-Z]\w*)",
    )
    .captures_iter(text)
    .map(|c| c[1].to_string())
    .collect()
}

fn scripts(text: &str, vue: bool) -> FileFacts {
    let lines = Lines::new(text);
    let mut f = FileFacts::default();
    vue_globals(text, &lines, vue, &mut f);
    script_requests(text, &lines, &mut f);
    static IMPORT: OnceLock<Regex> = OnceLock::new();
    for c in re(
        &IMPORT,
        r#"(?:\bfrom\s+|\bimport\s+|\brequire\(\s*|\bimport\(\s*)['"]([^'"\n]+)['"]"#,
    )
    .captures_iter(text)
    {
        let m = c.get(1).expect("group 1");
        let target = m.as_str();
        if target.starts_with('.')
            || target.starts_with("@/")
            || target.starts_with('/')
            || target.starts_with("~/")
        {
            f.refs.push(Ref {
                kind: RefKind::Import,
                target: target.to_string(),
                line: lines.at(m.start()),
            });
        }
    }
    f
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

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(f: &FileFacts, kind: RefKind) -> Vec<&str> {
        f.refs
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.target.as_str())
            .collect()
    }

    #[test]
    fn routes_define_endpoints_and_scripts_request_them() {
        let routes = r#"<?php
use App\Http\Controllers\API\AuthController;
use App\Http\Controllers\API\MovePlaylistSongsController;

Route::prefix('api')->middleware('api')->group(static function (): void {
    Route::post('me', [AuthController::class, 'login'])->name('auth.login');
    Route::post('playlists/{playlist}/songs/move', MovePlaylistSongsController::class);
    Route::delete(
        '/playlist-folders/{playlistFolder?}/playlists',
        [PlaylistFolderPlaylistController::class, 'destroy']
    );
    Route::apiResource('playlists.songs', PlaylistSongController::class);
    Route::get('/', 'HomeController@index');
    Route::get('about', static fn () => view('about'));
});
"#;
        let f = extract("routes/api.php", routes);
        let got: Vec<String> = f
            .endpoints
            .iter()
            .map(|e| {
                let short = e.controller.rsplit('\\').next().unwrap_or("");
                let action = e.action.as_deref().unwrap_or("-");
                let name = e.name.as_deref().unwrap_or("-");
                format!("{} {} {short}@{action} {name}", e.method, e.uri)
            })
            .collect();
        assert_eq!(
            got,
            [
                "DELETE playlist-folders/{}/playlists PlaylistFolderPlaylistController@destroy -",
                "DELETE playlists/{}/songs/{} PlaylistSongController@destroy playlists.songs.destroy",
                "GET  HomeController@index -",
                "GET playlists/{}/songs PlaylistSongController@index playlists.songs.index",
                "GET playlists/{}/songs/{} PlaylistSongController@show playlists.songs.show",
                "PATCH playlists/{}/songs/{} PlaylistSongController@update playlists.songs.update",
                "POST me AuthController@login auth.login",
                "POST playlists/{}/songs PlaylistSongController@store playlists.songs.store",
                "POST playlists/{}/songs/move MovePlaylistSongsController@__invoke -",
                "PUT playlists/{}/songs/{} PlaylistSongController@update playlists.songs.update",
            ]
        );
        // A bare 'X@m' in a file without a namespace: Laravel's old
        // controller namespace; `::class` names resolve as PHP does.
        assert!(
            f.endpoints
                .iter()
                .any(|e| e.controller == "App\\Http\\Controllers\\HomeController")
        );
        assert!(
            f.endpoints
                .iter()
                .any(|e| e.controller == "PlaylistSongController")
        );
        let store = r#"import { http } from '@/services'
export const playlistStore = {
  async move (playlist: Playlist, ids: string[]) {
    await http.silently.post(`playlists/${playlist.id}/songs/move`, { ids })
  },
  fetch: async () => http.get<Playlist[]>(`${base}/playlists?sort=${sort}`),
  logo: () => fetch('/img/logo.svg'),
  other: () => fetch('https://example.com/api/x'),
  cache: () => map.get('playlists'),
  me: () => axios.put('/api/me', data),
  save: () => form.post(route('playlists.store'), { onSuccess }),
}
"#;
        let view = r#"<form method="POST" action="{{ url("/books/{$book->slug}") }}">
<a href="{{ url('/settings/users/' . $user->id) }}">{{ $user->name }}</a>
<a href="{{ url('/tags?name=' . urlencode($tag)) }}">#</a>
<link rel="icon" href="{{ url('/icon.png') }}"> @if($x) {{ redirect('/login') }} @endif
"#;
        let f = extract("resources/views/books/edit.blade.php", view);
        assert_eq!(
            targets(&f, RefKind::Url),
            [
                "GET login",
                "GET settings/users/{}",
                "GET tags",
                "POST books/{}"
            ]
        );
        let forms = r#"<form action="{{ url("/settings/users/{$user->id}") }}" method="post">
    <input type="hidden" name="_method" value="PUT">
</form>
<form action="{{ url('/books/' . $book->slug) }}" method="POST">
    {{ method_field('delete') }}
</form>
<form action="{{ url('/search') }}"></form>
<script>const u = "{{ url('/api/x') }}"</script>
"#;
        let f = extract("resources/views/users/edit.blade.php", forms);
        assert_eq!(
            targets(&f, RefKind::Url),
            [
                "* api/x",
                "DELETE books/{}",
                "GET search",
                "PUT settings/users/{}"
            ]
        );
        let f = extract("resources/js/stores/playlistStore.ts", store);
        assert_eq!(
            targets(&f, RefKind::Url),
            [
                "GET playlists",
                "POST playlists/{}/songs/move",
                "PUT api/me"
            ]
        );
        assert_eq!(targets(&f, RefKind::RouteName), ["playlists.store"]);
    }

    #[test]
    fn php_classes_resolve_through_namespace_and_imports() {
        let src = r#"<?php
namespace App\Http\Controllers;

use App\Models\Order;
use App\Http\Requests\{StoreOrderRequest, UpdateOrderRequest as Update};
use Illuminate\Support\Facades\Route;

// OrderPolicy is mentioned in a comment only.
final class OrderController extends Controller implements HasMiddleware
{
    use AuthorizesRequests;

    public function store(StoreOrderRequest $request, Update $u): View
    {
        $svc = app(OrderService::class);
        $x = new \App\Support\Money(1);
        \Facades\App\Services\Pricing::quote();
        return view('orders.show', ['o' => Order::find(1), 'n' => __('orders.saved')]);
    }

    public function index()
    {
        return redirect()->route('orders.index')->with('x', config('shop.currency'));
    }
}
"#;
        let f = extract("app/Http/Controllers/OrderController.php", src);
        assert_eq!(f.defines, ["App\\Http\\Controllers\\OrderController"]);
        assert_eq!(
            targets(&f, RefKind::Extends),
            [
                "App\\Http\\Controllers\\AuthorizesRequests",
                "App\\Http\\Controllers\\Controller",
                "App\\Http\\Controllers\\HasMiddleware"
            ]
        );
        let classes = targets(&f, RefKind::Class);
        for want in [
            "App\\Http\\Controllers\\OrderService",
            "App\\Http\\Requests\\StoreOrderRequest",
            "App\\Http\\Requests\\UpdateOrderRequest",
            "App\\Models\\Order",
            "App\\Support\\Money",
            "App\\Services\\Pricing",
        ] {
            assert!(classes.contains(&want), "{want}: {classes:?}");
        }
        assert!(
            !classes.iter().any(|c| c.ends_with("OrderPolicy")),
            "{classes:?}"
        );
        assert_eq!(targets(&f, RefKind::View), ["orders.show"]);
        assert_eq!(targets(&f, RefKind::Trans), ["orders"]);
        assert_eq!(targets(&f, RefKind::Config), ["shop"]);
        assert_eq!(targets(&f, RefKind::RouteName), ["orders.index"]);
        let view = f.refs.iter().find(|r| r.kind == RefKind::View).unwrap();
        assert_eq!(view.line, 18);
    }

    #[test]
    fn models_migrations_and_routes_name_their_tables_and_routes() {
        let model = "<?php\nnamespace App\\Models;\nclass OrderItem extends Model {}\n";
        assert_eq!(
            extract("app/Models/OrderItem.php", model).tables,
            ["order_items"]
        );
        let named = "<?php\nnamespace App\\Models;\nclass Category extends Model { protected $table = 'cats'; }\n";
        assert_eq!(extract("app/Models/Category.php", named).tables, ["cats"]);
        let migration = "<?php\nreturn new class extends Migration {\n public function up() {\n  Schema::create('orders', function (Blueprint $t) {});\n  Schema::table('users', function ($t) {});\n }\n};\n";
        assert_eq!(
            extract("database/migrations/x.php", migration).tables,
            ["orders", "users"]
        );
        let routes = "<?php\nRoute::get('/o', [OrderController::class, 'index'])->name('orders.index');\nRoute::get('/x', 'UserController@show');\n";
        let f = extract("routes/web.php", routes);
        assert_eq!(f.route_names, ["orders.index"]);
        let classes = targets(&f, RefKind::Class);
        assert!(classes.contains(&"OrderController"), "{classes:?}");
        assert!(
            classes.contains(&"App\\Http\\Controllers\\UserController"),
            "{classes:?}"
        );
    }

    #[test]
    fn blade_scripts_and_python() {
        let blade = "@extends('layouts.app')\n<x-forms.input name=\"a\" />\n@include('partials.nav')\n<livewire:cart />\n{{ __('auth.failed') }} {{ \\App\\Models\\User::count() }}";
        let f = extract("resources/views/home.blade.php", blade);
        assert_eq!(targets(&f, RefKind::View), ["layouts.app", "partials.nav"]);
        assert_eq!(targets(&f, RefKind::Component), ["forms.input"]);
        assert_eq!(targets(&f, RefKind::Livewire), ["cart"]);
        assert_eq!(targets(&f, RefKind::Trans), ["auth"]);
        assert_eq!(targets(&f, RefKind::Class), ["App\\Models\\User"]);

        let js = "import a from './a'\nimport { b } from \"../lib/b.js\";\nconst c = require('./c');\nimport 'lodash';\nimport x from '@/components/X.vue'";
        let f = extract("resources/js/app.js", js);
        assert_eq!(
            targets(&f, RefKind::Import),
            ["../lib/b.js", "./a", "./c", "@/components/X.vue"]
        );

        let py = "from .utils import helper, other\nimport os, flask.json\nfrom flask import (\n    Flask,\n)\n";
        let f = extract("src/flask/app.py", py);
        assert_eq!(
            targets(&f, RefKind::Import),
            [
                ".utils:helper",
                ".utils:other",
                "flask.json",
                "flask:Flask",
                "os"
            ]
        );
    }
}
