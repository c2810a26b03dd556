//! The text of a `query` reply: the plan, every ranked file in one line or
//! (the best ones) with chunks, facts and code, and the "also check" list,
//! within the reply's token budget.

use super::Shown;
use super::budget::Budget;
use super::wire::QueryResult;
use crate::rank::{FileChunk, QueryPlan, RankedFile};

/// Default budget of a `query` reply, in estimated tokens: room for the plan,
/// ten files with why they ranked and the code of the best three. Chosen on
/// bench/agent_tasks.py, where an orienting `query` plus the reads of a task
/// must stay within 2,500 tokens per task.
pub(crate) const QUERY_MAX_TOKENS: usize = 1200;

/// Files of a `query` reply that show code; the others are listed by name.
const QUERY_CODE_FILES: usize = 3;

/// Room kept for the closing "files shown" line, in estimated tokens.
const SHOWN_LINE_TOKENS: usize = 16;

/// Code a further chunk of a code-showing file must leave each shown chunk,
/// in estimated tokens (about 12 lines): below it the chunks showed five
/// lines each, a method cut before its body, and agents of the honest trial
/// read every file again (bench/README.md § Honest agent trial).
const MIN_CHUNK_CODE_TOKENS: usize = 100;

/// Longest `facts:` line of a code-showing file, in chars.
const FACTS_CHARS: usize = 300;

/// The prefix of a line of code in a reply.
const CODE_PREFIX: &str = "     | ";

/// What the text of a `query` reply shows of its files, so the structured
/// reply keeps the same ([`QueryResult::keep_shown`]).
#[derive(Debug, Default)]
struct QueryShown {
    /// Files listed (in rank order); the rest did not fit.
    files: usize,
    /// The first `full` files show their chunks (or only the best one,
    /// when the others' headers do not fit: `Layout::new`) and code; the
    /// others one line naming the best chunk.
    full: usize,
    /// Lines of code shown per chunk shown of each full file.
    code_lines: Vec<Vec<usize>>,
}

/// The text of a `query` reply within `max_tokens`: the plan, the best
/// [`QUERY_CODE_FILES`] files with why they ranked, their chunks' lines,
/// framework facts, related symbols and code, then one line per other file
/// and the "also check" list. Lays `o` out without changing it: the
/// [`QueryShown`] says what the text shows (for the structured reply to
/// keep the same), the [`Shown`] names the files listed and the lines of
/// code returned (only those count as read).
fn query_text(o: &QueryResult, max_tokens: usize) -> (String, Shown, QueryShown) {
    let plan = &o.plan;
    let readiness = &o.index;
    // The "also check" lines are short and the point of the reply for a
    // change that spans files: their room is kept before the rest is laid out.
    let mut also: Vec<String> = o
        .also_check
        .iter()
        .enumerate()
        .map(|(i, r)| also_line(i, r))
        .collect();
    if !also.is_empty() {
        also.insert(
            0,
            "also check (code graph and co-change of the listed files):\n".into(),
        );
    }
    if !o.tests.is_empty() {
        also.push("tests (exercise the files above; the change likely updates them):\n".into());
        also.extend(o.tests.iter().enumerate().map(|(i, r)| test_line(i, r)));
    }
    let also_cost: usize = also
        .iter()
        .map(|l| super::budget::estimate_tokens(l))
        .sum::<usize>()
        + SHOWN_LINE_TOKENS;
    let mut b = Budget::new(max_tokens.saturating_sub(also_cost).max(100));
    b.force(&format!("{}\n", readiness.message));
    b.force(&plan_line(plan));
    if o.files.is_empty() {
        b.force(&format!("{}\n", no_results(readiness)));
    }
    let layout = Layout::new(&o.files, b.left(), asks_about_deleting(plan));
    let mut kept = QueryShown {
        files: layout.entries.len(),
        full: layout.full,
        code_lines: Vec::new(),
    };
    let mut seen = Shown::default();
    for (i, (f, h)) in o.files.iter().zip(&layout.entries).enumerate() {
        // The layout fits its entries to the budget; a header that still
        // does not fit ends the list, and the count says so ("11 ranked"
        // over ten lines misled an agent in a trial).
        if !b.push(&h[0]) {
            kept.files = i;
            kept.full = kept.full.min(i);
            break;
        }
        seen.name(&f.file);
        if i >= layout.full {
            continue;
        }
        let mut shown_per_chunk = Vec::new();
        for (c, line) in f.chunks.iter().zip(&h[1..]) {
            b.push(line);
            let mut lines = 0;
            let mut verbatim = 0;
            let mut left = layout.per_chunk;
            for l in c.content.lines() {
                let shown = format!("{CODE_PREFIX}{l}\n");
                let cost = super::budget::estimate_tokens(&shown);
                if cost > left || !b.push(&shown) {
                    b.push(&format!("{CODE_PREFIX}…\n"));
                    break;
                }
                left -= cost;
                lines += 1;
                // Only the lines before an outline's first elided member
                // are the file's own: `public function list(…) …` does not
                // read the method.
                if verbatim + 1 == lines && !crate::chunk::is_elided(l) {
                    verbatim = lines;
                }
            }
            if verbatim > 0 {
                let start = c.start_line as usize;
                // Every line of the chunk shown: its whole span is read, up
                // to blank lines its content leaves off at the end (a view
                // shown whole in a trial was "not read in full" for its
                // last, blank line; bench/README.md § Honest agent trial).
                let end = if verbatim == c.content.lines().count() {
                    (c.end_line as usize).max(start + verbatim - 1)
                } else {
                    start + verbatim - 1
                };
                seen.read(&f.file, start, end);
            }
            shown_per_chunk.push(lines);
        }
        kept.code_lines.push(shown_per_chunk);
    }
    if kept.files < o.files.len() {
        b.truncated = true;
    }
    for l in &also {
        b.force(l);
    }
    if !o.files.is_empty() {
        b.force(&format!(
            "files shown: {} ({} ranked, {} also check); tests: {}\n",
            kept.files + o.also_check.len(),
            kept.files,
            o.also_check.len(),
            o.tests.len()
        ));
    }
    for r in o.also_check.iter().chain(&o.tests) {
        seen.name(&r.file);
    }
    let text = b.finish(
        "… cut to fit max_tokens: read_file the files above, lower limit, or raise max_tokens",
    );
    (text, seen, kept)
}

