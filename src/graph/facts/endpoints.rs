//! HTTP: the routes a routes file defines ([`Endpoint`]) and the requests
//! PHP, Blade and script files make to the application's own paths
//! ([`RefKind::Url`]).

use super::*;

/// The routes `code` (PHP, comments blanked, strings kept) defines with a
/// controller action: `Route::get('uri', [X::class, 'm'])`, `X::class`
/// (invokable), `'X@m'`, the same after `Route::middleware(…)->`, and
/// `Route::resource`/`apiResource('a.b', X::class)` (its routes under
/// `a/{}/b`, [`RESOURCE_ACTIONS`]). Closures and `Route::view` name no controller
/// and give none; a bare `'X@m'` class resolves against the file's
/// namespace, or `App\Http\Controllers` when it has none (the
/// `RouteServiceProvider` namespace of Laravel before 8).
pub(super) fn route_endpoints(
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
/// `redirect('/login')`, `URL::to('/x')`; and a Laravel test's HTTP calls,
/// by the verb that starts the helper's name:
/// `$this->postJson("/api/profiles/{$user->username}/follow")`,
/// `->get('/books')`, a suite's own `->getAs('api/songs', $user)`,
/// `->json('DELETE', 'api/x')`; only with a path holding a `/`, so
/// `$collection->get('key')` and `config()->get('app.name')` are none. An
/// interpolation is a `{}` segment; a literal ending in `/` and followed by
/// `.` gets one.
pub(super) fn php_requests(code: &str, lines: &Lines, refs: &mut Vec<Ref>) {
    static CALL: OnceLock<Regex> = OnceLock::new();
    static TEST_CALL: OnceLock<Regex> = OnceLock::new();
    static INTERPOLATION: OnceLock<Regex> = OnceLock::new();
    let call = re(
        &CALL,
        r#"(?:\burl|\bredirect|URL::to)\(\s*(?:'([^'\n]*)'|"([^"\n]*)")(\s*\.)?"#,
    );
    let test_call = re(
        &TEST_CALL,
        concat!(
            r#"->(?:(get|post|put|patch|delete|options)(?:[A-Z]\w*)?\(|json\(\s*['"](\w+)['"]\s*,)"#,
            r#"\s*(?:'([^'\n]*/[^'\n]*)'|"([^"\n]*/[^"\n]*)")(\s*\.)?"#
        ),
    );
    let found = call
        .captures_iter(code)
        .map(|c| (c.get(1).or(c.get(2)), c.get(3), None, c.get(0)))
        .chain(test_call.captures_iter(code).map(|c| {
            let verb = c
                .get(1)
                .or(c.get(2))
                .map(|v| v.as_str().to_ascii_uppercase());
            (c.get(3).or(c.get(4)), c.get(5), verb, c.get(0))
        }));
    for (path, concatenated, verb, whole) in found {
        let (Some(path), Some(whole)) = (path, whole) else {
            continue;
        };
        let mut written = re(&INTERPOLATION, r"\{\$[^}]*\}|\$\w+(?:->\w+)*")
            .replace_all(path.as_str(), "{}")
            .into_owned();
        if concatenated.is_some() && written.ends_with('/') {
            written.push_str("{}");
        }
        let method = verb.unwrap_or_else(|| request_method(code, whole.start()).to_string());
        if let Some(target) = request_target(&method, &written) {
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
pub fn request_target(method: &str, written: &str) -> Option<String> {
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

/// A script's HTTP requests ([`RefKind::Url`]): the first argument, a
/// string or template literal, of `.get/.post/.put/.patch/.delete/.visit`
/// on a client-like receiver (`http`, `axios`, `api`, `client`, `this.$http`,
/// Inertia's `router`, `useForm`'s `form`, …, or one property of it,
/// `http.silently.post(…)`; a type argument such as
/// `http.get<Song[]>(…)` is allowed) and of `fetch`, `axios`, `useFetch`
/// (method `*`); and the route names of Ziggy's `route('a.b')`
/// ([`RefKind::RouteName`]).
pub(super) fn script_requests(text: &str, lines: &Lines, f: &mut FileFacts) {
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
