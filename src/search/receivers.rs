//! The class of a PHP member call's receiver, where the file itself says it:
//! `$this->repo->update(…)` with a typed (or constructor-promoted, or
//! `@var`-documented) property `repo`, `$page->save()` with a typed
//! parameter or an assignment from `new`, `app(X::class)`, `resolve()`,
//! `app()->make()` or an Eloquent finder (`X::findOrFail($id)`), and those
//! expressions used directly as receivers. What `find_references` needs to
//! tell `$this->baseRepo->update()` (a caller of `BaseRepo::update`) from
//! `app(PageRepo::class)->destroy()` (not a caller of `UserRepo::destroy`),
//! the two cases of the references set (bench/sets/references.json). No
//! type inference beyond one file: a receiver that comes from another call
//! is [`Receiver::Unknown`].

use std::sync::OnceLock;

use regex::Regex;

/// What a `->name(` call is made on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receiver {
    /// `$this->name(`.
    This,
    /// A class the file declares for the receiver: its short name (the last
    /// segment of a qualified name).
    Class(String),
    /// Nothing in the file says (a chained call, an untyped variable).
    Unknown,
}

/// Eloquent's static finders that return an instance of the model they are
/// called on (`Page::findOrFail($id)->update(…)`).
const FINDERS: &[&str] = &[
    "find",
    "findOrFail",
    "findOrNew",
    "first",
    "firstOrFail",
    "firstOrCreate",
    "firstOrNew",
    "create",
    "forceCreate",
    "make",
    "updateOrCreate",
    "sole",
];

/// A model factory's builder methods, which return the factory
/// (`User::factory()->count(3)->create()`; Laravel's
/// `Illuminate\Database\Eloquent\Factories\Factory`).
const FACTORY_BUILDERS: &[&str] = &[
    "count",
    "state",
    "sequence",
    "for",
    "has",
    "hasAttached",
    "recycle",
    "times",
    "afterCreating",
    "afterMaking",
];

/// The receiver expressions of every `->name(` / `?->name(` call on `line`,
/// in order (`$this->repo`, `$page`, `app(PageRepo::class)`, …).
pub fn member_calls<'a>(line: &'a str, name: &str) -> Vec<&'a str> {
    let needle = format!("->{name}(");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = line[from..].find(&needle) {
        let at = from + i;
        let end = if line[..at].ends_with('?') {
            at - 1
        } else {
            at
        };
        if let Some(start) = expression_start(line, end) {
            out.push(&line[start..end]);
        }
        from = at + needle.len();
    }
    out
}

