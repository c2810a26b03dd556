//! Whether READY's requirements are met (the requirements by intent and
//! risk are `Requirements::of`): the check of submitted claims against the
//! code, and which reasons open SEMANTIC (docs/sessions.md § Requirements).

use std::collections::{BTreeMap, BTreeSet};

use super::model::{
    Assessment, Evidence, LineSpan, Requirement, Requirements, SemanticReason, Tool, Understanding,
};

/// Whether `reason` explains what is missing (docs/sessions.md): symbols →
/// no_definition_found | architecture_unknown; entry points →
/// no_definition_found | no_reference_found; patterns →
/// no_similar_implementation | architecture_unknown; files →
/// context_fragmented | architecture_unknown; coverage → no_reference_found
/// | context_fragmented.
pub fn reason_fits(missing: Requirement, reason: SemanticReason) -> bool {
    use SemanticReason::*;
    matches!(
        (missing, reason),
        (
            Requirement::Symbols,
            NoDefinitionFound | ArchitectureUnknown
        ) | (
            Requirement::EntryPoints,
            NoDefinitionFound | NoReferenceFound
        ) | (
            Requirement::Patterns,
            NoSimilarImplementation | ArchitectureUnknown
        ) | (Requirement::Files, ContextFragmented | ArchitectureUnknown)
            | (Requirement::Coverage, NoReferenceFound | ContextFragmented)
    )
}

/// Tools that must have been tried before SEMANTIC may be entered.
pub const BEFORE_SEMANTIC: [Tool; 3] = [
    Tool::FindDefinitions,
    Tool::FindReferences,
    Tool::SearchText,
];

/// Facts about the repository and the session that claims are checked
/// against.
pub struct Facts<'a> {
    /// Repo-relative files that define this symbol (plain or qualified);
    /// empty when it has no definition.
    pub definition_files: &'a dyn Fn(&str) -> Vec<String>,
    /// The repo-relative file exists.
    pub file_exists: &'a dyn Fn(&str) -> bool,
    /// The file is a test (by its path).
    pub is_test: &'a dyn Fn(&str) -> bool,
    /// Files whose content the session's tool calls returned.
    pub files_read: &'a BTreeSet<String>,
    /// Whether the session's calls returned this symbol's definition
    /// ([`definition_read`]): the whole of it, not a file that holds it.
    pub definition_read: &'a dyn Fn(&str) -> bool,
    /// Symbol as given to `find_references` → uses it found in this session.
    pub reference_checks: &'a BTreeMap<String, usize>,
    /// Identifier searched with `search_text` → files its matches were
    /// shown in.
    pub text_checks: &'a BTreeMap<String, BTreeSet<String>>,
}

/// Lines a definition must have returned to count as read when it is
/// longer: a definition up to this many lines is read when all of it was
/// returned, a longer one (a class) when this many of its lines were.
/// Chosen, not fitted: most methods fit in it; in agent trials a method
/// whose first lines `query` showed, cut with "…", counted as read
/// (bench/README.md § Honest agent trial).
pub const DEFINITION_READ_LINES: usize = 30;

