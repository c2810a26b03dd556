//! Ranking the files likely to change with a set of files: graph
//! neighbours one hop away, siblings under one parent, co-change partners,
//! callers of a symbol.

use super::*;

/// One file related to the seeds, with why.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Related {
    pub file: String,
    /// The file's class by its path (source, test, config, …).
    pub class: FileClass,
    /// Higher is closer: `edge_score` plus co-change confidence (weighted),
    /// times a class factor (source first).
    #[serde(serialize_with = "crate::util::round4")]
    pub score: f32,
    /// The edges' part: their weights summed (a hub counts less).
    #[serde(serialize_with = "crate::util::round4")]
    pub edge_score: f32,
    /// Edges that connect it to a seed (at most four, in [`Tie`] order).
    pub edges: Vec<Tie>,
    /// Co-change confidence P(file changes | a seed changes), 0-1, with the
    /// decayed count of commits that changed both.
    pub cochange: Option<f32>,
    pub cochange_commits: Option<f32>,
}

/// Which way an edge runs between a seed and a related file.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The seed refers to the related file (`view →`).
    Out,
    /// The related file refers to the seed (`view ←`).
    In,
}

/// Where a reference is: a repo-relative file and the 1-based line in it;
/// line 0 for a tie by name or table with no line of its own (a model and
/// its migration, factory or policy; an event and its listener).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema)]
pub struct Site {
    pub file: String,
    pub line: u32,
}

/// One reason a file is related to a seed: an edge of the code graph, a
/// sibling under the seed's parent, or a call of the seed's method.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub struct Tie {
    /// The edge's kind (`extends` for a sibling, `call` for a caller).
    pub kind: EdgeKind,
    pub direction: Direction,
    /// Set for a sibling: the parent class, interface or trait (a file)
    /// that the seed and the related file both extend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sibling_of: Option<String>,
    /// The file and line that make the reference.
    pub site: Site,
}

impl Tie {
    pub(super) fn of(e: &Edge, direction: Direction) -> Tie {
        Tie {
            kind: e.kind,
            direction,
            sibling_of: None,
            site: Site {
                file: e.from.clone(),
                line: e.line,
            },
        }
    }

    /// The label a reply shows first: the edge kind's name, or `sibling`.
    pub fn label(&self) -> &'static str {
        if self.sibling_of.is_some() {
            "sibling"
        } else {
            self.kind.name()
        }
    }
}

/// Ties sort by label, then parent, direction and site, so a reply lists
/// the same four whatever order the edges were found in.
impl Ord for Tie {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.label(), &self.sibling_of, self.direction, &self.site).cmp(&(
            other.label(),
            &other.sibling_of,
            other.direction,
            &other.site,
        ))
    }
}

