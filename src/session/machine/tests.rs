//! Tests of `machine`.
use super::*;
use crate::session::{CallArgs, PatternClaim, Slot, SlotName};

/// The code of the tests: `render`, `layout`, `Page` in a.py, `Widget`
/// and `hash` in d.py; files `a.py`, `b.py`, `c.py`, `d.py`.
struct Code;
impl CodeFacts for Code {
    fn definition_files(&self, s: &str) -> Vec<String> {
        match s {
            "render" | "layout" | "Page" => vec!["a.py".into()],
            "Widget" | "hash" | "login" => vec!["d.py".into()],
            "test_login" => vec!["tests/test_login.py".into()],
            _ => vec![],
        }
    }
    fn file_exists(&self, f: &str) -> bool {
        matches!(f, "a.py" | "b.py" | "c.py" | "d.py" | "tests/test_login.py")
    }
}

/// A write check of an existing file.
fn write(file: &str) -> Event {
    Event::WriteChecked {
        target: WriteTarget {
            file: file.into(),
            exists: Code.file_exists(file),
            allow_new: false,
            class: crate::classify::FileClass::Source,
            convention: None,
            existing_dir: String::new(),
        },
    }
}

/// A tool call naming `files`; `read_file` reads them, `find_references`
/// on `render` finds two uses.
fn tool(name: &str, files: &[&str], phase: Phase) -> Event {
    let files: Vec<String> = files.iter().map(|f| (*f).to_string()).collect();
    Event::ToolRecorded {
        evidence: Evidence {
            tool: Tool::parse(name).expect("a tool name"),
            params: CallArgs {
                symbol: Some("render".into()),
                ..CallArgs::default()
            },
            summary: String::new(),
            read: if name == "read_file" {
                files.clone()
            } else {
                vec![]
            },
            read_lines: vec![],
            total: (name == "find_references").then_some(2),
            uses: (name == "find_references").then_some(2),
            files,
            at: 0,
            phase,
        },
    }
}

fn frame() -> Event {
    let slot = |v: &str| Slot {
        value: v.into(),
        quote: v.into(),
    };
    Event::FrameSet {
        frame: [
            (SlotName::TargetFeature, slot("page rendering")),
            (SlotName::DesiredAction, slot("fix")),
        ]
        .into(),
        cleared: vec![],
    }
}

fn understanding(symbols: &[&str], files: &[&str]) -> Understanding {
    Understanding {
        symbols_identified: symbols.iter().map(|s| (*s).to_string()).collect(),
        entry_points: symbols.iter().take(1).map(|s| (*s).to_string()).collect(),
        existing_patterns: vec![PatternClaim {
            name: "view".into(),
            files: vec!["a.py".into()],
        }],
        files_analyzed: files.iter().map(|f| (*f).to_string()).collect(),
        files_to_edit: vec![],
        slot_evidence: BTreeMap::new(),
    }
}

fn submit(u: Understanding, reasons: &[(Requirement, SemanticReason)]) -> Event {
    Event::UnderstandingSubmitted {
        understanding: u,
        semantic_reasons: reasons.iter().copied().collect(),
    }
}

/// What a case expects after its last event: (phase, refused?, invalid?).
type Expect = (Phase, bool, bool);

/// Applies `events` to a new session of `intent` and compares the last
/// event's outcome with `expected`.
fn check(intent: Intent, events: Vec<Event>, expected: Expect) {
    let mut s = Session::new(intent, "fix page rendering");
    let mut last = Ok(Step::default());
    for e in events {
        last = transition(&mut s, e, &Code);
    }
    let got = (
        s.phase,
        matches!(last, Err(Rejected::Refused(_))),
        matches!(last, Err(Rejected::Invalid(_))),
    );
    assert_eq!(got, expected, "{last:?}");
}