/// `ranges` (1-based, inclusive, in any order; empty ones dropped) as
/// sorted, disjoint ranges: overlapping and adjacent ones merged.
pub fn merged_ranges(ranges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut sorted: Vec<(usize, usize)> = ranges.iter().copied().filter(|(a, b)| a <= b).collect();
    sorted.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (a, b) in sorted {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// Lines `ranges` (1-based, inclusive, in any order, overlapping or not)
/// cover.
pub fn lines_covered(ranges: &[(usize, usize)]) -> usize {
    merged_ranges(ranges).iter().map(|(a, b)| b - a + 1).sum()
}

/// The (first, last) lines of `spans` that are in `file`, in order.
pub fn ranges_of(spans: &[LineSpan], file: &str) -> Vec<(usize, usize)> {
    spans
        .iter()
        .filter(|l| l.file == file)
        .map(|l| (l.start_line, l.end_line))
        .collect()
}

/// The lines of each file the session's calls returned (1-based,
/// inclusive), from its evidence; `None` for a file a call counted as read
/// without saying which lines (a session saved before lines were kept),
/// which then counts as read whole.
pub fn lines_read(evidence: &[Evidence]) -> BTreeMap<String, Option<Vec<(usize, usize)>>> {
    let mut out: BTreeMap<String, Option<Vec<(usize, usize)>>> = BTreeMap::new();
    for e in evidence {
        for f in &e.read {
            let spans = ranges_of(&e.read_lines, f);
            let entry = out.entry(f.clone()).or_insert_with(|| Some(Vec::new()));
            match (spans.is_empty(), entry.as_mut()) {
                (true, _) => *entry = None,
                (false, Some(v)) => v.extend(spans),
                (false, None) => {}
            }
        }
    }
    out
}

/// Whether a definition at `span` was read: its file was read and the
/// lines returned of it cover all of it, or [`DEFINITION_READ_LINES`] of
/// it when it is longer; a file read without lines counts whole.
pub fn definition_read(
    span: &LineSpan,
    files_read: &BTreeSet<String>,
    lines: &BTreeMap<String, Option<Vec<(usize, usize)>>>,
) -> bool {
    if !files_read.contains(&span.file) {
        return false;
    }
    let Some(Some(ranges)) = lines.get(&span.file) else {
        return true;
    };
    let clipped: Vec<(usize, usize)> = ranges
        .iter()
        .map(|&(a, b)| (a.max(span.start_line), b.min(span.end_line)))
        .collect();
    let length = span.end_line.saturating_sub(span.start_line) + 1;
    lines_covered(&clipped) >= length.min(DEFINITION_READ_LINES)
}

/// The identifiers a `search_text` pattern looks for: each alternative of
/// a regex alternation (`rules|ACCEPTABLE_THRESHOLDS`, `\b(?:foo|bar)\b`)
/// that [`searched_identifier`] takes for one name; the whole pattern when
/// it is `literal` or has groups or classes inside. Agents in two trial arms
/// searched for the name they changed as one alternative and were asked for
/// the check again (bench/README.md § Honest agent trial).
pub fn searched_identifiers(pattern: &str, literal: bool) -> Vec<&str> {
    let mut p = pattern.trim();
    if !literal {
        p = p.strip_prefix("\\b").unwrap_or(p);
        p = p.strip_suffix("\\b").unwrap_or(p);
        if let Some(inner) = p
            .strip_prefix("(?:")
            .or_else(|| p.strip_prefix('('))
            .and_then(|x| x.strip_suffix(')'))
        {
            p = inner;
        }
    }
    let grouped = p.contains(['(', ')', '[', ']', '{', '}']) || p.contains("\\|");
    if literal || grouped || !p.contains('|') {
        return searched_identifier(pattern).into_iter().collect();
    }
    p.split('|').filter_map(searched_identifier).collect()
}

/// The identifier a `search_text` pattern looks for, when it looks for one
/// name as used: `markAsRead`, `\bmarkAsRead\b`, `->markAsRead(`,
/// `::update\(`, `.total`, and a Blade view's name or its last part
/// (`single-simple`, `models.links.partials.single-simple` →
/// `single-simple`, the part [`unqualified`] keeps of the view's symbol);
/// `None` for anything else (`function markAsRead`, `mark.*Read`, several
/// words).
pub fn searched_identifier(pattern: &str) -> Option<&str> {
    let mut p = pattern.trim();
    for prefix in ["\\b", "->", "::", "\\.", "."] {
        p = p.strip_prefix(prefix).unwrap_or(p);
    }
    for suffix in ["\\b", "\\(", "("] {
        p = p.strip_suffix(suffix).unwrap_or(p);
    }
    let name = |seg: &str| {
        let mut chars = seg.chars();
        chars
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !seg.ends_with('-')
    };
    if name(p) {
        return Some(p);
    }
    // A qualified class name, as written or regex-escaped
    // (`App\\Imports\\Banking\\Transactions`): its class. A trial agent's
    // search for a class by its full name did not count.
    if p.contains('\\') {
        let mut segments = p.split('\\').filter(|s| !s.is_empty());
        if segments.clone().count() > 1 && segments.clone().all(|s| name(s) && !s.contains('-')) {
            return segments.next_back();
        }
    }
    // A dotted view name: each part a name, at least one with a `-`
    // (`obj.prop` stays a pattern, not a search for `prop`).
    (p.contains('-') && p.split('.').all(name)).then(|| p.rsplit('.').next().unwrap_or(p))
}

/// Uses of `symbol` a `search_text` for its bare name showed: the files of
/// its matches that do not define it (`Some(0)`: searched, no use outside
/// its definition); `None` when its name was not searched.
pub fn text_uses(
    checks: &BTreeMap<String, BTreeSet<String>>,
    symbol: &str,
    definition_files: &dyn Fn(&str) -> Vec<String>,
) -> Option<usize> {
    let files = checks.get(unqualified(symbol))?;
    let defs = definition_files(symbol);
    Some(files.iter().filter(|f| !defs.contains(f)).count())
}

/// `Class::method`, `Class.method`, `Class@method` → `Class`; `None` for a
/// name with no member part (`Ns\Class`, `render`).
fn qualifier(symbol: &str) -> Option<&str> {
    symbol
        .rsplit_once("::")
        .or_else(|| symbol.rsplit_once(['.', '@']))
        .map(|(class, _)| class.trim())
        .filter(|c| !c.is_empty())
}

/// `Class::method`, `Class.method`, `Ns\Class` → the last name; a file
/// named by its path (`resources/sass/_editor.scss`) → its stem
/// (`_editor`), the name a search for it looks for.
pub fn unqualified(symbol: &str) -> &str {
    if symbol.contains('/') {
        return crate::util::file_stem(symbol.trim());
    }
    symbol
        .rsplit([':', '.', '\\', '@'])
        .next()
        .unwrap_or(symbol)
        .trim()
}

/// `Ns\Class::member`, `Class::member`, `Class@member`, `Class.member` →
/// `(Some("Class"), "member")`; a name with no member part → `(None, name)`.
fn short_form(symbol: &str) -> (Option<&str>, &str) {
    let class = qualifier(symbol).map(|c| c.rsplit('\\').next().unwrap_or(c).trim());
    (class, unqualified(symbol))
}

/// Uses `find_references` found for `symbol` in this session: the most any
/// check of the same symbol found — spelt with or without its namespace
/// (`ProfileController::follow` stands for
/// `App\Http\Controllers\Api\ProfileController::follow`: an agent in a
/// trial checked the one and named the other; bench/README.md § Honest
/// agent trial) —, of its bare name (which counts every use by name) or —
/// for a bare name — of a qualified form of it; `None` when none was
/// checked.
pub fn uses_found(checks: &BTreeMap<String, usize>, symbol: &str) -> Option<usize> {
    let bare = unqualified(symbol);
    let short = short_form(symbol);
    checks
        .iter()
        .filter(|(k, _)| {
            k.as_str() == symbol
                || k.as_str() == bare
                || (bare == symbol && unqualified(k) == bare)
                || (short.0.is_some() && short_form(k) == short)
        })
        .map(|(_, n)| *n)
        .max()
}

/// Checks claims against the code and the session, then each requirement by
/// quality: a definition read, the files read, references checked, a pattern
/// read, coverage seen. Confidence is the share of checks passed: each
/// requirement is one, and each rejected claim one that failed (so a
/// rejected claim never sits beside confidence 1.00).
pub fn assess(req: &Requirements, u: &Understanding, facts: &Facts<'_>) -> Assessment {
    let c = claims(u, facts);
    // A reference check, or a search for the name: uses either showed. A
    // method's class checked stands for the method (its uses are where the
    // method is reached from: `NewCommentRequest` injected into a
    // controller action is where `NewCommentRequest::rules` runs).
    let by_name = |s: &str| {
        let text = text_uses(facts.text_checks, s, facts.definition_files);
        uses_found(facts.reference_checks, s).max(text)
    };
    // A check of one of a class's members stands for the class: its uses
    // are where a change to the class is reached from (`Article::delete`
    // for a `deleting` hook added to `Article`: an agent in a trial
    // checked the one and was asked for the other; bench/README.md §
    // Honest agent trial).
    let mut member_classes: BTreeMap<String, usize> = BTreeMap::new();
    for (k, &n) in facts.reference_checks {
        if let Some(class) = qualifier(k) {
            let e = member_classes.entry(class.to_string()).or_default();
            *e = (*e).max(n);
        }
    }
    let checked = |s: &str| {
        by_name(s)
            .or_else(|| qualifier(s).and_then(by_name))
            .or_else(|| uses_found(&member_classes, s))
    };
    let changed = changed_symbols(&c.symbols, u);
    let gated = gated_entry_points(req, &changed, u);
    let mut missing = BTreeMap::new();
    for &r in &req.needs {
        let gap: Option<String> = match r {
            Requirement::Symbols => symbols_gap(&c.symbols, &gated, facts),
            Requirement::Files if c.files.is_empty() => {
                Some("list the files the change edits in files_to_edit (and what you read in files_analyzed)".into())
            }
            Requirement::Files if !c.unread.is_empty() => Some(format!(
                "read {} first (read_file returns the content, `files: [...]` several in one call; a name in a search result is not a read)",
                c.unread.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
            )),
            Requirement::Files => None,
            Requirement::EntryPoints => {
                entry_points_gap(req, &c.symbols, &changed, &gated, u, &checked)
            }
            Requirement::Patterns => {
                let shown = u.existing_patterns.iter().any(|p| {
                    p.files.iter().any(|f| facts.files_read.contains(f))
                });
                (!shown).then(|| {
                    "read an existing implementation of the same kind and name it in existing_patterns (e.g. {\"name\": \"observer\", \"files\": [\"app/Observers/UserObserver.php\"]})".into()
                })
            }
            Requirement::Coverage => {
                let usages = c.symbols.iter().any(|(s, _)| checked(s).is_some_and(|n| n > 0));
                let tests = facts.files_read.iter().any(|f| (facts.is_test)(f));
                (!usages && !tests).then(|| {
                    "find the tests or usages that cover it: find_references on a changed symbol that returns uses, or read a test file".into()
                })
            }
        };
        if let Some(g) = gap {
            missing.insert(r, g);
        }
    }
    let needed = req.needs.len();
    let checks = needed + c.rejected.len();
    // What no requirement checked: files said to be analysed, or to show a
    // pattern, that were never read (the Files gap lists its own).
    let reported: &[&str] = if missing.contains_key(&Requirement::Files) {
        &c.unread
    } else {
        &[]
    };
    let mut unchecked: Vec<String> = Vec::new();
    let pattern_files = u.existing_patterns.iter().flat_map(|p| &p.files);
    for f in u.files_analyzed.iter().chain(pattern_files) {
        if (facts.file_exists)(f)
            && !facts.files_read.contains(f)
            && !reported.contains(&f.as_str())
            && !unchecked.contains(f)
        {
            unchecked.push(f.clone());
        }
    }
    Assessment {
        unchecked,
        created: c.created,
        confidence: if checks == 0 {
            1.0
        } else {
            (needed - missing.len()) as f32 / checks as f32
        },
        rejected_claims: c.rejected,
        missing,
    }
}

/// The claims of an understanding, checked: symbols with their definition
/// files, the files it names, which of those exist but were not read, and
/// the claims rejected (with why).
struct Claims<'u> {
    rejected: Vec<String>,
    /// Symbols with no definition that the change creates
    /// ([`created_by_change`]).
    created: Vec<String>,
    symbols: Vec<(&'u str, Vec<String>)>,
    files: BTreeSet<&'u str>,
    unread: Vec<&'u str>,
}

/// Whether `symbol`, which has no definition, is code the change creates:
/// a member of a class defined in a file of `files_to_edit`
/// (`ProfileController::followSelf`), or a class, or a member of one,
/// whose file `files_to_edit` creates (`UserPolicy::follow` with
/// `app/Policies/UserPolicy.php`). Agents in a trial named the policy they
/// meant to write and were refused once for it (bench/README.md § Honest
/// agent trial).
fn created_by_change(symbol: &str, u: &Understanding, facts: &Facts<'_>) -> bool {
    let (class, _) = short_form(symbol);
    let class = class.unwrap_or_else(|| unqualified(symbol));
    let new_file = u
        .files_to_edit
        .iter()
        .any(|f| !(facts.file_exists)(f) && crate::util::file_stem(f) == class);
    let edited_class = qualifier(symbol).is_some()
        && (facts.definition_files)(class)
            .iter()
            .any(|d| u.files_to_edit.contains(d));
    new_file || edited_class
}

fn claims<'u>(u: &'u Understanding, facts: &Facts<'_>) -> Claims<'u> {
    let mut rejected = Vec::new();
    let mut created = Vec::new();
    let mut symbols: Vec<(&str, Vec<String>)> = Vec::new();
    for s in &u.symbols_identified {
        if symbols.iter().any(|(x, _)| *x == s.as_str()) {
            rejected.push(format!("symbol `{s}` is listed twice"));
            continue;
        }
        let defs = (facts.definition_files)(s);
        let path = s.trim().trim_start_matches("./");
        if defs.is_empty() && created_by_change(s, u, facts) {
            created.push(s.clone());
        } else if defs.is_empty() && crate::util::names_a_file(path) && (facts.file_exists)(path) {
            // A file path that is no file symbol names a file that defines
            // symbols, which are its names; an akaunting trial agent named
            // a script by its path and was told only "no definition"
            // (bench/README.md § Honest agent trial).
            rejected.push(format!(
                "`{s}` is a file that defines symbols: name the definitions the change edits (get_symbols with its path lists them)"
            ));
        } else if defs.is_empty() {
            rejected.push(format!(
                "symbol `{s}` has no definition in the repository (check the name with find_definitions; code the change creates counts when its class's file is in files_to_edit)"
            ));
        } else {
            symbols.push((s.as_str(), defs));
        }
    }
    for e in &u.entry_points {
        if !symbols.iter().any(|(s, _)| *s == e.as_str()) {
            rejected.push(format!(
                "entry point `{e}` is not among the defined symbols_identified: name it as a symbol (`Class::method`) that symbols_identified lists too"
            ));
        }
    }
    // Files the change reads or edits: existing ones it edits must have
    // been read; one only said to be analysed and never read is listed as
    // unchecked instead ([`assess`]): refusing it bought a read of
    // `routes/api.php`, seen as a find_references line, and a resubmission
    // in an agent trial (bench/README.md § Honest agent trial), and
    // protected no write.
    let mut files = BTreeSet::new();
    let mut unread = Vec::new();
    for f in u.files_analyzed.iter().chain(&u.files_to_edit) {
        if !files.insert(f.as_str()) {
            continue;
        }
        if !(facts.file_exists)(f) {
            if u.files_analyzed.contains(f) {
                rejected.push(format!("file `{f}` does not exist"));
            }
        } else if !facts.files_read.contains(f) && u.edits().contains(f) {
            unread.push(f.as_str());
        }
    }
    Claims {
        rejected,
        created,
        symbols,
        files,
        unread,
    }
}

/// The submitted symbols the change alters: those defined in a file of
/// `files_to_edit`. Empty when no file to edit is named (nothing tells
/// then what changes).
fn changed_symbols<'s>(symbols: &[(&'s str, Vec<String>)], u: &Understanding) -> Vec<&'s str> {
    symbols
        .iter()
        .filter(|(_, defs)| defs.iter().any(|d| u.files_to_edit.contains(d)))
        .map(|(s, _)| *s)
        .collect()
}