impl QueryResult {
    /// The reply to `query`: the answer as [`crate::rank::Ranker::answer`]
    /// gave it, with how ready the index is.
    pub fn new(answer: crate::rank::QueryAnswer, index: crate::index::Readiness) -> QueryResult {
        QueryResult {
            plan: answer.plan,
            files_shown: answer.files.len() + answer.also_check.len(),
            files: answer.files,
            also_check: answer.also_check,
            tests: answer.tests,
            requested_kinds: answer.requested_classes,
            index,
            timings: answer.timings,
            session: None,
        }
    }

    /// Keeps what the text shows ([`query_text`]): the files listed; of a
    /// file shown in one line, its best chunk's place (no code, facts or
    /// signature), and past the tenth only the file, its class and score;
    /// of a full file, the lines of code shown.
    fn keep_shown(&mut self, kept: &QueryShown) {
        self.files.truncate(kept.files);
        self.files_shown = self.files.len() + self.also_check.len();
        for (i, f) in self.files.iter_mut().enumerate() {
            // Past the tenth the text gives no reasons (`compact_line`),
            // and the structured reply neither reasons nor chunks: the
            // files that fill a default reply stay cheap in both (the
            // structured reply within 2.5 times the text's tokens,
            // tests/e2e/test_gate.py).
            if i >= crate::rank::QUERY_LIMIT {
                f.why.features = crate::rank::Features::default();
                f.why.class_reason.clear();
                f.chunks.clear();
                continue;
            }
            if i >= kept.full {
                f.chunks.truncate(1);
                for c in &mut f.chunks {
                    c.content.clear();
                    c.signature.clear();
                    c.meta = crate::chunk::Facts::default();
                    c.related.clear();
                }
                continue;
            }
            let shown = kept.code_lines.get(i).map_or(&[][..], Vec::as_slice);
            // A full file may show fewer chunks than it has (`Layout::new`).
            f.chunks.truncate(shown.len());
            for (j, c) in f.chunks.iter_mut().enumerate() {
                let n = shown.get(j).copied().unwrap_or(0);
                c.content = c
                    .content
                    .lines()
                    .take(n)
                    .map(|l| format!("{l}\n"))
                    .collect();
            }
        }
    }
}

/// The reply of `query` (the structured result, its text within
/// `max_tokens`, what the text showed): what the MCP tool and the CLI
/// (`code-intel query`) give.
pub(crate) fn query_reply(
    answer: crate::rank::QueryAnswer,
    index: crate::index::Readiness,
    max_tokens: usize,
) -> (QueryResult, String, Shown) {
    let mut result = QueryResult::new(answer, index);
    let (text, shown, kept) = query_text(&result, max_tokens);
    result.keep_shown(&kept);
    (result, text, shown)
}