/// Every transition and refusal of the phase machine, one row each.
#[test]
fn transitions() {
    use Phase::{Exploration, Ready, Semantic};
    let explored = || {
        vec![
            frame(),
            tool("find_definitions", &["a.py"], Exploration),
            tool("find_references", &["b.py"], Exploration),
            tool("search_text", &["c.py"], Exploration),
            tool("read_file", &["a.py", "b.py"], Exploration),
        ]
    };
    let with = |mut v: Vec<Event>, e: Vec<Event>| {
        v.extend(e);
        v
    };
    let enough = || understanding(&["render", "layout", "Page"], &["a.py", "b.py"]);
    // Names c.py, which a search showed but nobody read.
    let too_little = || understanding(&["render"], &["c.py"]);
    let reasons = [(Requirement::Files, SemanticReason::ContextFragmented)];
    let to_semantic = || {
        with(
            explored(),
            vec![
                submit(too_little(), &reasons),
                tool("semantic_search", &["d.py"], Semantic),
            ],
        )
    };
    let hyp = |sym: &str, file: &str| Hypothesis {
        symbol: sym.into(),
        file: file.into(),
        slot_source: "symbols".into(),
        reason: "forest hit".into(),
        state: HypothesisState::Hypothesis,
        evidence: None,
    };
    let verify = |sym: &str, ok: bool| Verification {
        symbol: sym.into(),
        confirmed: ok,
        evidence: if ok {
            "d.py:1 def".into()
        } else {
            String::new()
        },
    };
    let cases: Vec<(Intent, Vec<Event>, Expect)> = vec![
        // QUESTION starts READY; INVESTIGATE and MODIFY in EXPLORATION.
        (Intent::Question, vec![], (Ready, false, false)),
        (Intent::Investigate, vec![], (Exploration, false, false)),
        // MODIFY needs its frame before an understanding.
        (
            Intent::Modify,
            vec![submit(enough(), &[])],
            (Exploration, true, false),
        ),
        // Enough checked claims → READY.
        (
            Intent::Modify,
            with(explored(), vec![submit(enough(), &[])]),
            (Ready, false, false),
        ),
        // Too little, no reasons → stays in EXPLORATION.
        (
            Intent::Modify,
            with(explored(), vec![submit(too_little(), &[])]),
            (Exploration, false, false),
        ),
        // Reasons before exact tools were tried → EXPLORATION.
        (
            Intent::Modify,
            vec![frame(), submit(too_little(), &reasons)],
            (Exploration, false, false),
        ),
        // A reason that does not fit what is missing → EXPLORATION.
        (
            Intent::Modify,
            with(
                explored(),
                vec![submit(
                    too_little(),
                    &[(Requirement::Files, SemanticReason::NoDefinitionFound)],
                )],
            ),
            (Exploration, false, false),
        ),
        // Fitting reasons after exact tools → SEMANTIC.
        (
            Intent::Modify,
            with(explored(), vec![submit(too_little(), &reasons)]),
            (Semantic, false, false),
        ),
        // submit_understanding outside EXPLORATION is refused.
        (
            Intent::Modify,
            with(to_semantic(), vec![submit(enough(), &[])]),
            (Semantic, true, false),
        ),
        // submit_semantic outside SEMANTIC is refused; without a forest
        // search in SEMANTIC too; with no hypothesis or a missing file it is invalid.
        (
            Intent::Modify,
            with(
                explored(),
                vec![Event::SemanticSubmitted {
                    hypotheses: vec![hyp("Widget", "d.py")],
                }],
            ),
            (Exploration, true, false),
        ),
        (
            Intent::Modify,
            with(
                explored(),
                vec![
                    submit(too_little(), &reasons),
                    Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py")],
                    },
                ],
            ),
            (Semantic, true, false),
        ),
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![Event::SemanticSubmitted { hypotheses: vec![] }],
            ),
            (Semantic, false, true),
        ),
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![Event::SemanticSubmitted {
                    hypotheses: vec![hyp("Token", "zz.py")],
                }],
            ),
            (Semantic, false, true),
        ),
        // A forest search, then hypotheses → VERIFICATION.
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![Event::SemanticSubmitted {
                    hypotheses: vec![hyp("Widget", "d.py")],
                }],
            ),
            (Phase::Verification, false, false),
        ),
        // Verification outside VERIFICATION is refused; confirming without
        // evidence or an undefined symbol is invalid.
        (
            Intent::Modify,
            with(
                explored(),
                vec![Event::VerificationSubmitted {
                    results: vec![verify("Widget", true)],
                }],
            ),
            (Exploration, true, false),
        ),
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![
                    Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py")],
                    },
                    Event::VerificationSubmitted {
                        results: vec![Verification {
                            evidence: String::new(),
                            ..verify("Widget", true)
                        }],
                    },
                ],
            ),
            (Phase::Verification, false, true),
        ),
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![
                    Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Ghost", "d.py")],
                    },
                    Event::VerificationSubmitted {
                        results: vec![verify("Ghost", true)],
                    },
                ],
            ),
            (Phase::Verification, false, true),
        ),
        // One of two hypotheses settled → still VERIFICATION.
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![
                    Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py"), hyp("hash", "d.py")],
                    },
                    Event::VerificationSubmitted {
                        results: vec![verify("Widget", true)],
                    },
                ],
            ),
            (Phase::Verification, false, false),
        ),
        // All settled, facts fill the gaps → READY; rejected → EXPLORATION.
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![
                    Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py"), hyp("hash", "d.py")],
                    },
                    tool("read_file", &["c.py", "d.py"], Phase::Verification),
                    Event::VerificationSubmitted {
                        results: vec![verify("Widget", true), verify("hash", true)],
                    },
                ],
            ),
            (Ready, false, false),
        ),
        // Confirmed, but the files were never read → EXPLORATION.
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![
                    Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py")],
                    },
                    Event::VerificationSubmitted {
                        results: vec![verify("Widget", true)],
                    },
                ],
            ),
            (Exploration, false, false),
        ),
        (
            Intent::Modify,
            with(
                to_semantic(),
                vec![
                    Event::SemanticSubmitted {
                        hypotheses: vec![hyp("Widget", "d.py")],
                    },
                    Event::VerificationSubmitted {
                        results: vec![verify("Widget", false)],
                    },
                ],
            ),
            (Exploration, false, false),
        ),
        // Revert from anywhere → EXPLORATION.
        (
            Intent::Question,
            vec![Event::Reverted { keep_results: true }],
            (Exploration, false, false),
        ),
        // Writes: refused before READY, allowed for an explored file in
        // READY, refused for an unexplored one.
        (
            Intent::Modify,
            with(explored(), vec![write("a.py")]),
            (Exploration, true, false),
        ),
        (
            Intent::Modify,
            with(explored(), vec![submit(enough(), &[]), write("a.py")]),
            (Ready, false, false),
        ),
        (
            Intent::Modify,
            with(explored(), vec![submit(enough(), &[]), write("zz.py")]),
            (Ready, true, false),
        ),
    ];
    for (intent, events, expected) in cases {
        check(intent, events, expected);
    }
}

