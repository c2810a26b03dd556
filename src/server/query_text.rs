//! The text of a `query` reply: the plan, every ranked file in one line or
//! (the best ones) with chunks, facts and code, and the "also check" list,
//! within the reply's token budget.

use super::Shown;
use super::budget::Budget;
use super::wire::QueryResult;
use crate::rank::{QueryPlan, RankedFile};

/// Default budget of a `query` reply, in estimated tokens: room for the plan,
/// ten files with why they ranked and the code of the best three. Chosen on
/// bench/agent_tasks.py, where an orienting `query` plus the reads of a task
/// must stay within 2,500 tokens per task.
pub(super) const QUERY_MAX_TOKENS: usize = 1200;

/// Files of a `query` reply that show code; the others are listed by name.
const QUERY_CODE_FILES: usize = 3;

/// The text of a `query` reply within `max_tokens`: the plan, the best
/// [`QUERY_CODE_FILES`] files with why they ranked, their chunks' lines,
/// framework facts, related symbols and code, then one line per other file.
/// `o` keeps what the text shows: files that do not fit are dropped, chunks
/// whose code is not shown lose their content; the [`Shown`] names the
/// files kept and the lines of code returned (only those count as read).
pub(super) fn query_text(o: &mut QueryResult, max_tokens: usize) -> (String, Shown) {
    let plan = &o.plan;
    let readiness = &o.index;
    // The "also check" lines are short and the point of the reply for a
    // change that spans files: their room is kept before the rest is laid out.
    let also: Vec<String> = o
        .also_check
        .iter()
        .enumerate()
        .map(|(i, r)| also_line(i, r))
        .collect();
    let also_cost: usize = also
        .iter()
        .map(|l| super::budget::estimate_tokens(l))
        .sum::<usize>()
        + if also.is_empty() { 0 } else { 12 };
    let mut b = Budget::new(max_tokens.saturating_sub(also_cost).max(100));
    b.force(&format!("{}\n", readiness.message));
    b.force(&plan_line(plan));
    if o.files.is_empty() {
        b.force(&format!("{}\n", no_results(readiness)));
    }
    let layout = Layout::new(&o.files, b.left());
    let keep = layout.entries.len();
    let mut seen = Shown::default();
    for (i, (f, h)) in o.files.iter_mut().zip(&layout.entries).enumerate() {
        seen.name(&f.file);
        if i >= layout.full {
            b.push(&h[0]);
            // The structured reply says what the line says: the best
            // chunk's place, no code, facts or signature.
            f.chunks.truncate(1);
            for c in &mut f.chunks {
                c.content.clear();
                c.signature.clear();
                c.meta.clear();
                c.related.clear();
            }
            continue;
        }
        b.push(&h[0]);
        for (c, line) in f.chunks.iter_mut().zip(&h[1..]) {
            b.push(line);
            let mut shown = String::new();
            let mut lines = 0;
            let mut left = layout.per_chunk;
            for l in c.content.lines() {
                let l = format!("     | {l}\n");
                let cost = super::budget::estimate_tokens(&l);
                if cost > left || !b.push(&l) {
                    b.push("     | …\n");
                    break;
                }
                left -= cost;
                shown.push_str(&l[7..]);
                lines += 1;
            }
            if !shown.is_empty() {
                let start = c.start_line as usize;
                seen.read(&f.file, start, start + lines - 1);
            }
            c.content = shown;
        }
    }
    if keep < o.files.len() {
        b.truncated = true;
        o.files.truncate(keep);
    }
    if !also.is_empty() {
        b.force("also check (code graph and co-change of the top files):\n");
        for l in &also {
            b.force(l);
        }
    }
    for r in &o.also_check {
        seen.name(&r.file);
    }
    let text = b.finish(
        "… cut to fit max_tokens: read_file the files above, lower limit, or raise max_tokens",
    );
    (text, seen)
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
    fn new(files: &[RankedFile], room: usize) -> Layout {
        let cost = |lines: &[String]| -> usize {
            lines
                .iter()
                .map(|l| super::budget::estimate_tokens(l))
                .sum()
        };
        let mut used = 0;
        let mut entries: Vec<Vec<String>> = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let line = vec![compact_line(i, f)];
            let c = cost(&line);
            if used + c > room / 2 {
                break;
            }
            used += c;
            entries.push(line);
        }
        let (mut full_n, mut chunks) = (0, 0);
        for (i, f) in files
            .iter()
            .enumerate()
            .take(entries.len().min(QUERY_CODE_FILES))
        {
            let full = file_lines(i, f);
            let extra = cost(&full).saturating_sub(cost(&entries[i]));
            if used + extra > room * 2 / 3 {
                break;
            }
            used += extra;
            chunks += f.chunks.len();
            entries[i] = full;
            full_n += 1;
        }
        Layout {
            entries,
            full: full_n,
            per_chunk: room.saturating_sub(used) / chunks.max(1),
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
    let mut why: Vec<String> = Vec::new();
    for e in &r.edges {
        let kind: String = e.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        if !why.contains(&kind) {
            why.push(kind);
        }
    }
    if let Some(c) = r.cochange {
        why.push(format!("co-changed {:.0}%", c * 100.0));
    }
    format!(
        "  {}. {} [{}]: {}\n",
        i + 1,
        r.file,
        r.class.name(),
        why.join(", ")
    )
}

/// Files of a `query` reply's "also check" list at most.
const ALSO_CHECK_FILES: usize = 5;
/// Top files of a `query` reply whose graph neighbours and co-change
/// partners are listed under "also check".
const ALSO_CHECK_SEEDS: usize = 3;
/// Files of "also check" that several listed files share, at most
/// (`graph::convergent`). Two, as measured with `bench/run.sh changeset`
/// (bench/README.md § Change sets): all files found in koel's multi-file
/// commits 0.238 → 0.238, filamentphp/demo's 0.450 → 0.475, and in the
/// held-out BookStack's 0.200 → 0.259, for about 1.5 more files per reply
/// (three gave the same on koel and demo).
const ALSO_CHECK_CONVERGENT: usize = 2;
/// A related file is listed under "also check" from this score (one edge
/// of a strong kind, or co-change confidence of a third).
const ALSO_CHECK_MIN_SCORE: f32 = 0.6;

/// What the change set likely needs besides the ranked files: code-graph
/// neighbours and co-change partners of the top files that the ranking
/// left out (at most [`ALSO_CHECK_FILES`]), then the counterparts of every
/// ranked file (`EditUserForm.vue` for a listed `AddUserForm.vue`:
/// `graph::counterparts`), which are few and rarely wrong, then the files
/// that two or more ranked files are tied to (`graph::convergent`, at most
/// [`ALSO_CHECK_CONVERGENT`]).
pub(super) fn also_check(
    graph: &crate::index::CodeGraph,
    files: &[RankedFile],
) -> Vec<crate::graph::Related> {
    let listed: Vec<String> = files.iter().map(|f| f.file.clone()).collect();
    let seeds = &listed[..listed.len().min(ALSO_CHECK_SEEDS)];
    let mut out: Vec<crate::graph::Related> =
        crate::graph::related(&graph.graph, Some(&graph.history), seeds, 50)
            .into_iter()
            .filter(|r| !listed.contains(&r.file) && r.score >= ALSO_CHECK_MIN_SCORE)
            .take(ALSO_CHECK_FILES)
            .collect();
    for r in crate::graph::counterparts(&graph.graph, &listed) {
        if !out.iter().any(|o| o.file == r.file) {
            out.push(r);
        }
    }
    let shared: Vec<crate::graph::Related> = crate::graph::convergent(
        &graph.graph,
        Some(&graph.history),
        &listed,
        crate::graph::CONVERGENT_MIN_FILES,
        usize::MAX,
    )
    .into_iter()
    .filter(|r| !out.iter().any(|o| o.file == r.file))
    .take(ALSO_CHECK_CONVERGENT)
    .collect();
    out.extend(shared);
    out
}

/// The plan in one line: keywords, Japanese terms with their English
/// words, identifiers, framework kinds.
fn plan_line(plan: &QueryPlan) -> String {
    let translated: Vec<String> = plan
        .translated
        .iter()
        .map(|t| {
            let words: Vec<&str> = t.words.iter().map(|(w, _)| w.as_str()).collect();
            format!("{}→{}", t.term, words.join("/"))
        })
        .collect();
    let part = |label: &str, items: &[String], bracket: bool| {
        if items.is_empty() {
            String::new()
        } else if bracket {
            format!("; {label} [{}]", items.join(", "))
        } else {
            format!("; {label} {}", items.join(", "))
        }
    };
    format!(
        "plan: keywords [{}]{}{}{}\n",
        plan.keywords.join(", "),
        part("translated", &translated, false),
        part("identifiers", &plan.identifiers, true),
        part("kinds", &plan.kind_hints, true),
    )
}

/// The `i`-th file's header line (rank, path, class, why) and one line per
/// chunk (lines, kind, name, signature, framework facts, related symbols).
fn file_lines(i: usize, f: &RankedFile) -> Vec<String> {
    let mut out = vec![format!(
        "{}. {} [{}] ({})\n",
        i + 1,
        f.file,
        f.class.name(),
        reasons(f)
    )];
    for c in &f.chunks {
        let mut line = format!(
            "   {}-{} {} {}  {}\n",
            c.start_line,
            c.end_line,
            c.kind,
            c.fqcn.as_deref().unwrap_or(&c.name),
            c.signature.lines().next().unwrap_or("").trim()
        );
        if !c.meta.is_empty() {
            let facts = serde_json::Value::Object(c.meta.clone()).to_string();
            let facts: String = facts.chars().take(300).collect();
            line.push_str(&format!("     facts: {facts}\n"));
        }
        if !c.related.is_empty() {
            line.push_str(&format!("     related: {}\n", c.related.join(", ")));
        }
        out.push(line);
    }
    out
}

/// The `i`-th file in one line (rank, path, class, its first three reasons,
/// the best chunk's lines and name): files past the code-showing ones, so that
/// a reply within the default budget names every ranked file.
fn compact_line(i: usize, f: &RankedFile) -> String {
    let why = reasons(f);
    let why: Vec<&str> = why.split(", ").take(3).collect();
    let best = f
        .chunks
        .first()
        .map(|c| {
            format!(
                " {}-{} {}",
                c.start_line,
                c.end_line,
                c.fqcn.as_deref().unwrap_or(&c.name)
            )
        })
        .unwrap_or_default();
    format!(
        "{}. {} [{}] ({}){best}\n",
        i + 1,
        f.file,
        f.class.name(),
        why.join(", ")
    )
}

/// Why a file ranked, in words.
fn reasons(f: &RankedFile) -> String {
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
    ] {
        if v > 0.0 {
            reasons.push(format!("{name} {v:.2}"));
        }
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
    reasons.join(", ")
}