impl PartialOrd for Tie {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Weight of an edge kind when ranking related files: Laravel's
/// conventions and inheritance say "changes together" more often than a
/// mention of a class in code does (from the change-set development sets,
/// bench/changeset.py).
pub(super) fn kind_weight(kind: EdgeKind) -> f32 {
    match kind {
        EdgeKind::View | EdgeKind::Component | EdgeKind::Livewire => 1.0,
        EdgeKind::Table | EdgeKind::Convention | EdgeKind::Counterpart => 1.0,
        EdgeKind::Listener => 0.8,
        EdgeKind::Extends => 0.8,
        EdgeKind::Route | EdgeKind::Config | EdgeKind::Trans => 0.7,
        // Chosen, not fitted: a named use, as a route or config
        // key is; too few development commits change a seeder or test
        // with a factory, or a command with what runs it, to fit them.
        EdgeKind::Factory | EdgeKind::Command => 0.7,
        EdgeKind::Import => 0.6,
        // Chosen, not fitted: no development set has enough
        // commits that change a requester with its controller, or a
        // resource with its type, to fit them (bench/README.md § Change sets).
        EdgeKind::Endpoint | EdgeKind::Shape => 0.8,
        EdgeKind::Class | EdgeKind::Call => 0.5,
    }
}

/// Children of one parent beyond which siblings are not related files.
const MAX_SIBLINGS: usize = 20;
/// A sibling's weight before damping: half an `extends` edge (0.8).
const SIBLING_WEIGHT: f32 = 0.4;

/// Tests, docs and the like change with code too, but the files a change
/// needs are source first (as `query`'s class prior says).
fn class_factor(class: FileClass) -> f32 {
    match class {
        FileClass::Source | FileClass::Config => 1.0,
        FileClass::Test => 0.6,
        _ => 0.4,
    }
}

/// Co-change confidence counts this much against one edge of weight 1. At
/// 1.0 / 2.0 / 3.0 the change-set development sets (bench/README.md §
/// Change sets) found all files of koel 0.226 / 0.226 / 0.214 of its
/// multi-file commits and of filamentphp/demo 0.375 / 0.425 / 0.425.
pub(super) const COCHANGE_WEIGHT: f32 = 2.0;

/// Files likely to change with `seeds`, best first, each with its reasons:
/// graph neighbours one hop away in either direction (a hub, a file with
/// many edges, counts less) and co-change partners. Seeds are left out.
pub fn related(
    graph: &Graph,
    history: Option<&cochange::CoChange>,
    seeds: &[String],
    limit: usize,
) -> Vec<Related> {
    let seed_set: BTreeSet<&str> = seeds.iter().map(String::as_str).collect();
    let mut acc: BTreeMap<String, Related> = BTreeMap::new();
    fn entry<'m>(
        acc: &'m mut BTreeMap<String, Related>,
        seeds: &BTreeSet<&str>,
        file: &str,
    ) -> Option<&'m mut Related> {
        if seeds.contains(file) {
            return None;
        }
        Some(
            acc.entry(file.to_string())
                .or_insert_with(|| Related::new(file)),
        )
    }
    for seed in seeds {
        for e in graph.out(seed) {
            // A file most of the repository points at says little.
            let fan = graph.inn(&e.to).len() as f32;
            let w = kind_weight(e.kind) / (1.0 + (fan / 10.0).ln_1p());
            if let Some(r) = entry(&mut acc, &seed_set, &e.to) {
                r.score += w;
                r.edge_score += w;
                r.edges.push(Tie::of(e, Direction::Out));
            }
        }
        for e in graph.inn(seed) {
            let fan = graph.out(&e.from).len() as f32;
            let w = kind_weight(e.kind) / (1.0 + (fan / 20.0).ln_1p());
            // A tie both ways with no line (a shared table, counterparts)
            // counts both ways but is said once, by the out-edge: its site
            // names the seed, this one's would repeat the file.
            let both_ways = e.line == 0
                && graph
                    .out(seed)
                    .iter()
                    .any(|o| o.to == e.from && o.kind == e.kind && o.line == 0);
            if let Some(r) = entry(&mut acc, &seed_set, &e.from) {
                r.score += w;
                r.edge_score += w;
                if !both_ways {
                    r.edges.push(Tie::of(e, Direction::In));
                }
            }
        }
        // Siblings: other implementations of the seed's parent class,
        // interface or trait (storage drivers, strategies), which a change
        // to the contract touches together. A parent with many children
        // (every controller's `Controller`) says nothing and is skipped.
        for up in graph
            .out(seed)
            .iter()
            .filter(|e| e.kind == EdgeKind::Extends)
        {
            let children: Vec<&Edge> = graph
                .inn(&up.to)
                .iter()
                .filter(|e| e.kind == EdgeKind::Extends && e.from != *seed)
                .collect();
            if children.len() > MAX_SIBLINGS {
                continue;
            }
            let w = SIBLING_WEIGHT / (1.0 + (children.len() as f32 / 5.0).ln_1p());
            for e in children {
                if let Some(r) = entry(&mut acc, &seed_set, &e.from) {
                    r.score += w;
                    r.edge_score += w;
                    r.edges.push(Tie {
                        sibling_of: Some(up.to.clone()),
                        ..Tie::of(e, Direction::In)
                    });
                }
            }
        }
        if let Some(h) = history {
            for (partner, conf, commits) in cochange_partners(graph, h, seed) {
                if let Some(r) = entry(&mut acc, &seed_set, &partner) {
                    r.add_cochange(1.0, conf, commits);
                }
            }
        }
    }
    let mut out: Vec<Related> = acc.into_values().collect();
    for r in &mut out {
        r.score *= class_factor(r.class);
        r.edges.sort();
        r.edges.dedup();
        r.edges.truncate(4);
    }
    best_first(&mut out, limit);
    out
}

/// The counterparts ([`EdgeKind::Counterpart`]) of `files` that are not
/// among them, each scored as one such edge (times its class factor) with
/// its counterpart tie (as [`related`] gives it), best first.
pub fn counterparts(graph: &Graph, files: &[String]) -> Vec<Related> {
    let mut out: Vec<Related> = Vec::new();
    for f in files {
        for e in graph
            .out(f)
            .iter()
            .filter(|e| e.kind == EdgeKind::Counterpart)
        {
            if files.contains(&e.to) || out.iter().any(|r| r.file == e.to) {
                continue;
            }
            let mut r = Related::new(&e.to);
            r.edge_score = kind_weight(e.kind);
            r.score = r.edge_score * class_factor(r.class);
            r.edges.push(Tie::of(e, Direction::Out));
            out.push(r);
        }
    }
    best_first(&mut out, usize::MAX);
    out
}

/// A file [`convergent`] keeps must be a graph neighbour of this many of
/// the files, at least.
pub const CONVERGENT_MIN_FILES: usize = 2;
/// ... with a [`related`] score of this much from each (an `import` edge
/// to a file with a few dozen importers still counts; a hub does not).
const CONVERGENT_MIN_SCORE: f32 = 0.3;