/// How a `query` reply spends its budget (estimated tokens): every ranked
/// file gets one line first (up to half the room: naming the whole change
/// set matters more than code), then the best [`QUERY_CODE_FILES`] files
/// get their full entry (chunks, facts) while the lines stay within two
/// thirds of the room, and their code shares what is left.
struct Layout {
    /// The text of each file listed (in rank order): its full entry (header
    /// and one line per chunk, before the code) or its one line.
    entries: Vec<Vec<String>>,
    /// The first `full` entries are full ones and show code.
    full: usize,
    /// Code tokens per shown chunk.
    per_chunk: usize,
}

impl Layout {
    fn new(files: &[RankedFile], room: usize, deleting: bool) -> Layout {
        let cost = |lines: &[String]| -> usize {
            lines
                .iter()
                .map(|l| super::budget::estimate_tokens(l))
                .sum()
        };
        let mut used = 0;
        let mut entries: Vec<Vec<String>> = Vec::new();
        let listed = class_names(files);
        for (i, f) in files.iter().enumerate() {
            let line = vec![compact_line(i, f, &listed, deleting)];
            let c = cost(&line);
            if used + c > room / 2 {
                break;
            }
            used += c;
            entries.push(line);
        }
        // First the best chunk of each code-showing file, then the rest of
        // their chunks while they fit: the file to edit is often the second
        // or third, and a first file's class outline (its facts, its
        // related symbols) took the room of every other file's code in the
        // honest agent trial (bench/README.md § Honest agent trial: "the
        // file to edit listed without code").
        let code_files = entries.len().min(QUERY_CODE_FILES);
        let mut shown = vec![0usize; code_files];
        let mut full_n = 0;
        for (i, f) in files.iter().enumerate().take(code_files) {
            let full = file_lines(i, f, 1);
            let extra = cost(&full).saturating_sub(cost(&entries[i]));
            if used + extra > room * 2 / 3 {
                break;
            }
            used += extra;
            shown[i] = f.chunks.len().min(1);
            entries[i] = full;
            full_n += 1;
        }
        // Code tokens each of `chunks` shown chunks gets once `used` is
        // spent; each chunk's code may end in a "…" line past its share.
        let ellipsis = super::budget::estimate_tokens(&format!("{CODE_PREFIX}…\n"));
        let per_chunk = |used: usize, chunks: usize| {
            room.saturating_sub(used + chunks * ellipsis) / chunks.max(1)
        };
        for (i, f) in files.iter().enumerate().take(full_n) {
            if f.chunks.len() <= 1 {
                continue;
            }
            let full = file_lines(i, f, f.chunks.len());
            let extra = cost(&full).saturating_sub(cost(&entries[i]));
            let chunks = shown.iter().sum::<usize>() + f.chunks.len() - shown[i];
            if used + extra <= room * 2 / 3
                && per_chunk(used + extra, chunks) >= MIN_CHUNK_CODE_TOKENS
            {
                used += extra;
                shown[i] = f.chunks.len();
                entries[i] = full;
            }
        }
        Layout {
            entries,
            full: full_n,
            per_chunk: per_chunk(used, shown.iter().sum()),
        }
    }
}

/// The line that says a search found nothing, and why it may have.
pub(super) fn no_results(readiness: &crate::index::Readiness) -> &'static str {
    if readiness.state == crate::index::IndexState::Ready {
        "no results"
    } else {
        "no results yet: the index is not complete"
    }
}

/// One "also check" entry of a `query` reply: the file, its class, the
/// kinds of edges that tie it to the top files (`class ←`: it uses one of
/// them) and its co-change confidence; `related_files` gives the lines.
fn also_line(i: usize, r: &crate::graph::Related) -> String {
    format!(
        "  {}. {} [{}]: {}\n",
        i + 1,
        r.file,
        r.class.name(),
        related_reasons(r).join(", ")
    )
}

/// Why a related file is listed: the kinds of its edges in the order they
/// were found (each once), then its co-change confidence.
fn related_reasons(r: &crate::graph::Related) -> Vec<String> {
    let mut why: Vec<String> = Vec::new();
    for e in &r.edges {
        let kind = super::graph_tools::tie_kind_text(e);
        if !why.contains(&kind) {
            why.push(kind);
        }
    }
    if let Some(c) = r.cochange {
        why.push(format!("co-changed {:.0}%", c * 100.0));
    }
    why
}

/// A line of the `tests` list: the file and its first tie only (a name
/// match before a reference before co-change, as `graph::tests_for` finds
/// them; no class tag: the heading says they are tests), so that eight
/// tests take about the room five full lines did within the reply's budget.
fn test_line(i: usize, r: &crate::graph::Related) -> String {
    let why = related_reasons(r).into_iter().next().unwrap_or_default();
    format!("  {}. {}: {}\n", i + 1, r.file, why)
}

