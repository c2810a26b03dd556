//! The second stage of the ranking and the reply's "also check" list, from
//! one [`graph::related`] call over the files the first stage ranks best:
//! their code-graph neighbours and co-change partners become the `graph`
//! and `cochange` features of every candidate (the graph stage), and the
//! strong ones the ranking left out are what the change likely needs too.

use std::collections::HashMap;

use super::fuse::best_first;
use super::{HybridWeights, RankedFile, Why};
use crate::classify::{self, FileClass};
use crate::graph::{self, Related};
use crate::index::CodeGraph;

/// Files the first stage ranks best whose graph neighbours and co-change
/// partners are read: for the `graph` and `cochange` features and for the
/// reply's "also check" list (fewer when the request asks for fewer files).
const GRAPH_SEEDS: usize = 3;

/// Related files of the seeds [`graph::related`] is asked for.
const RELATED_LIMIT: usize = 50;

/// Files of a `query` reply's "also check" list from the seeds' related
/// files, at most.
const ALSO_CHECK_FILES: usize = 5;
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
/// Listed files whose own related files [`spread_partners`] reads, and
/// the files it adds at most. Replayed over the change-set rows of koel's
/// and filamentphp/demo's development tickets (bench/README.md § Change
/// sets): the first five listed files, each weighted by its place, two
/// files: all found 0.206 → 0.238 on koel, 0.676 on demo either way, for
/// two more files shown; ten listed files or five files added found less
/// for more shown.
const SPREAD_SEEDS: usize = 5;
const SPREAD_FILES: usize = 2;

/// Tests of a `query` reply's `tests` line, at most. 8 rather than 5: on
/// the change-set development tickets (bench/README.md § Change sets) the
/// line then names 38 rather than 30 of the 89 test files the changes
/// modified, for 2.3 more paths per koel reply (6.9 listed, from 4.6).
const TESTS: usize = 8;
/// What a file of "also check" weighs when its tests are looked for (the
/// tenth listed file weighs 0.25).
const ALSO_CHECK_TEST_WEIGHT: f32 = 0.25;

/// The related files of the first stage's best files (`ranked`, best
/// first): the best [`GRAPH_SEEDS`], or `limit` when fewer are asked for.
pub(super) fn seed_partners(g: &CodeGraph, ranked: &[RankedFile], limit: usize) -> Vec<Related> {
    let seeds: Vec<String> = ranked
        .iter()
        .take(GRAPH_SEEDS.min(limit))
        .map(|f| f.file.clone())
        .collect();
    graph::related(&g.graph, Some(&g.history), &seeds, RELATED_LIMIT)
}

/// The second stage: every candidate's edges to and co-change with the
/// seeds (`partners`) enter its score; with `add` (a search of the whole
/// index: no path, language or class scope the neighbours could fall
/// outside of), neighbours that were not candidates join with those
/// features alone (no chunk matched them). `ranked` is best first again
/// after it.
pub(super) fn graph_stage(
    ranked: &mut Vec<RankedFile>,
    partners: &[Related],
    weights: &HybridWeights,
    requested: &[FileClass],
    add: bool,
) {
    let mut index: HashMap<String, usize> = ranked
        .iter()
        .enumerate()
        .map(|(i, f)| (f.file.clone(), i))
        .collect();
    for r in partners {
        if !add && !index.contains_key(&r.file) {
            continue;
        }
        let i = *index.entry(r.file.clone()).or_insert_with(|| {
            let class = classify::classify_path(&r.file);
            ranked.push(RankedFile {
                file: r.file.clone(),
                class: class.class,
                score: 0.0,
                why: Why {
                    features: super::Features::default(),
                    cosine: 0.0,
                    class_prior: 0.0,
                    class_reason: class.reason,
                },
                chunks: Vec::new(),
            });
            ranked.len() - 1
        });
        let file = &mut ranked[i];
        file.why.features.graph = r.edge_score.min(1.0);
        file.why.features.cochange = r.cochange.unwrap_or(0.0);
        file.rescore(weights, requested);
    }
    best_first(ranked);
}