/// The entry points whose definition must be read and references checked:
/// every one at HIGH risk or when no file to edit is named; otherwise
/// those the change alters (defined in `files_to_edit`). An entry point in
/// a file the change leaves alone (the controller action that calls the
/// form request being edited) is context: it is where the behaviour
/// starts, not what changes, and checking it protects nothing the write
/// can break (docs/sessions.md § Requirements; the honest agent trial of
/// bench/README.md paid three calls for it in half its tasks).
fn gated_entry_points<'u>(
    req: &Requirements,
    changed: &[&str],
    u: &'u Understanding,
) -> Vec<&'u str> {
    u.entry_points
        .iter()
        .map(String::as_str)
        .filter(|e| req.all_entry_points || u.files_to_edit.is_empty() || changed.contains(e))
        .collect()
}

/// What the symbols requirement still needs: a definition read, and the
/// definition of every gated entry point ([`gated_entry_points`]) read.
fn symbols_gap(
    symbols: &[(&str, Vec<String>)],
    gated: &[&str],
    facts: &Facts<'_>,
) -> Option<String> {
    let is_read = |s: &str| (facts.definition_read)(s);
    let read = symbols.iter().any(|(s, _)| is_read(s));
    let unread_entry: Vec<(&str, &Vec<String>)> = symbols
        .iter()
        .filter(|(s, _)| gated.contains(s) && !is_read(s))
        .map(|(s, d)| (*s, d))
        .collect();
    match (symbols.is_empty(), read) {
        (_, true) if !unread_entry.is_empty() => Some(format!(
            "read the definition of entry point(s) {}, all of it (get_function_at_line, or read_file over its lines: a snippet cut with \"…\" is not a read)",
            unread_entry
                .iter()
                .map(|(s, d)| format!("`{s}` ({})", d.first().map_or("", String::as_str)))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        (_, true) => None,
        (true, _) => {
            Some("name the symbols of the change in symbols_identified (find_definitions)".into())
        }
        (false, false) => Some(format!(
            "read the definition of one of {:?}, all of it: get_function_at_line, or read_file over its lines, on {}",
            symbols.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            symbols
                .iter()
                .flat_map(|(_, d)| d.iter().take(1))
                .take(3)
                .map(|d| format!("`{d}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// What the entry-points requirement still needs: `find_references` on
/// every entry point at HIGH risk; otherwise on one gated entry point
/// ([`gated_entry_points`]), or, when none is gated, on one symbol the
/// change alters or one entry point (any named symbol when there are
/// neither).
fn entry_points_gap(
    req: &Requirements,
    symbols: &[(&str, Vec<String>)],
    changed: &[&str],
    gated: &[&str],
    u: &Understanding,
    checked: &dyn Fn(&str) -> Option<usize>,
) -> Option<String> {
    if req.entry_points_if_named && u.entry_points.is_empty() {
        return None;
    }
    let mut targets: Vec<&str> = if req.all_entry_points || !gated.is_empty() {
        gated.to_vec()
    } else {
        // What changes, or where its behaviour starts: either one's check.
        let mut t = changed.to_vec();
        t.extend(u.entry_points.iter().map(String::as_str));
        t
    };
    if targets.is_empty() && !req.all_entry_points {
        targets = symbols.iter().map(|(s, _)| *s).collect();
    }
    // Below HIGH, a check of another symbol the change edits in the same
    // file stands for a gated entry point there: the uses of
    // `LinkRepository::processTaxonomy`, the method being fixed, are what
    // the change reaches (`LinkRepository::create`, the entry point in the
    // same file, was asked for again in the LinkAce trial; bench/README.md
    // § Honest agent trial).
    let files_of = |t: &str| -> Vec<&String> {
        symbols
            .iter()
            .filter(|(s, _)| *s == t)
            .flat_map(|(_, d)| d)
            .collect()
    };
    let sibling_checked = |t: &str| {
        let files = files_of(t);
        symbols.iter().any(|(s, d)| {
            *s != t
                && changed.contains(s)
                && checked(s).is_some()
                && d.iter().any(|f| files.contains(&f))
        })
    };
    let done: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|s| checked(s).is_some() || (!req.all_entry_points && sibling_checked(s)))
        .collect();
    if targets.is_empty() {
        Some(if req.all_entry_points {
            "name the entry points (where the behaviour starts) and run find_references on each"
                .into()
        } else {
            "name the symbols the change alters and run find_references on one".into()
        })
    } else if (req.all_entry_points && done.len() < targets.len()) || done.is_empty() {
        let todo: Vec<&str> = targets
            .iter()
            .copied()
            .filter(|s| checked(s).is_none())
            .collect();
        Some(if req.all_entry_points {
            format!(
                "run find_references on each of {todo:?} (or search_text for the name without `path`: the uses it shows count)"
            )
        } else {
            format!(
                "run find_references on one of {todo:?} (or search_text for the name without `path`: the uses it shows count)"
            )
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ranges are merged when they overlap or touch, empty ones dropped;
    /// the lines they cover are counted once.
    #[test]
    fn ranges_merge_and_cover_their_lines_once() {
        assert_eq!(
            merged_ranges(&[(24, 26), (6, 9), (1, 10), (12, 11), (11, 11)]),
            [(1, 11), (24, 26)]
        );
        assert_eq!(
            lines_covered(&[(24, 26), (6, 9), (1, 10), (12, 11), (11, 11)]),
            14
        );
        assert_eq!(lines_covered(&[]), 0);
    }

    /// Files an understanding names but the session never read, and no
    /// requirement asked to read, are listed as unchecked, outside the
    /// confidence; a file the Files requirement reports is not repeated.
    #[test]
    fn files_named_but_never_read_are_unchecked() {
        let read: BTreeSet<String> = ["a.py".to_string()].into();
        let none = BTreeMap::new();
        let texts = BTreeMap::new();
        let facts = Facts {
            definition_files: &|s| {
                if s == "render" {
                    vec!["a.py".into()]
                } else {
                    Vec::new()
                }
            },
            file_exists: &|f| matches!(f, "a.py" | "b.py" | "c.py"),
            is_test: &|_| false,
            files_read: &read,
            definition_read: &|s| s == "render",
            reference_checks: &none,
            text_checks: &texts,
        };
        let u = Understanding {
            symbols_identified: vec!["render".into()],
            existing_patterns: vec![crate::session::PatternClaim {
                name: "view".into(),
                files: vec!["c.py".into(), "a.py".into()],
            }],
            files_analyzed: vec!["a.py".into(), "b.py".into(), "gone.py".into()],
            ..Understanding::default()
        };
        let investigate = Requirements::of(
            crate::session::Intent::Investigate,
            crate::session::Risk::Low,
        );
        let a = assess(&investigate, &u, &facts);
        assert!(a.missing.is_empty(), "{a:?}");
        assert_eq!(a.unchecked, ["b.py", "c.py"]);
        assert_eq!(a.confidence, 0.5, "the missing file is a rejected claim");
        let modify = Requirements::of(crate::session::Intent::Modify, crate::session::Risk::Low);
        let a = assess(&modify, &u, &facts);
        // Nothing to edit named: the files analysed are the edits, and must be read.
        assert!(a.missing[&Requirement::Files].contains("`b.py`"), "{a:?}");
        assert_eq!(a.unchecked, ["c.py"]);
        // With files to edit named, an analysed file never read is unchecked.
        let u = Understanding {
            files_to_edit: vec!["a.py".into()],
            ..u
        };
        let a = assess(&modify, &u, &facts);
        assert!(!a.missing.contains_key(&Requirement::Files), "{a:?}");
        assert_eq!(a.unchecked, ["b.py", "c.py"]);
    }

    /// A symbol with no definition is code the change creates when its
    /// class's new file, or the file of its existing class, is to be
    /// edited; otherwise it is a rejected claim.
    #[test]
    fn symbols_the_change_creates_are_not_rejected() {
        let read: BTreeSet<String> = ["app/Http/ProfileController.php".to_string()].into();
        let none = BTreeMap::new();
        let texts = BTreeMap::new();
        let facts = Facts {
            definition_files: &|s| match s {
                "ProfileController" | "ProfileController::follow" => {
                    vec!["app/Http/ProfileController.php".into()]
                }
                _ => Vec::new(),
            },
            file_exists: &|f| f == "app/Http/ProfileController.php",
            is_test: &|_| false,
            files_read: &read,
            definition_read: &|s| s == "ProfileController::follow",
            reference_checks: &none,
            text_checks: &texts,
        };
        let u = Understanding {
            symbols_identified: vec![
                "ProfileController::follow".into(),
                "UserPolicy::follow".into(),
                "ProfileController::refuseSelf".into(),
                "Nowhere::thing".into(),
            ],
            files_to_edit: vec![
                "app/Http/ProfileController.php".into(),
                "app/Policies/UserPolicy.php".into(),
            ],
            ..Understanding::default()
        };
        let req = Requirements::of(
            crate::session::Intent::Investigate,
            crate::session::Risk::Low,
        );
        let a = assess(&req, &u, &facts);
        assert_eq!(
            a.created,
            ["UserPolicy::follow", "ProfileController::refuseSelf"]
        );
        assert_eq!(a.rejected_claims.len(), 1, "{a:?}");
        assert!(a.rejected_claims[0].contains("`Nowhere::thing`"), "{a:?}");
    }

    /// A check of `Class::member` counts for the same member named with
    /// its namespace, and the other way round; another class's member of
    /// the same name does not.
    #[test]
    fn a_check_counts_for_the_symbol_with_or_without_its_namespace() {
        let checks: BTreeMap<String, usize> = [("ProfileController::follow".to_string(), 3)].into();
        let fq = "App\\Http\\Controllers\\Api\\ProfileController::follow";
        assert_eq!(uses_found(&checks, fq), Some(3));
        assert_eq!(uses_found(&checks, "ProfileController@follow"), Some(3));
        assert_eq!(uses_found(&checks, "UserController::follow"), None);
        let checks: BTreeMap<String, usize> = [(fq.to_string(), 2)].into();
        assert_eq!(uses_found(&checks, "ProfileController::follow"), Some(2));
        assert_eq!(uses_found(&checks, "follow"), Some(2));
        assert_eq!(
            uses_found(&checks, "App\\Http\\Controllers\\Api\\ProfileController"),
            None
        );
    }

    /// Whether the entry-points requirement is missing for `u` at `risk`
    /// with `find_references` run on `checks` (one use each), every file
    /// and definition read.
    fn entry_points_missing(
        defs: &dyn Fn(&str) -> Vec<String>,
        u: &Understanding,
        checks: &[&str],
        risk: crate::session::Risk,
    ) -> bool {
        let checks: BTreeMap<String, usize> = checks.iter().map(|c| (c.to_string(), 1)).collect();
        let read: BTreeSet<String> = u.files_to_edit.iter().cloned().collect();
        let texts = BTreeMap::new();
        let facts = Facts {
            definition_files: defs,
            file_exists: &|_| true,
            is_test: &|_| false,
            files_read: &read,
            definition_read: &|_| true,
            reference_checks: &checks,
            text_checks: &texts,
        };
        let req = Requirements::of(crate::session::Intent::Modify, risk);
        assess(&req, u, &facts)
            .missing
            .contains_key(&Requirement::EntryPoints)
    }

    /// The entry-points requirement on a class the change edits is met by
    /// `find_references` on one of its members (with or without the
    /// namespace), not by another class's member.
    #[test]
    fn a_member_check_counts_for_its_class() {
        let defs = |s: &str| match s {
            "App\\Models\\Article" | "Article" => vec!["app/Models/Article.php".into()],
            _ => Vec::new(),
        };
        let u = Understanding {
            symbols_identified: vec!["App\\Models\\Article".into()],
            files_to_edit: vec!["app/Models/Article.php".into()],
            ..Understanding::default()
        };
        let missing =
            |checks: &[&str]| entry_points_missing(&defs, &u, checks, crate::session::Risk::Low);
        assert!(missing(&[]));
        assert!(!missing(&["Article::delete"]));
        assert!(!missing(&["App\\Models\\Article::delete"]));
        assert!(missing(&["Comment::delete"]));
    }

    /// Below HIGH, the check of a method the change edits stands for the
    /// entry point defined beside it; at HIGH every entry point is checked.
    #[test]
    fn a_check_of_an_edited_method_stands_for_the_entry_point_beside_it() {
        let repo = "app/Repositories/LinkRepository.php";
        let defs = |s: &str| match s {
            "LinkRepository::create" | "LinkRepository::processTaxonomy" => vec![repo.into()],
            "LinkController::store" => vec!["app/Http/Controllers/LinkController.php".into()],
            _ => Vec::new(),
        };
        let u = Understanding {
            symbols_identified: vec![
                "LinkRepository::processTaxonomy".into(),
                "LinkRepository::create".into(),
                "LinkController::store".into(),
            ],
            entry_points: vec!["LinkRepository::create".into()],
            files_to_edit: vec![repo.into()],
            ..Understanding::default()
        };
        use crate::session::Risk::{High, Low};
        let missing = |checks: &[&str], risk| entry_points_missing(&defs, &u, checks, risk);
        assert!(missing(&[], Low));
        assert!(!missing(&["LinkRepository::processTaxonomy"], Low));
        // A check of a symbol in a file the change leaves alone does not.
        assert!(missing(&["LinkController::store"], Low));
        assert!(missing(&["LinkRepository::processTaxonomy"], High));
    }
}