/// Japanese terms the plan line shows with their English words, at most;
/// the rest are counted ("+10 more"). A Japanese request's terms cost one
/// estimated token a char: a koel ticket's 18 terms took 300 of the
/// reply's 1,200 tokens and left two ranked files out (bench/README.md §
/// Change sets).
const PLAN_TRANSLATIONS: usize = 8;

/// The plan in one line: keywords, Japanese terms with their English
/// words (the keywords leave out the words shown there), identifiers,
/// framework kinds.
fn plan_line(plan: &QueryPlan) -> String {
    let mut from_japanese = std::collections::BTreeSet::new();
    let mut translated: Vec<String> = plan
        .translated
        .iter()
        .take(PLAN_TRANSLATIONS)
        .map(|t| {
            let words: Vec<&str> = t.words.iter().map(|(w, _)| w.as_str()).collect();
            from_japanese.extend(words.iter().map(|w| w.to_lowercase()));
            format!("{}→{}", t.term, words.join("/"))
        })
        .collect();
    if plan.translated.len() > PLAN_TRANSLATIONS {
        translated.push(format!(
            "+{} more",
            plan.translated.len() - PLAN_TRANSLATIONS
        ));
    }
    let keywords: Vec<String> = plan
        .keywords
        .iter()
        .filter(|k| !from_japanese.contains(k.as_str()))
        .cloned()
        .collect();
    let part = |label: &str, items: &[String]| {
        if items.is_empty() {
            String::new()
        } else {
            format!("; {label} [{}]", items.join(", "))
        }
    };
    // The translated words are keywords too: "keywords [api]; translated
    // …" read as "only api" to an agent in the honest trial.
    let words = match (keywords.is_empty(), translated.is_empty()) {
        (_, true) => format!("[{}]", keywords.join(", ")),
        (true, false) => format!("from Japanese {}", translated.join(", ")),
        (false, false) => format!(
            "[{}] + from Japanese {}",
            keywords.join(", "),
            translated.join(", ")
        ),
    };
    format!(
        "plan: keywords {words}{}{}\n",
        part("identifiers", &plan.identifiers),
        part("kinds", &plan.kind_hints),
    )
}

/// The `i`-th file's header line (rank, path, class, why) and one line per
/// chunk of its first `chunks` (lines, kind, name, signature, framework
/// facts, related symbols).
fn file_lines(i: usize, f: &RankedFile, chunks: usize) -> Vec<String> {
    use crate::chunk::facts::Fact;
    let mut out = vec![format!(
        "{}. {} [{}] ({})\n",
        i + 1,
        f.file,
        f.class.name(),
        reasons(f).join(", ")
    )];
    for c in f.chunks.iter().take(chunks) {
        let signature = c.signature.lines().next().unwrap_or("").trim();
        // A long definition is chunked in parts of its lines
        // (`chunk::split`); a part after the first does not hold its
        // signature. Two trial agents took `65-90 method …::run` for the
        // whole method, which starts at line 26 (bench/README.md § Honest
        // agent trial).
        let part = if !signature.is_empty() && !c.content.contains(signature) {
            "part of "
        } else {
            ""
        };
        let mut line = format!(
            "   {}-{} {part}{} {}  {signature}\n",
            c.start_line,
            c.end_line,
            c.kind,
            c.fqcn.as_deref().unwrap_or(&c.name),
        );
        // A class's imports by their short names: as FQCNs in the facts
        // they took most of a controller's entry (300 chars of
        // `App\Http\Requests\Api\…`), the room of the next files' code.
        let (imports, rest): (Vec<&Fact>, Vec<&Fact>) =
            c.meta.iter().partition(|f| matches!(f, Fact::Imports(_)));
        if !rest.is_empty() {
            // Over 300 chars the JSON would be cut mid-string (a trial agent
            // read `"related":"App\\Mod` as broken): the facts' own summary
            // line says the same in fewer chars, cut between its parts.
            let facts = crate::chunk::Facts::from_iter(rest.into_iter().cloned());
            let json = facts.to_json();
            let facts = if json.chars().count() <= FACTS_CHARS {
                json
            } else {
                facts.summary(FACTS_CHARS)
            };
            line.push_str(&format!("     facts: {facts}\n"));
        }
        if let Some(Fact::Imports(names)) = imports.first() {
            let short: Vec<&str> = names
                .iter()
                .map(|n| n.rsplit('\\').next().unwrap_or(n))
                .collect();
            let short: String = short.join(", ").chars().take(200).collect();
            line.push_str(&format!("     imports: {short}\n"));
        }
        if !c.related.is_empty() {
            line.push_str(&format!("     related: {}\n", c.related.join(", ")));
        }
        out.push(line);
    }
    out
}