#[test]
fn risk_rises_with_what_is_touched_and_never_falls() {
    let mut s = Session::new(Intent::Modify, "fix page rendering");
    transition(&mut s, frame(), &Code).unwrap();
    assert_eq!(s.risk, Risk::Low);
    let check = RelevanceCheck {
        nl_term: "描画".into(),
        symbol: "render".into(),
        score: 0.8,
        tier: Tier::Grey,
    };
    transition(
        &mut s,
        Event::RelevanceChecked {
            checks: vec![check],
        },
        &Code,
    )
    .unwrap();
    assert_eq!(s.risk, Risk::High);
    assert!(s.requirements.all_entry_points);
    assert!(s.requirements.needs.contains(&Requirement::Coverage));
    let r = transition(&mut s, submit(understanding(&["render"], &[]), &[]), &Code);
    assert!(r.is_ok());
    assert_eq!(s.risk, Risk::High, "a smaller submission does not lower it");
    let r = transition(&mut s, write("a.py"), &Code);
    assert!(matches!(r, Err(Rejected::Refused(_))));
    assert_eq!(s.refusals.len(), 1, "{:?}", s.refusals);

    // Editing a migration makes a plain fix MEDIUM.
    let mut s = Session::new(Intent::Modify, "fix page rendering");
    transition(&mut s, frame(), &Code).unwrap();
    let mut u = understanding(&["render"], &["a.py"]);
    u.files_to_edit = vec!["database/migrations/2024_create_pages.php".into()];
    transition(&mut s, submit(u, &[]), &Code).unwrap();
    assert_eq!(s.risk, Risk::Medium, "{:?}", s.risk_reasons);

    // A sensitive name counts where the change edits it: `login` (d.py)
    // named as a pattern while only a.py is edited leaves a fix LOW.
    let touched = |edits: &[&str]| {
        let mut s = Session::new(Intent::Modify, "fix page rendering");
        transition(&mut s, frame(), &Code).unwrap();
        let mut u = understanding(&["render", "login"], &["a.py", "d.py"]);
        u.files_to_edit = edits.iter().map(|f| f.to_string()).collect();
        let _ = transition(&mut s, submit(u, &[]), &Code);
        (s.risk, s.risk_reasons.join("; "))
    };
    assert_eq!(touched(&["a.py"]).0, Risk::Low, "{:?}", touched(&["a.py"]));
    let (risk, why) = touched(&["a.py", "d.py"]);
    assert_eq!(risk, Risk::High, "{why}");
    assert!(why.contains("`login`"), "{why}");
    // A test of it is not: editing `test_login` leaves the fix LOW.
    let mut s = Session::new(Intent::Modify, "fix page rendering");
    transition(&mut s, frame(), &Code).unwrap();
    let mut u = understanding(&["render", "test_login"], &["a.py"]);
    u.files_to_edit = vec!["a.py".into(), "tests/test_login.py".into()];
    let _ = transition(&mut s, submit(u, &[]), &Code);
    assert_eq!(s.risk, Risk::Low, "{:?}", s.risk_reasons);

    // A frame about a password says HIGH and its requirements when it is
    // set, before any evidence is gathered.
    let mut s = Session::new(Intent::Implement, "let users change their password");
    let about = Event::FrameSet {
        frame: [(
            SlotName::DesiredAction,
            Slot {
                value: "allow changing the password".into(),
                quote: "change their password".into(),
            },
        )]
        .into(),
        cleared: vec![],
    };
    let step = transition(&mut s, about, &Code).unwrap();
    assert_eq!(s.risk, Risk::High);
    assert!(s.requirements.needs.contains(&Requirement::Coverage));
    assert!(format!("{step:?}").contains("(password)"), "{step:?}");
}