/// The files that [`related`] ties by graph edges (co-change alone does not
/// count) to at least `min_files` of `files` each, best first: most such
/// files, then the scores summed; at most `limit`. The files themselves are
/// left out. A change that edits several of them usually edits what they
/// share (the model two listed controllers use, the form two listed pages
/// embed): a file reached by several strong candidates.
/// Measured with `query`'s "also check" on the change-set sets
/// (bench/README.md § Change sets).
pub fn convergent(
    graph: &Graph,
    history: Option<&cochange::CoChange>,
    files: &[String],
    min_files: usize,
    limit: usize,
) -> Vec<Related> {
    let mut reach: BTreeMap<String, (usize, Related)> = BTreeMap::new();
    for f in files {
        for r in related(graph, history, std::slice::from_ref(f), 30) {
            if files.contains(&r.file) || r.edge_score <= 0.0 || r.score < CONVERGENT_MIN_SCORE {
                continue;
            }
            match reach.get_mut(&r.file) {
                Some((n, acc)) => {
                    *n += 1;
                    acc.score += r.score;
                    acc.edge_score += r.edge_score;
                    for why in r.edges {
                        if !acc.edges.contains(&why) {
                            acc.edges.push(why);
                        }
                    }
                }
                None => {
                    reach.insert(r.file.clone(), (1, r));
                }
            }
        }
    }
    let mut out: Vec<(usize, Related)> = reach
        .into_values()
        .filter(|(n, _)| *n >= min_files)
        .collect();
    out.sort_by(|(na, a), (nb, b)| {
        nb.cmp(na)
            .then_with(|| b.score.total_cmp(&a.score))
            .then_with(|| a.file.cmp(&b.file))
    });
    out.into_iter()
        .take(limit)
        .map(|(_, mut r)| {
            r.edges.truncate(4);
            r
        })
        .collect()
}

/// The co-change partners of `file` (at most 20, best first: file,
/// confidence, decayed commits) that the working tree still has: history
/// remembers files deleted since.
pub(super) fn cochange_partners(
    graph: &Graph,
    history: &cochange::CoChange,
    file: &str,
) -> Vec<(String, f32, f32)> {
    let mut partners = history.partners(file, 20);
    partners.retain(|(p, _, _)| graph.has_file(p));
    partners
}

impl Related {
    /// Adds co-change with a seed: confidence `conf` (0–1) over `commits`
    /// decayed commits, scored as [`COCHANGE_WEIGHT`] edges times `weight`;
    /// the reported confidence and commits are the best over the seeds.
    pub(super) fn add_cochange(&mut self, weight: f32, conf: f32, commits: f32) {
        self.score += weight * COCHANGE_WEIGHT * conf;
        self.cochange = Some(self.cochange.map_or(conf, |c| c.max(conf)));
        self.cochange_commits = Some(self.cochange_commits.map_or(commits, |c| c.max(commits)));
    }

    /// A file with no reason yet (score 0), classed by its path.
    pub(super) fn new(file: &str) -> Related {
        Related {
            file: file.to_string(),
            class: crate::classify::classify_path(file).class,
            score: 0.0,
            edge_score: 0.0,
            edges: Vec::new(),
            cochange: None,
            cochange_commits: None,
        }
    }
}

/// Sorts by score, best first (ties by path), and keeps `limit`.
pub fn best_first(related: &mut Vec<Related>, limit: usize) {
    related.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.file.cmp(&b.file))
    });
    related.truncate(limit);
}

/// A caller's weight: a file that calls a changed method changes with it
/// as often as a view does with its controller (weight 1.0). Chosen, not
/// fitted: the change-set benchmark asks `related_files` about files, not
/// methods, so no set measures it yet.
const CALLER_WEIGHT: f32 = 1.0;

/// `related` (best first, `limit` long) with the files holding `callers`
/// (repo-relative file and 1-based line of each call, as `find_references`
/// resolved them to the seed method) added or raised, each with a `call`
/// tie at that line first. Seeds are left out.
pub fn with_callers(
    mut related: Vec<Related>,
    callers: &[(String, u64)],
    seeds: &[String],
    limit: usize,
) -> Vec<Related> {
    let mut seen = BTreeSet::new();
    for (file, line) in callers {
        if seeds.contains(file) || !seen.insert(file.as_str()) {
            continue;
        }
        let at = related
            .iter()
            .position(|r| &r.file == file)
            .unwrap_or_else(|| {
                related.push(Related::new(file));
                related.len() - 1
            });
        let r = &mut related[at];
        let w = CALLER_WEIGHT * class_factor(r.class);
        r.score += w;
        r.edge_score += w;
        r.edges.insert(
            0,
            Tie {
                kind: EdgeKind::Call,
                direction: Direction::In,
                sibling_of: None,
                site: Site {
                    file: file.clone(),
                    line: u32::try_from(*line).unwrap_or(u32::MAX),
                },
            },
        );
        r.edges.truncate(4);
    }
    best_first(&mut related, limit);
    related
}