/// The byte where the receiver expression ending at `end` starts: walks back
/// over names, `$`, `\`, `::`, `->`, `?->` and balanced `(…)` / `[…]`.
fn expression_start(line: &str, end: usize) -> Option<usize> {
    let b = line.as_bytes();
    let mut i = end;
    while i > 0 {
        let c = b[i - 1];
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'\\' {
            i -= 1;
        } else if c == b')' || c == b']' {
            let (open, close) = if c == b')' {
                (b'(', b')')
            } else {
                (b'[', b']')
            };
            let mut depth = 0usize;
            let mut j = i;
            loop {
                if j == 0 {
                    return None;
                }
                j -= 1;
                if b[j] == close {
                    depth += 1;
                } else if b[j] == open {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            i = j;
        } else if i >= 2 && (&b[i - 2..i] == b"->" || &b[i - 2..i] == b"::") {
            i -= 2;
            if i > 0 && b[i - 1] == b'?' {
                i -= 1;
            }
        } else {
            break;
        }
    }
    (i < end).then_some(i)
}

fn regex(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid pattern"))
}

/// The short name of a written class name (`\App\Models\Page` → `Page`),
/// `None` for scalar and pseudo types (`array`, `self`, `mixed` …: PHP class
/// names are capitalised by convention, PSR-1).
fn class_name(written: &str) -> Option<String> {
    let short = written.trim_start_matches('\\').rsplit('\\').next()?;
    short
        .starts_with(|c: char| c.is_ascii_uppercase())
        .then(|| short.to_string())
}

/// The class an expression evaluates to when the expression itself says:
/// `app(X::class)`, `resolve(X::class)`, `app()->make(X::class)`,
/// `(new X(…))`, `X::findOrFail(…)`, and a query on X that ends in a
/// finder, `X::whereSlug($slug)->firstOrFail()` (no finder before the last
/// call: `X::find(1)->comments()->first()` is a related model, unknown),
/// and `X::factory()` with its builder calls, `XFactory` (Laravel's naming
/// of a model's factory).
fn expression_class(expr: &str) -> Option<String> {
    static CONTAINER: OnceLock<Regex> = OnceLock::new();
    static NEW: OnceLock<Regex> = OnceLock::new();
    static FINDER: OnceLock<Regex> = OnceLock::new();
    static CHAINED: OnceLock<Regex> = OnceLock::new();
    let container = regex(
        &CONTAINER,
        r"^(?:app|resolve|app\(\)->make|App::make)\(\s*\\?([\w\\]+)::class\b",
    );
    if let Some(c) = container.captures(expr) {
        return class_name(&c[1]);
    }
    let new = regex(&NEW, r"^\(?\s*new\s+\\?([\w\\]+)");
    if let Some(c) = new.captures(expr) {
        return class_name(&c[1]);
    }
    let finder = regex(&FINDER, r"^\\?([\w\\]+)::(\w+)\(");
    if let Some(c) = finder.captures(expr)
        && FINDERS.contains(&&c[2])
        && expr.ends_with(')')
        && !expr[c[0].len()..].contains("->")
    {
        return class_name(&c[1]);
    }
    if let Some(c) = finder.captures(expr)
        && &c[2] == "factory"
        && expr.ends_with(')')
    {
        let chained = regex(&CHAINED, r"->\s*(\w+)\(");
        let builders = chained
            .captures_iter(&expr[c[0].len()..])
            .all(|m| FACTORY_BUILDERS.contains(&&m[1]));
        return builders
            .then(|| class_name(&c[1]).map(|model| format!("{model}Factory")))
            .flatten();
    }
    if let Some(c) = finder.captures(expr)
        && expr.ends_with(')')
    {
        let chained = regex(&CHAINED, r"->\s*(\w+)\(");
        let mut calls: Vec<&str> = vec![c.get(2).map_or("", |m| m.as_str())];
        calls.extend(
            chained
                .captures_iter(&expr[c[0].len()..])
                .filter_map(|m| m.get(1).map(|n| n.as_str())),
        );
        if let Some((last, before)) = calls.split_last()
            && !before.is_empty()
            && FINDERS.contains(last)
            && !before.iter().any(|call| FINDERS.contains(call))
        {
            return class_name(&c[1]);
        }
    }
    None
}

/// The receiver `expr` (from [`member_calls`]) on 0-based line `at` of
/// `lines`, inside a function whose first line is 0-based `function_start`.
pub fn receiver(lines: &[&str], function_start: usize, at: usize, expr: &str) -> Receiver {
    let known = |c: Option<String>| c.map_or(Receiver::Unknown, Receiver::Class);
    if expr == "$this" {
        return Receiver::This;
    }
    if let Some(prop) = expr
        .strip_prefix("$this->")
        .or_else(|| expr.strip_prefix("$this?->"))
        .filter(|p| p.chars().all(|c| c.is_alphanumeric() || c == '_'))
    {
        return known(property_type(lines, prop));
    }
    if let Some(var) = expr
        .strip_prefix('$')
        .filter(|v| v.chars().all(|c| c.is_alphanumeric() || c == '_'))
    {
        return known(variable_type(lines, function_start, at, var));
    }
    known(expression_class(expr))
}

/// The class of `$var` at 0-based line `at`: the nearest assignment above it
/// within the function (from `new`, the container, a finder, or anything
/// with an `@var X $var` on the line above it), an inline `@var X $var`, or
/// the parameter's declared type. An assignment from anything else ends
/// the search (the type is not known).
fn variable_type(lines: &[&str], function_start: usize, at: usize, var: &str) -> Option<String> {
    let v = regex::escape(var);
    let assign = Regex::new(&format!(r"\${v}\s*=[^=>]\s*(.*)")).ok()?;
    let doc = Regex::new(&format!(r"@var\s+\??\\?([\w\\]+)(?:\|null)?\s+\${v}\b")).ok()?;
    let param = Regex::new(&format!(
        r"(?:^|[(,\s])\??\\?([\w\\]+)(?:\|null)?\s+&?(?:\.\.\.)?\${v}\b"
    ))
    .ok()?;
    let at = at.min(lines.len().saturating_sub(1));
    let first = function_start.min(at);
    // The call's own line can hold the parameter (`fn (Page $p) => $p->…`),
    // not an assignment the call could see.
    if let Some(class) = lines
        .get(at)
        .and_then(|l| param.captures(l))
        .and_then(|c| class_name(&c[1]))
    {
        return Some(class);
    }
    for (i, line) in lines.iter().enumerate().take(at).skip(first).rev() {
        if let Some(c) = doc.captures(line) {
            return class_name(&c[1]);
        }
        if let Some(c) = assign.captures(line) {
            // A statement over several lines (`X::whereSlug($s)` then
            // `->firstOrFail();`): its lines up to the `;`, joined.
            let mut rhs = c[1].trim().to_string();
            for next in lines.iter().take(at).skip(i + 1).take(8) {
                if rhs.contains(';') {
                    break;
                }
                rhs.push_str(next.trim());
            }
            // An assignment from a call the file cannot type
            // (`$user = $request->user();`) is often documented just
            // above it: `/** @var \App\Models\User $user */`.
            return expression_class(rhs.trim_end_matches(';').trim()).or_else(|| {
                i.checked_sub(1)
                    .and_then(|j| doc.captures(lines[j]))
                    .and_then(|c| class_name(&c[1]))
            });
        }
        if let Some(class) = param.captures(line).and_then(|c| class_name(&c[1])) {
            return Some(class);
        }
    }
    None
}

/// The class of property `$prop`: its declared type (also a promoted
/// constructor parameter), the `@var` of its docblock, or what the
/// constructor assigns to it (`new`, the container, a typed parameter).
fn property_type(lines: &[&str], prop: &str) -> Option<String> {
    let p = regex::escape(prop);
    let typed = Regex::new(&format!(
        r"(?:public|protected|private|var)\s+(?:(?:readonly|static)\s+)*\??\\?([\w\\]+)(?:\|null)?\s+\${p}\b"
    ))
    .ok()?;
    let untyped = Regex::new(&format!(
        r"(?:public|protected|private|var)\s+(?:(?:readonly|static)\s+)*\${p}\b"
    ))
    .ok()?;
    let doc = Regex::new(r"@var\s+\??\\?([\w\\]+)").ok()?;
    let assigned = Regex::new(&format!(r"\$this->{p}\s*=[^=>]\s*(.*)")).ok()?;
    for (i, line) in lines.iter().enumerate() {
        if let Some(class) = typed.captures(line).and_then(|c| class_name(&c[1])) {
            return Some(class);
        }
        if untyped.is_match(line) {
            let above = &lines[i.saturating_sub(4)..i];
            if let Some(c) = above.iter().rev().find_map(|l| doc.captures(l)) {
                return class_name(&c[1]);
            }
        }
    }
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = assigned.captures(line) {
            let rhs = c[1].trim_end_matches(';').trim();
            if let Some(class) = expression_class(rhs) {
                return Some(class);
            }
            if let Some(var) = rhs.strip_prefix('$') {
                return variable_type(lines, 0, i, var);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receivers_are_read_back_from_the_call() {
        assert_eq!(
            member_calls("        $this->baseRepo->update($draft, $input);", "update"),
            vec!["$this->baseRepo"]
        );
        assert_eq!(
            member_calls("app(PageRepo::class)->destroy($page);", "destroy"),
            vec!["app(PageRepo::class)"]
        );
        assert_eq!(
            member_calls("$a = (new Foo($x, [1]))->run() + $b?->run();", "run"),
            vec!["(new Foo($x, [1]))", "$b"]
        );
        assert_eq!(
            member_calls(
                "return $this->repo->query()->where('a', 1)->update([]);",
                "update"
            ),
            vec!["$this->repo->query()->where('a', 1)"]
        );
        assert!(member_calls("$x->updated();", "update").is_empty());
    }

    #[test]
    fn receivers_take_the_class_the_file_declares() {
        let src = "<?php
class PageController
{
    /** @var Cache */
    protected $cache;
    private Mailer $mailer;

    public function __construct(
        protected ?PageRepo $pageRepo,
        Clock $clock,
    ) {
        $this->clock = $clock;
    }

    public function update(Request $request, int $id, \\App\\Models\\Page $page)
    {
        $repo = app(BookRepo::class);
        $found = Page::findOrFail($id);
        $other = $this->lookup();
        /** @var Revision $rev */
        $rev = $page->revisions()->first();
        $article = Article::whereSlug($slug)
            ->firstOrFail();
        $comment = $article->comments()
            ->findOrFail((int) $id);
        $related = Article::find(1)->comments()->first();
        $list = Article::where('a', 1)->get();
    }
}";
        let lines: Vec<&str> = src.lines().collect();
        let at = lines.len() - 9;
        let start = 14;
        let r = |expr: &str| receiver(&lines, start, at, expr);
        let class = |c: &str| Receiver::Class(c.to_string());
        assert_eq!(r("$this"), Receiver::This);
        assert_eq!(r("$this->pageRepo"), class("PageRepo"));
        assert_eq!(r("$this->mailer"), class("Mailer"));
        assert_eq!(r("$this->cache"), class("Cache"));
        assert_eq!(r("$this->clock"), class("Clock"));
        assert_eq!(r("$this->nothing"), Receiver::Unknown);
        assert_eq!(r("$request"), class("Request"));
        assert_eq!(r("$page"), class("Page"));
        assert_eq!(r("$id"), Receiver::Unknown);
        assert_eq!(r("$repo"), class("BookRepo"));
        assert_eq!(r("$found"), class("Page"));
        assert_eq!(r("$other"), Receiver::Unknown);
        assert_eq!(r("$rev"), class("Revision"));
        // A call after a documented assignment from an untyped call.
        let documented = "<?php
    public function update(UpdateUserRequest $request)
    {
        /** @var \\App\\Models\\User $user */
        $user = $request->user();
        $user->update($attrs);
        $other = $request->user();
        $other->update($attrs);
    }";
        let doc_lines: Vec<&str> = documented.lines().collect();
        assert_eq!(receiver(&doc_lines, 1, 5, "$user"), class("User"));
        assert_eq!(receiver(&doc_lines, 1, 7, "$other"), Receiver::Unknown);
        assert_eq!(r("app(PageRepo::class)"), class("PageRepo"));
        assert_eq!(r("(new \\App\\Jobs\\Sync($x))"), class("Sync"));
        assert_eq!(r("Page::where('a', 1)"), Receiver::Unknown);
        // A model's factory, not the model nor a class with a `create`.
        assert_eq!(r("User::factory()"), class("UserFactory"));
        assert_eq!(r("User::factory()->count(3)"), class("UserFactory"));
        assert_eq!(r("User::factory()->raw()"), Receiver::Unknown);
        assert_eq!(r("$this->repo->query()"), Receiver::Unknown);
        // A query on a model ending in a finder, over two lines; a relation's
        // finder, a finder before the chain's end and `get()` stay unknown.
        let after = |expr: &str| receiver(&lines, start, lines.len() - 3, expr);
        assert_eq!(after("$article"), class("Article"));
        assert_eq!(after("$comment"), Receiver::Unknown);
        assert_eq!(after("$related"), Receiver::Unknown);
        assert_eq!(after("$list"), Receiver::Unknown);
        assert_eq!(
            r("Article::whereSlug($slug)->with('tags')->first()"),
            class("Article")
        );
    }
}