#[test]
fn a_frame_accumulates_and_null_clears_a_slot() {
    let slot = |v: &str| Slot {
        value: v.into(),
        quote: v.into(),
    };
    let mut s = Session::new(Intent::Modify, "fix page rendering");
    transition(&mut s, frame(), &Code).unwrap();
    // A later call with one slot keeps the two accepted before.
    let later = Event::FrameSet {
        frame: [(SlotName::TriggerCondition, slot("rendering"))].into(),
        cleared: vec![],
    };
    transition(&mut s, later, &Code).unwrap();
    let names: Vec<SlotName> = s.frame.keys().copied().collect();
    assert_eq!(
        names,
        [
            SlotName::TargetFeature,
            SlotName::TriggerCondition,
            SlotName::DesiredAction
        ]
    );
    // A new value replaces the slot; a cleared slot goes.
    let replace = Event::FrameSet {
        frame: [(SlotName::TargetFeature, slot("page"))].into(),
        cleared: vec![SlotName::DesiredAction],
    };
    transition(&mut s, replace, &Code).unwrap();
    assert_eq!(s.frame[&SlotName::TargetFeature].value, "page");
    assert!(!s.frame.contains_key(&SlotName::DesiredAction));
    assert_eq!(s.frame.len(), 2);
}

/// `add_explored_files` in READY adds an unlisted file to the change when
/// the risk of touching it stays, and sends the session back to
/// EXPLORATION when it rises (docs/sessions.md § Gate).
#[test]
fn files_added_in_ready_join_the_change_or_reopen_it() {
    let added = |files: &[&str]| Event::ExploredAdded {
        evidence: Evidence {
            tool: Tool::AddExploredFiles,
            params: CallArgs::default(),
            summary: String::new(),
            read: files.iter().map(|f| (*f).to_string()).collect(),
            read_lines: vec![],
            total: None,
            uses: None,
            files: files.iter().map(|f| (*f).to_string()).collect(),
            at: 0,
            phase: Phase::Ready,
        },
    };
    let mut s = Session::new(Intent::Modify, "fix page rendering");
    for e in [
        frame(),
        tool("find_definitions", &["a.py"], Phase::Exploration),
        tool("find_references", &["b.py"], Phase::Exploration),
        tool("search_text", &["c.py"], Phase::Exploration),
        tool("read_file", &["a.py", "b.py", "c.py"], Phase::Exploration),
        submit(understanding(&["render"], &["a.py", "b.py"]), &[]),
    ] {
        transition(&mut s, e, &Code).unwrap();
    }
    assert_eq!(s.phase, Phase::Ready);
    // c.py was read but not listed: refused until added.
    assert!(matches!(
        transition(&mut s, write("c.py"), &Code),
        Err(Rejected::Refused(_))
    ));
    let step = transition(&mut s, added(&["c.py"]), &Code).unwrap();
    assert!(step.note.contains("added to the change"), "{}", step.note);
    assert_eq!(s.phase, Phase::Ready);
    assert!(transition(&mut s, write("c.py"), &Code).is_ok());
    // A migration raises a LOW change to MEDIUM: back to EXPLORATION.
    let step = transition(
        &mut s,
        added(&["database/migrations/2024_create_pages.php"]),
        &Code,
    )
    .unwrap();
    assert_eq!(
        (s.phase, s.risk),
        (Phase::Exploration, Risk::Medium),
        "{}",
        step.note
    );
    assert!(!s.covers("database/migrations/2024_create_pages.php"));
}