/// The class names the listed files are named after (`FeedRequest` for
/// `app/Http/Requests/Api/FeedRequest.php`).
fn class_names(files: &[RankedFile]) -> std::collections::HashSet<&str> {
    files
        .iter()
        .map(|f| crate::util::file_stem(&f.file))
        .collect()
}

/// What a class chunk's first signature line says it extends or
/// implements (` extends FeedRequest`), at most 80 chars, when one of
/// those parents is a class of another listed file (`listed`,
/// [`class_names`]); empty otherwise. A compact line named
/// `ArticleListRequest` alone, and an agent in a trial had to read the
/// file to learn it was a `FeedRequest` (bench/README.md § Honest agent
/// trial); every parent (`Controller`, `Model`) cost 0.2–0.4 files of the
/// change-set replies' 1,200 tokens (§ Change sets).
fn parents(c: &FileChunk, listed: &std::collections::HashSet<&str>) -> String {
    if !matches!(c.kind.as_str(), "class" | "interface" | "enum") {
        return String::new();
    }
    let line = c.signature.lines().next().unwrap_or("");
    let Some(at) = [" extends ", " implements "]
        .iter()
        .filter_map(|k| line.find(k))
        .min()
    else {
        return String::new();
    };
    let rest = line[at..].trim_end().trim_end_matches('{').trim_end();
    let names = rest
        .split(|ch: char| ch == ',' || ch.is_whitespace())
        .map(|w| w.rsplit('\\').next().unwrap_or(w));
    if !names.into_iter().any(|n| listed.contains(n)) {
        return String::new();
    }
    clipped(rest, 80)
}

/// `text` up to `max_chars` chars, then ` …` when it went on.
fn clipped(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{} …", &text[..cut]),
        None => text.to_string(),
    }
}

/// Stems of the English words (Japanese terms' too: 削除 → delete) that
/// ask what deleting a row does.
const DELETE_STEMS: &[&str] = &["delet", "remov", "cascad", "destroy", "purg", "orphan"];

/// The request speaks of deleting or removing something
/// ([`DELETE_STEMS`]): then a migration's compact line names its foreign
/// keys ([`foreign_keys`]). Always naming them cost filamentphp/demo's
/// migration-heavy change-set replies 0.3–0.9 files of 20 within the
/// 1,200-token budget, and one Japanese commit its whole change
/// (bench/README.md § Change sets).
fn asks_about_deleting(plan: &QueryPlan) -> bool {
    plan.keywords
        .iter()
        .any(|k| DELETE_STEMS.iter().any(|s| k.starts_with(s)))
}

/// A migration chunk's foreign keys in a few words
/// (` · article_id → articles on delete cascade, author_id → users`), at
/// most 120 chars; empty for any other chunk or a table without one. An
/// agent in a trial read both migrations of a delete-cascade ticket to
/// learn whether their keys already cascade, which the compact line named
/// only as `16-24 comments` (bench/README.md § Honest agent trial).
fn foreign_keys(c: &FileChunk) -> String {
    use crate::chunk::facts::Fact;
    if c.kind != "table_schema" {
        return String::new();
    }
    let Some(keys) = c.meta.iter().find_map(|f| match f {
        Fact::ForeignKeys(k) => Some(k),
        _ => None,
    }) else {
        return String::new();
    };
    let parts: Vec<String> = keys
        .iter()
        .filter_map(|k| {
            let (column, table) = (k.column.as_deref()?, k.on.as_deref()?);
            Some(match &k.on_delete {
                Some(action) => format!("{column} → {table} on delete {action}"),
                None => format!("{column} → {table}"),
            })
        })
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!(" · {}", clipped(&parts.join(", "), 120))
}

/// The `i`-th file in one line (rank, path, class, its first three reasons,
/// the best chunk's lines and name): files past the code-showing ones, so that
/// a reply within the default budget names every ranked file. Past the
/// default limit's ten (the files that fill a default reply up to
/// `rank::REPLY_FILES`) the reasons are left out, about a third of the
/// line: on koel's change-set tickets the 1,200-token budget otherwise cut
/// the filled list to 18.8 files of 20.
fn compact_line(
    i: usize,
    f: &RankedFile,
    listed: &std::collections::HashSet<&str>,
    deleting: bool,
) -> String {
    let mut why = reasons(f);
    why.truncate(if i < crate::rank::QUERY_LIMIT { 3 } else { 0 });
    let best = f
        .chunks
        .first()
        .map(|c| {
            format!(
                " {}-{} {}{}{}",
                c.start_line,
                c.end_line,
                c.fqcn.as_deref().unwrap_or(&c.name),
                parents(c, listed),
                if deleting {
                    foreign_keys(c)
                } else {
                    String::new()
                }
            )
        })
        .unwrap_or_default();
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({})", why.join(", "))
    };
    format!("{}. {} [{}]{why}{best}\n", i + 1, f.file, f.class.name())
}

