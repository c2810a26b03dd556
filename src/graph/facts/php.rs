//! PHP and Blade: namespaces, imports, declarations, class uses, global
//! functions, Laravel's string conventions, tables.

use super::*;

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
            (RefKind::View, r#"Route::view\(\s*['"][^'"]*['"]\s*,\s*['"]([\w\-./:]+)['"]"#.to_string()),
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
pub(super) fn resolve_php(
    name: &str,
    namespace: &str,
    imports: &BTreeMap<String, String>,
) -> String {
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

pub(super) fn php(text: &str) -> FileFacts {
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
        // The import's own line: where its FQCN is written whole (not a
        // longer name it begins), else the alias's first mention. The
        // alias alone found `Import` inside an earlier
        // `use …\Common\Import as ImportRequest;` and the reference
        // pointed at that line (bench/README.md § Honest agent trial).
        let whole = code.match_indices(fq.as_str()).find(|(i, m)| {
            !code[i + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '\\')
        });
        let at = whole
            .map(|(i, _)| i)
            .or_else(|| code.find(alias.as_str()))
            .unwrap_or(0);
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
    php_commands(&with_strings, &lines, &mut f);
    blade_aliases(&with_strings, &namespace, &imports, &lines, &mut f);
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

/// Blade component aliases ([`FileFacts::component_aliases`]): a
/// `Blade::component(…)` call with two arguments, a string and a string or
/// `X::class`. The class, when one is given, is the target whichever side
/// it is on (Laravel swaps them); otherwise the first string is the
/// target, a view's name, which also becomes a `view` reference from the
/// registering line.
fn blade_aliases(
    code: &str,
    namespace: &str,
    imports: &BTreeMap<String, String>,
    lines: &Lines,
    f: &mut FileFacts,
) {
    static ALIAS: OnceLock<Regex> = OnceLock::new();
    let arg = r#"(?:['"]([\w\-./:\\]+)['"]|([\w\\]+)::class)"#;
    let pattern = format!(r"Blade::component\(\s*{arg}\s*,\s*{arg}\s*\)");
    for c in re(&ALIAS, &pattern).captures_iter(code) {
        let class = |i: usize| {
            c.get(i)
                .map(|m| resolve_php(m.as_str(), namespace, imports))
        };
        // A class named in a string (`'App\\View\\Alert'`) is a class too.
        let fq = |m: regex::Match| {
            m.as_str()
                .replace("\\\\", "\\")
                .trim_start_matches('\\')
                .to_string()
        };
        let (alias, target) = match (c.get(1), class(2), c.get(3), class(4)) {
            (Some(first), None, Some(second), None) if first.as_str().contains('\\') => {
                (second.as_str().to_string(), fq(first))
            }
            (Some(first), None, Some(second), None) if second.as_str().contains('\\') => {
                (first.as_str().to_string(), fq(second))
            }
            (Some(view), None, Some(alias), None) => {
                f.refs.push(Ref {
                    kind: RefKind::View,
                    target: view.as_str().to_string(),
                    line: lines.at(view.start()),
                });
                (alias.as_str().to_string(), view.as_str().to_string())
            }
            (None, Some(class), Some(alias), None) | (Some(alias), None, None, Some(class)) => {
                (alias.as_str().to_string(), class)
            }
            _ => continue,
        };
        f.component_aliases.push((alias, target));
    }
}

/// Artisan commands: the names the file defines ([`FileFacts::commands`])
/// and the commands it runs by name ([`RefKind::Command`]). `$name` counts
/// only in a file that extends `Command`, since other classes use the
/// property for anything.
fn php_commands(code: &str, lines: &Lines, f: &mut FileFacts) {
    static DEFINES: OnceLock<Regex> = OnceLock::new();
    static NAME: OnceLock<Regex> = OnceLock::new();
    static RUNS: OnceLock<Regex> = OnceLock::new();
    let name = r#"['"]\s*([\w:\-]+)"#;
    let defines = format!(
        r"(?:protected\s+(?:\??string\s+)?\$signature\s*=\s*|#\[AsCommand\(\s*(?:name:\s*)?|Artisan::command\(\s*){name}"
    );
    for c in re(&DEFINES, &defines).captures_iter(code) {
        f.commands.push(c[1].to_string());
    }
    if code.contains("extends Command") {
        let own = format!(r"protected\s+(?:\??string\s+)?\$name\s*=\s*{name}");
        for c in re(&NAME, &own).captures_iter(code) {
            f.commands.push(c[1].to_string());
        }
    }
    let runs = format!(
        r"(?:->artisan|Artisan::call|Artisan::queue|->command|Schedule::command|\$this->call|\$this->callSilent(?:ly)?)\(\s*{name}"
    );
    let runs = re(&RUNS, &runs);
    for c in runs.captures_iter(code) {
        let m = c.get(1).expect("group 1");
        f.refs.push(Ref {
            kind: RefKind::Command,
            target: m.as_str().to_string(),
            line: lines.at(m.start()),
        });
    }
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
        // `Product::factory()`: also the model's factory, by Laravel's naming.
        let factory_call = code[m.end()..]
            .strip_prefix("::factory")
            .is_some_and(|rest| rest.trim_start().starts_with('('));
        if factory_call {
            f.refs.push(Ref {
                kind: RefKind::Factory,
                target: fq.clone(),
                line: lines.at(m.start()),
            });
        }
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

pub(super) fn blade(text: &str) -> FileFacts {
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