/// What the change likely needs besides the listed files: the seeds'
/// related files (`partners`) that the ranking left out, from
/// [`ALSO_CHECK_MIN_SCORE`] (at most [`ALSO_CHECK_FILES`]), then the
/// counterparts of every listed file (`EditUserForm.vue` for a listed
/// `AddUserForm.vue`: `graph::counterparts`), which are few and rarely
/// wrong, then the files that two or more listed files are tied to
/// (`graph::convergent`, at most [`ALSO_CHECK_CONVERGENT`]). A view most
/// views include (`graph::Graph::is_view_hub`) is never one of them.
pub(super) fn also_check(
    g: &CodeGraph,
    partners: &[Related],
    files: &[RankedFile],
) -> Vec<Related> {
    let listed: Vec<String> = files.iter().map(|f| f.file.clone()).collect();
    // A layout or an icon most views include is tied to every view. An
    // existing migration is tied to its model, but a change to a table
    // adds a migration: of the 103 migrations "also check" named on the
    // change-set development parts, none was a file the change modified
    // (bench/README.md § Change sets); a migration the request is about
    // ranks on its own.
    let hub = |file: &str| g.graph.is_view_hub(file) || graph::is_migration(file);
    let mut out: Vec<Related> = partners
        .iter()
        .filter(|r| !listed.contains(&r.file) && r.score >= ALSO_CHECK_MIN_SCORE && !hub(&r.file))
        .take(ALSO_CHECK_FILES)
        .cloned()
        .collect();
    out.extend(spread_partners(g, &listed, &out, &hub));
    for r in graph::counterparts(&g.graph, &listed) {
        if !out.iter().any(|o| o.file == r.file) {
            out.push(r);
        }
    }
    let shared: Vec<Related> = graph::convergent(
        &g.graph,
        Some(&g.history),
        &listed,
        graph::CONVERGENT_MIN_FILES,
        usize::MAX,
    )
    .into_iter()
    .filter(|r| !out.iter().any(|o| o.file == r.file) && !hub(&r.file))
    .take(ALSO_CHECK_CONVERGENT)
    .collect();
    out.extend(shared);
    out
}

/// The tests that exercise the listed files and "also check"
/// ([`graph::tests_for`], with the methods shown of each listed file as
/// its actions), at most [`TESTS`]: the `i`-th listed file
/// weighs 1 / (1 + i/3), as in [`spread_partners`], a file of "also check"
/// [`ALSO_CHECK_TEST_WEIGHT`].
pub(super) fn tests(g: &CodeGraph, files: &[RankedFile], also: &[Related]) -> Vec<Related> {
    let listed: Vec<(String, f32)> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.file.clone(), 1.0 / (1.0 + i as f32 / 3.0)))
        .chain(
            also.iter()
                .map(|r| (r.file.clone(), ALSO_CHECK_TEST_WEIGHT)),
        )
        .collect();
    // The methods shown of each listed file: tests named after an action.
    let actions: Vec<(String, String)> = files
        .iter()
        .flat_map(|f| {
            f.chunks.iter().filter(|c| c.kind == "method").map(|c| {
                let name = c.name.rsplit("::").next().unwrap_or(&c.name);
                (f.file.clone(), name.to_string())
            })
        })
        .collect();
    graph::tests_for(&g.graph, Some(&g.history), &listed, &actions, TESTS)
}

/// The related files of each of the first [`SPREAD_SEEDS`] listed files on
/// its own, the `i`-th weighted 1 / (1 + i/3), summed: a file the ranking
/// left out that the fourth listed file needs as much as the seeds'
/// partners need theirs. At most [`SPREAD_FILES`], from
/// [`ALSO_CHECK_MIN_SCORE`], none listed, already in `taken`, a test or a
/// hub.
fn spread_partners(
    g: &CodeGraph,
    listed: &[String],
    taken: &[Related],
    hub: &dyn Fn(&str) -> bool,
) -> Vec<Related> {
    let mut acc: Vec<Related> = Vec::new();
    for (i, seed) in listed.iter().take(SPREAD_SEEDS).enumerate() {
        let w = 1.0 / (1.0 + i as f32 / 3.0);
        for r in graph::related(&g.graph, Some(&g.history), std::slice::from_ref(seed), 30) {
            if listed.contains(&r.file)
                || taken.iter().any(|t| t.file == r.file)
                || r.class == FileClass::Test
                || hub(&r.file)
            {
                continue;
            }
            match acc.iter_mut().find(|a| a.file == r.file) {
                Some(a) => {
                    a.score += w * r.score;
                    a.edge_score += w * r.edge_score;
                    for t in r.edges {
                        if !a.edges.contains(&t) && a.edges.len() < 4 {
                            a.edges.push(t);
                        }
                    }
                    a.cochange = match (a.cochange, r.cochange) {
                        (Some(x), Some(y)) => Some(x.max(y)),
                        (x, y) => x.or(y),
                    };
                }
                None => acc.push(Related {
                    score: w * r.score,
                    edge_score: w * r.edge_score,
                    ..r
                }),
            }
        }
    }
    acc.retain(|r| r.score >= ALSO_CHECK_MIN_SCORE);
    graph::best_first(&mut acc, SPREAD_FILES);
    acc
}