/// From this `recency` a reason says the file changed lately: its last
/// change is among the newest 0.7 % of the history's files (e^(−0.69) =
/// 0.5).
const RECENT: f32 = 0.5;

/// Why a file ranked, in words, strongest signals first.
fn reasons(f: &RankedFile) -> Vec<String> {
    let w = &f.why.features;
    let mut reasons = Vec::new();
    for (name, v) in [
        ("keyword", w.keyword),
        ("chunk", w.chunk_keyword),
        ("vector", w.vector),
        ("path", w.path),
        ("definition", w.definition),
        ("graph", w.graph),
        ("co-change", w.cochange),
        ("quoted", w.quoted),
        ("phrase", w.phrase),
    ] {
        if v > 0.0 {
            reasons.push(format!("{name} {v:.2}"));
        }
    }
    if w.recency >= RECENT {
        reasons.push(format!("recent {:.2}", w.recency));
    }
    if w.named > 0.0 {
        reasons.push("named in the request".into());
    }
    if w.identifier > 0.0 {
        reasons.push("identifier".into());
    }
    if w.kind > 0.0 {
        reasons.push("kind".into());
    }
    if f.why.class_prior != 0.0 {
        reasons.push(format!("{} prior {:.2}", f.class.name(), f.why.class_prior));
    }
    reasons
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::FileClass;
    use crate::rank::Why;

    fn chunk(name: &str, related: usize) -> FileChunk {
        FileChunk {
            start_line: 1,
            end_line: 20,
            kind: "method".into(),
            name: name.into(),
            fqcn: Some(format!("App\\Http\\Controllers\\ArticleController::{name}")),
            signature: format!("public function {name}()"),
            content: (0..20).map(|i| format!("    $line{i} = {i};\n")).collect(),
            meta: Default::default(),
            related: (0..related)
                .map(|i| format!("App\\Http\\Requests\\Api\\Request{i}"))
                .collect(),
            cosine: 0.0,
            bm25: 0.0,
        }
    }

    fn file(path: &str, chunks: Vec<FileChunk>) -> RankedFile {
        RankedFile {
            file: path.into(),
            class: FileClass::Source,
            score: 1.0,
            why: Why {
                features: Default::default(),
                cosine: 0.0,
                class_prior: 0.0,
                class_reason: String::new(),
            },
            chunks,
        }
    }

    /// A reply of `files` for the request "article list limit".
    fn query_result(files: Vec<RankedFile>) -> QueryResult {
        QueryResult {
            plan: crate::rank::plan::plan("article list limit"),
            files_shown: files.len(),
            files,
            also_check: vec![],
            tests: vec![],
            requested_kinds: vec![],
            index: crate::index::Readiness {
                state: crate::index::IndexState::Ready,
                files_indexed: 1,
                chunks: 1,
                sync_files_done: None,
                sync_files_total: None,
                last_sync: None,
                message: "index ready".into(),
            },
            timings: Default::default(),
            session: None,
        }
    }

    /// A chunk that does not hold its definition's signature is a later
    /// part of a long definition, and its line says so; the first part,
    /// which starts with the signature, does not.
    #[test]
    fn a_later_part_of_a_definition_says_so() {
        let mut first = chunk("run", 0);
        first.content = format!("    public function run()\n    {{\n{}", first.content);
        let later = chunk("run", 0);
        let header = |c: FileChunk| file_lines(0, &file("app/A.php", vec![c]), 1)[1].clone();
        assert!(
            header(first).starts_with("   1-20 method App\\Http"),
            "first part"
        );
        let line = header(later);
        assert!(
            line.starts_with(
                "   1-20 part of method App\\Http\\Controllers\\ArticleController::run"
            ),
            "{line}"
        );
    }

    /// A compact line says what a class extends or implements when that is
    /// a listed file's class; a method's line, or a class extending only
    /// classes that are not listed, says nothing more.
    #[test]
    fn a_compact_line_names_a_listed_parent() {
        let mut class = chunk("ArticleListRequest", 0);
        class.kind = "class".into();
        class.fqcn = Some("App\\Http\\Requests\\Api\\ArticleListRequest".into());
        class.signature =
            "class ArticleListRequest extends Api\\FeedRequest implements Bar {".into();
        let f = file("app/Http/Requests/Api/ArticleListRequest.php", vec![class]);
        let files = [
            f.clone(),
            file("app/Http/Requests/Api/FeedRequest.php", vec![]),
        ];
        let line = compact_line(2, &f, &class_names(&files), false);
        assert!(
            line.ends_with("1-20 App\\Http\\Requests\\Api\\ArticleListRequest extends Api\\FeedRequest implements Bar\n"),
            "{line}"
        );
        let alone = compact_line(2, &f, &class_names(&files[..1]), false);
        assert!(alone.ends_with("ArticleListRequest\n"), "{alone}");
        let line = compact_line(
            2,
            &file("app/A.php", vec![chunk("list", 0)]),
            &class_names(&files),
            false,
        );
        assert!(line.ends_with("ArticleController::list\n"), "{line}");
    }

    /// A migration's compact line says where its foreign keys point and
    /// what deleting the referenced row does, when the migration says it.
    #[test]
    fn a_migration_line_names_its_foreign_keys() {
        use crate::chunk::facts::{Fact, ForeignKey};
        let key = |column: &str, on: &str, action: Option<&str>| ForeignKey {
            column: Some(column.into()),
            references: Some("id".into()),
            on: Some(on.into()),
            on_delete: action.map(Into::into),
        };
        let mut schema = chunk("comments", 0);
        schema.kind = "table_schema".into();
        schema.fqcn = None;
        schema.meta = crate::chunk::Facts::from_iter([Fact::ForeignKeys(vec![
            key("article_id", "articles", Some("cascade")),
            key("author_id", "users", None),
        ])]);
        let f = file(
            "database/migrations/2021_05_23_create_comments_table.php",
            vec![schema],
        );
        let listed = class_names(std::slice::from_ref(&f));
        let line = compact_line(4, &f, &listed, true);
        assert!(
            line.ends_with(
                "1-20 comments · article_id → articles on delete cascade, author_id → users\n"
            ),
            "{line}"
        );
        assert!(compact_line(4, &f, &listed, false).ends_with("1-20 comments\n"));
        let plain = file("app/A.php", vec![chunk("comments", 0)]);
        let line = compact_line(4, &plain, &class_names(std::slice::from_ref(&plain)), true);
        assert!(!line.contains('→'), "{line}");
        // Only a request about deleting asks for them, in either language.
        use crate::rank::plan::plan;
        assert!(asks_about_deleting(&plan(
            "Deleting an article leaves its comments behind"
        )));
        assert!(asks_about_deleting(&plan("記事を削除してもコメントが残る")));
        assert!(!asks_about_deleting(&plan(
            "Show the article's comments newest first"
        )));
    }

    /// A Japanese request's plan line shows its first terms with their
    /// English words, counts the rest, and does not repeat those words
    /// among the keywords.
    #[test]
    fn a_japanese_plan_line_is_short() {
        let mut p = crate::rank::plan::plan(
            "ジャンル一覧画面のレイアウトと描画を速くして（CSS の content-visibility: auto）",
        );
        // The server's plan also reads katakana through the vocabulary
        // (ジャンル → genre): a koel ticket had 18 terms.
        for (term, word) in [
            ("ジャンル", "genre"),
            ("カード", "card"),
            ("グリッド", "grid"),
        ]
        .iter()
        .cycle()
        .take(PLAN_TRANSLATIONS)
        {
            p.keywords.push(word.to_string());
            p.translated.push(crate::rank::plan::Translation {
                term: term.to_string(),
                words: vec![(word.to_string(), 1.0)],
                via: p.translated[0].via,
            });
        }
        let line = plan_line(&p);
        let more = format!("+{} more", p.translated.len() - PLAN_TRANSLATIONS);
        assert!(
            line.contains(&more) && line.contains("] + from Japanese "),
            "{line}"
        );
        assert_eq!(line.matches('→').count(), PLAN_TRANSLATIONS, "{line}");
        let keywords = line.split(']').next().unwrap();
        assert!(
            keywords.contains("css") && !keywords.contains("genre"),
            "{line}"
        );
        assert!(super::super::budget::estimate_tokens(&line) < 150, "{line}");
        // An English request's line is as it was: every keyword.
        let en = plan_line(&crate::rank::plan::plan("Show the genre list faster"));
        assert!(
            en.starts_with("plan: keywords [") && en.contains("genre"),
            "{en}"
        );
    }

    /// Facts that fit are JSON; longer ones are the facts' summary line,
    /// never JSON cut mid-string.
    #[test]
    fn long_facts_are_summarised_not_cut() {
        use crate::chunk::facts::Fact;
        let facts_line = |fillable: Vec<String>| {
            let mut c = chunk("Article", 0);
            c.meta = crate::chunk::Facts::from_iter([Fact::Fillable(fillable)]);
            let lines = file_lines(0, &file("app/Models/Article.php", vec![c]), 1).concat();
            lines
                .lines()
                .find_map(|l| l.trim().strip_prefix("facts: ").map(str::to_string))
                .unwrap()
        };
        assert_eq!(
            facts_line(vec!["title".into()]),
            r#"{"fillable":["title"]}"#
        );
        let long = facts_line((0..60).map(|i| format!("column_number_{i}")).collect());
        assert!(!long.starts_with('{'), "{long}");
        assert!(long.starts_with("fillable: column_number_0"), "{long}");
        assert!(long.chars().count() <= FACTS_CHARS + 1, "{long}");
    }

    /// A chunk shown whole reads its whole span, the blank lines its
    /// content leaves off at the end too; one cut by the budget reads the
    /// lines shown.
    #[test]
    fn a_chunk_shown_whole_reads_its_span() {
        let read = |c: FileChunk, max_tokens: usize| {
            let o = query_result(vec![file("resources/views/a.blade.php", vec![c])]);
            let (_, seen, _) = query_text(&o, max_tokens);
            seen.read.get("resources/views/a.blade.php").cloned()
        };
        let mut whole = chunk("section", 0);
        whole.end_line = 21;
        assert_eq!(read(whole, 2000), Some(vec![(1, 21)]));
        let mut long = chunk("section", 0);
        long.content = (0..200).map(|i| format!("    $line{i} = {i};\n")).collect();
        long.end_line = 201;
        let cut = read(long, 400).expect("some lines shown");
        assert!(cut[0].0 == 1 && cut[0].1 < 200, "{cut:?}");
    }

    /// Of a class outline, only the lines before its first elided member
    /// count as read: the chunk's later lines are not the file's lines at
    /// those offsets, and the members' bodies were not shown.
    #[test]
    fn an_outline_reads_only_its_lines_before_the_first_elided_member() {
        let mut outline = chunk("ArticleController", 0);
        outline.start_line = 16;
        outline.end_line = 133;
        outline.kind = "class".into();
        outline.content = [
            "class ArticleController extends Controller",
            "{",
            "    protected const FILTER_LIMIT = 20;",
            "    public function list(ArticleListRequest $request) …",
            "",
            "    public function feed(FeedRequest $request) …",
            "}",
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
        let files = vec![file("app/A.php", vec![outline])];
        let o = query_result(files);
        let (text, seen, _) = query_text(&o, 2000);
        assert!(
            text.contains("public function feed(FeedRequest $request) …"),
            "{text}"
        );
        assert_eq!(seen.read.get("app/A.php"), Some(&vec![(16, 18)]));
    }

    /// A best file whose chunks' headers do not fit beside the others'
    /// code shows its best chunk, with code, rather than no file showing
    /// any.
    /// The code-showing files each get their best chunk before the first
    /// file gets its others: a first file's long class outline no longer
    /// leaves the second and third without code. A class's imports are
    /// listed by their short names.
    #[test]
    fn each_code_file_shows_its_best_chunk_before_the_first_shows_more() {
        use crate::chunk::facts::Fact;
        let mut outline = chunk("ArticleController", 20);
        outline.kind = "class".into();
        outline.meta = crate::chunk::Facts::from_iter([Fact::Imports(vec![
            "App\\Http\\Requests\\Api\\FeedRequest".into(),
            "App\\Models\\Article".into(),
        ])]);
        let files = vec![
            file("app/A.php", vec![chunk("list", 0), outline]),
            file("app/B.php", vec![chunk("rules", 0)]),
            file("app/C.php", vec![chunk("feed", 0)]),
        ];
        // The first file whole (230 tokens of the 280 two thirds of 420
        // give code files) would leave the third without code; each best
        // chunk first (about 85 in all) shows all three.
        let layout = Layout::new(&files, 420, false);
        assert_eq!(layout.full, 3, "{:?}", layout.entries);
        assert_eq!(
            layout.entries[0].len(),
            2,
            "the first file's best chunk only"
        );
        let outline_lines = file_lines(0, &files[0], 2).concat();
        assert!(
            outline_lines.contains("imports: FeedRequest, Article\n"),
            "{outline_lines}"
        );
        assert!(!outline_lines.contains("facts:"), "{outline_lines}");
    }

    #[test]
    fn a_file_whose_chunks_do_not_fit_shows_its_best_one() {
        let files = vec![
            file("app/A.php", vec![chunk("list", 2), chunk("feed", 100)]),
            file("app/B.php", vec![chunk("rules", 0)]),
        ];
        let room = 600;
        let cost = |lines: &[String]| -> usize {
            lines
                .iter()
                .map(|l| crate::server::budget::estimate_tokens(l))
                .sum()
        };
        assert!(cost(&file_lines(0, &files[0], 2)) > room * 2 / 3);
        let layout = Layout::new(&files, room, false);
        assert!(layout.full >= 1, "no file shows code");
        assert_eq!(layout.entries[0].len(), 2, "the header and its best chunk");
        assert!(layout.per_chunk > 0);
    }
}