/// Learned pairs keep the entry points and the symbols defined in files
/// the change wrote; a symbol only read for context (`Widget`, in d.py,
/// which nothing wrote) is left out, and `files_to_edit` stands in when
/// the gate saw no write.
#[test]
fn learned_pairs_keep_what_the_change_touched() {
    let mut s = Session::new(Intent::Modify, "fix the page layout");
    let mut u = understanding(&["render", "layout", "Widget", "hash"], &["a.py", "d.py"]);
    u.entry_points = vec!["hash".into()];
    u.files_to_edit = vec!["a.py".into()];
    s.understanding = Some(u);
    let a = s.agreement();
    assert_eq!(learned_symbols(&s, &a, &Code), ["render", "layout", "hash"]);
    // What the gate let the agent write is what changed.
    s.writes_allowed = vec!["d.py".into()];
    assert_eq!(learned_symbols(&s, &a, &Code), ["Widget", "hash"]);
}

/// A whole-repository `search_text` for a symbol's name shows its uses: it
/// stands for `find_references` on that symbol (uses outside the files that
/// define it); a search scoped to a path or for something else does not.
#[test]
fn a_search_for_the_name_stands_for_find_references() {
    let search = |pattern: &str, path: Option<&str>, files: &[&str]| Event::ToolRecorded {
        evidence: Evidence {
            tool: Tool::SearchText,
            params: CallArgs {
                pattern: Some(pattern.into()),
                path: path.map(String::from),
                ..CallArgs::default()
            },
            summary: String::new(),
            read: vec![],
            read_lines: vec![],
            total: Some(files.len()),
            uses: None,
            files: files.iter().map(|f| (*f).to_string()).collect(),
            at: 0,
            phase: Phase::Exploration,
        },
    };
    let missing = |extra: Vec<Event>| {
        let mut s = Session::new(Intent::Modify, "fix page rendering");
        let mut events = vec![
            frame(),
            tool("find_definitions", &["a.py"], Phase::Exploration),
            tool("read_file", &["a.py", "b.py"], Phase::Exploration),
        ];
        events.extend(extra);
        events.push(submit(understanding(&["render"], &["a.py", "b.py"]), &[]));
        for e in events {
            let _ = transition(&mut s, e, &Code);
        }
        let a = s.last_assessment.expect("assessed");
        (s.phase, a.missing.keys().copied().collect::<Vec<_>>())
    };
    let (_, without) = missing(vec![]);
    assert!(without.contains(&Requirement::EntryPoints), "{without:?}");
    for pattern in ["render", "\\brender\\b", "->render("] {
        let (phase, left) = missing(vec![search(pattern, None, &["a.py", "b.py"])]);
        assert!(
            !left.contains(&Requirement::EntryPoints),
            "{pattern}: {left:?}"
        );
        assert_eq!(phase, Phase::Ready, "{pattern}: {left:?}");
    }
    for other in [
        search("render", Some("b.py"), &["b.py"]),
        search("def render", None, &["a.py", "b.py"]),
        search("layout", None, &["a.py", "b.py"]),
    ] {
        let (_, left) = missing(vec![other]);
        assert!(left.contains(&Requirement::EntryPoints), "{left:?}");
    }
}

/// `Code` with line spans: `render` is lines 10–29 of a.py, the class
/// `Page` lines 1–120.
struct Spans;
impl CodeFacts for Spans {
    fn definition_files(&self, s: &str) -> Vec<String> {
        Code.definition_files(s)
    }
    fn definition_spans(&self, s: &str) -> Vec<LineSpan> {
        let span = |start_line, end_line| {
            vec![LineSpan {
                file: "a.py".into(),
                start_line,
                end_line,
            }]
        };
        match s {
            "render" => span(10, 29),
            "Page" => span(1, 120),
            _ => vec![],
        }
    }
    fn file_exists(&self, f: &str) -> bool {
        Code.file_exists(f)
    }
}

/// A definition counts as read when the session's calls returned all of
/// it (a class: `DEFINITION_READ_LINES` of its lines), not when they
/// returned a snippet of the file that holds it — the orientation query's
/// method cut with "…" counted as read in agent trials (bench/README.md §
/// Honest agent trial).
#[test]
fn a_definition_counts_as_read_when_its_lines_were_returned() {
    let read = |lines: &[(usize, usize)]| Event::ToolRecorded {
        evidence: Evidence {
            tool: Tool::ReadFile,
            params: CallArgs::default(),
            summary: String::new(),
            read: vec!["a.py".into()],
            read_lines: lines
                .iter()
                .map(|&(start_line, end_line)| LineSpan {
                    file: "a.py".into(),
                    start_line,
                    end_line,
                })
                .collect(),
            total: None,
            uses: None,
            files: vec!["a.py".into()],
            at: 0,
            phase: Phase::Exploration,
        },
    };
    let after = |symbol: &str, reads: Vec<Event>| {
        let mut s = Session::new(Intent::Modify, "fix page rendering");
        let Event::ToolRecorded { mut evidence } =
            tool("find_references", &["b.py"], Phase::Exploration)
        else {
            unreachable!()
        };
        evidence.params.symbol = Some(symbol.into());
        let mut events = vec![frame(), Event::ToolRecorded { evidence }];
        events.extend(reads);
        events.push(submit(understanding(&[symbol], &["a.py"]), &[]));
        for e in events {
            let _ = transition(&mut s, e, &Spans);
        }
        let a = s.last_assessment.expect("assessed");
        (s.phase, a.missing.get(&Requirement::Symbols).cloned())
    };
    // The first five lines of `render` (10–14): the file is read, the
    // definition is not.
    let (phase, missing) = after("render", vec![read(&[(1, 14)])]);
    assert_eq!(phase, Phase::Exploration);
    assert!(
        missing.as_deref().is_some_and(|m| m.contains("all of it")),
        "{missing:?}"
    );
    // The rest of it in a second read: read.
    assert_eq!(
        after("render", vec![read(&[(1, 14)]), read(&[(15, 29)])]).0,
        Phase::Ready
    );
    assert_eq!(after("render", vec![read(&[(8, 40)])]).0, Phase::Ready);
    // A class: 30 of its 120 lines are enough, 20 are not.
    assert_eq!(after("Page", vec![read(&[(1, 30)])]).0, Phase::Ready);
    assert_eq!(after("Page", vec![read(&[(1, 20)])]).0, Phase::Exploration);
    // A file read without lines (a session saved before they were kept)
    // counts whole.
    assert_eq!(after("render", vec![read(&[])]).0, Phase::Ready);
}

/// A Blade view named by its path and by its name is one symbol: the path
/// becomes the name and the second naming is dropped, whichever comes
/// first; other entries, a symbol written twice the same way included, stay
/// as they are (the claims check refuses that one).
#[test]
fn a_view_named_both_ways_is_one_symbol() {
    let path = "resources/views/links/partials/item.blade.php";
    let name = "links.partials.item";
    for list in [[path, name, "Link::show"], [name, path, "Link::show"]] {
        let mut list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        super::views_by_name(&mut list);
        assert_eq!(list, [name, "Link::show"]);
    }
    let mut twice: Vec<String> = vec!["Link::show".into(), "Link::show".into()];
    super::views_by_name(&mut twice);
    assert_eq!(twice, ["Link::show", "Link::show"]);
}
