//! The session state machine: intents, phases, the tool gate, query frames
//! with quote verification, risk from what a change touches, requirements
//! by quality of evidence, checks of submitted
//! understanding, semantic-phase reasons, the write gate, and
//! [`transition`], which applies each event of a session and decides its
//! next phase. Pure logic: no I/O; facts about the code come in through
//! [`CodeFacts`]. `learn` persists sessions; `server` parses, calls
//! [`transition`], persists and formats.
//!
//! The server decides; the model never supplies confidence. The rules and
//! numbers are in docs/sessions.md.

mod advice;
mod frame;
mod gate;
mod machine;
mod model;
mod requirements;
mod risk;

pub use advice::{EXTRACTION_PROMPT, guidance, next_step, next_step_with_hook};
pub use frame::{missing_slots, normalize, verify_frame};
pub use gate::{WriteTarget, check_write, gate, tool_offered};
pub use machine::{CodeFacts, Event, Rejected, Step, Verification, learned_symbols, transition};
pub use model::*;
pub use requirements::{DEFINITION_READ_LINES, lines_covered, merged_ranges, ranges_of};

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::requirements::{
        Facts, assess, reason_fits, searched_identifier, searched_identifiers, text_uses,
        unqualified,
    };
    use super::*;

    fn slot(v: &str, q: &str) -> Slot {
        Slot {
            value: v.into(),
            quote: q.into(),
        }
    }

    #[test]
    fn quotes_are_checked_after_nfkc_and_whitespace() {
        let query = "ログイン機能でパスワードが空のとき　エラーが出ないので修正して（ＡＰＩ）";
        let (frame, rejected) = verify_frame(
            query,
            &[
                (SlotName::TargetFeature, slot("login", "ログイン機能")),
                (
                    SlotName::ObservedIssue,
                    slot("no error", "空のとき エラーが出ない"),
                ),
                (SlotName::DesiredAction, slot("fix", "(API)")),
                (
                    SlotName::TriggerCondition,
                    slot("on submit", "送信したとき"),
                ),
            ],
        );
        assert_eq!(frame.len(), 3, "{rejected:?}");
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].slot, SlotName::TriggerCondition);
    }

    #[test]
    fn gate_matrix() {
        use Phase::*;
        use ToolClass::*;
        for (phase, class, ok) in [
            (Exploration, Code, true),
            (Exploration, Map, true),
            (Exploration, Forest, false),
            (Semantic, Code, false),
            (Semantic, Forest, true),
            (Semantic, Map, true),
            (Verification, Code, true),
            (Verification, Forest, false),
            (Ready, Forest, true),
            (Ready, Code, true),
        ] {
            let r = gate(phase, class);
            assert_eq!(r.is_ok(), ok, "{phase:?} {class:?}");
            if let Err(refusal) = r {
                assert!(!refusal.recovery_options.is_empty());
            }
        }
    }

    #[test]
    fn requirement_names_are_the_wire_names() {
        use Requirement::*;
        for r in [Symbols, EntryPoints, Files, Patterns, Coverage] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.name());
        }
    }

    #[test]
    fn semantic_reasons() {
        assert!(reason_fits(
            Requirement::Symbols,
            SemanticReason::NoDefinitionFound
        ));
        assert!(reason_fits(
            Requirement::EntryPoints,
            SemanticReason::NoReferenceFound
        ));
        assert!(!reason_fits(
            Requirement::Files,
            SemanticReason::NoDefinitionFound
        ));
        assert!(!reason_fits(
            Requirement::Patterns,
            SemanticReason::ContextFragmented
        ));
    }

    /// MODIFY of `Auth::login` (its entry point) after reading `a.py`.
    fn login_read() -> Understanding {
        Understanding {
            symbols_identified: vec!["Auth::login".into()],
            entry_points: vec!["Auth::login".into()],
            existing_patterns: vec![],
            files_analyzed: vec!["a.py".into()],
            files_to_edit: vec![],
            slot_evidence: BTreeMap::new(),
        }
    }

    #[test]
    fn a_search_for_a_name_counts_its_uses_outside_the_definition() {
        for (pattern, name) in [
            ("markAsRead", Some("markAsRead")),
            ("\\bmarkAsRead\\b", Some("markAsRead")),
            ("->markAsRead(", Some("markAsRead")),
            ("::update\\(", Some("update")),
            (".total", Some("total")),
            ("function markAsRead", None),
            ("mark.*Read", None),
            ("", None),
            ("9lives", None),
            ("single-simple", Some("single-simple")),
            ("models.links.partials.single-simple", Some("single-simple")),
            ("obj.prop", None),
            ("a-", None),
            ("App\\Imports\\Banking\\Transactions", Some("Transactions")),
            ("App\\\\Imports\\\\Transactions", Some("Transactions")),
            ("\\w+Controller", None),
        ] {
            assert_eq!(searched_identifier(pattern), name, "{pattern}");
        }
        // Each name of an alternation; not inside a group, a class or a
        // literal pattern.
        for (pattern, literal, names) in [
            (
                "ACCEPTABLE_THRESHOLDS|acceptableThresholds|between:0,10",
                false,
                vec!["ACCEPTABLE_THRESHOLDS", "acceptableThresholds"],
            ),
            (
                "\\b(?:markAsRead|markAllRead)\\b",
                false,
                vec!["markAsRead", "markAllRead"],
            ),
            ("(markAsRead|update)", false, vec!["markAsRead", "update"]),
            ("markAsRead|update", true, vec![]),
            ("a(b|c)|d", false, vec![]),
            ("x\\|y", false, vec![]),
            ("markAsRead", true, vec!["markAsRead"]),
        ] {
            assert_eq!(searched_identifiers(pattern, literal), names, "{pattern}");
        }
        // A file named by its path is searched for by its stem.
        assert_eq!(unqualified("config/links.php"), "links");
        assert_eq!(unqualified("App\\Models\\Link::shortTitle"), "shortTitle");
        let defs = |s: &str| match unqualified(s) {
            "login" => vec!["a.py".to_string()],
            _ => vec![],
        };
        let checks: BTreeMap<String, BTreeSet<String>> = [
            (
                "login".to_string(),
                ["a.py", "c.py"].map(String::from).into(),
            ),
            ("logout".to_string(), ["a.py"].map(String::from).into()),
        ]
        .into();
        assert_eq!(text_uses(&checks, "Auth::login", &defs), Some(1));
        assert_eq!(
            text_uses(&checks, "logout", &|_| vec!["a.py".into()]),
            Some(0)
        );
        assert_eq!(text_uses(&checks, "Auth", &defs), None);
        // Uses by name stand for find_references: entry points and coverage.
        let read: BTreeSet<String> = ["a.py"].map(String::from).into();
        let facts = Facts {
            definition_files: &defs,
            file_exists: &|f| f == "a.py",
            is_test: &|_| false,
            files_read: &read,
            definition_read: &|x| defs(x).iter().any(|f| read.contains(f)),
            reference_checks: &BTreeMap::new(),
            text_checks: &checks,
        };
        let u = login_read();
        let a = assess(&Requirements::of(Intent::Modify, Risk::Medium), &u, &facts);
        assert!(a.complete(), "{:?}", a.missing);
    }

    #[test]
    fn claims_are_checked_and_evidence_judged_by_quality() {
        let read: BTreeSet<String> = ["a.py"].map(String::from).into();
        let refs: BTreeMap<String, usize> = [("login".to_string(), 0)].into();
        let defs = |s: &str| match unqualified(s) {
            "login" | "logout" => vec!["a.py".to_string()],
            "Auth" => vec!["b.py".to_string()],
            _ => vec![],
        };
        let files = |f: &str| matches!(f, "a.py" | "b.py" | "c.py" | "tests/test_a.py");
        let is_test = |f: &str| f.starts_with("tests/");
        let facts = Facts {
            definition_files: &defs,
            file_exists: &files,
            is_test: &is_test,
            files_read: &read,
            definition_read: &|x| defs(x).iter().any(|f| read.contains(f)),
            reference_checks: &refs,
            text_checks: &BTreeMap::new(),
        };
        let u = Understanding {
            symbols_identified: vec!["Auth".into(), "ghost".into(), "Auth".into()],
            entry_points: vec!["main".into()],
            existing_patterns: vec![],
            files_analyzed: vec!["b.py".into(), "z.py".into()],
            files_to_edit: vec![],
            slot_evidence: BTreeMap::new(),
        };
        let req = Requirements::of(Intent::Modify, Risk::Medium);
        let a = assess(&req, &u, &facts);
        // ghost undefined, Auth twice, entry point not a symbol, z.py missing.
        assert_eq!(a.rejected_claims.len(), 4, "{:?}", a.rejected_claims);
        assert!(
            a.confidence < 1.0,
            "rejected claims lower confidence: {}",
            a.confidence
        );
        // Auth's definition (b.py) was named but never read.
        assert!(a.missing[&Requirement::Symbols].contains("b.py"));
        assert!(a.missing[&Requirement::Files].contains("b.py"));
        assert!(a.missing.contains_key(&Requirement::EntryPoints));
        assert!(a.missing.contains_key(&Requirement::Coverage));
        assert!(!a.complete() && a.confidence < 1.0);

        // login read and its references checked (no uses): LOW is met;
        // MEDIUM also needs coverage, which a read test file gives.
        let u = login_read();
        assert!(assess(&Requirements::of(Intent::Modify, Risk::Low), &u, &facts).complete());
        let a = assess(&req, &u, &facts);
        assert_eq!(
            a.missing.keys().collect::<Vec<_>>(),
            [&Requirement::Coverage]
        );
        let read_test: BTreeSet<String> = ["a.py", "tests/test_a.py"].map(String::from).into();
        let facts = Facts {
            files_read: &read_test,
            ..facts
        };
        assert!(assess(&req, &u, &facts).complete());
        // IMPLEMENT needs a pattern that was read.
        let a = assess(&Requirements::of(Intent::Implement, Risk::Low), &u, &facts);
        assert!(a.missing.contains_key(&Requirement::Patterns));
        let with_pattern = Understanding {
            existing_patterns: vec![PatternClaim {
                name: "service".into(),
                files: vec!["a.py".into()],
            }],
            ..u.clone()
        };
        assert!(
            assess(
                &Requirements::of(Intent::Implement, Risk::Low),
                &with_pattern,
                &facts
            )
            .complete()
        );
        // IMPLEMENT at MEDIUM with no entry point (new code): the pattern
        // read backs it, no find_references on the symbols it names.
        let new_code = Understanding {
            symbols_identified: vec!["logout".into()],
            entry_points: vec![],
            ..with_pattern.clone()
        };
        let a = assess(
            &Requirements::of(Intent::Implement, Risk::Medium),
            &new_code,
            &facts,
        );
        assert!(
            !a.missing.contains_key(&Requirement::EntryPoints),
            "{:?}",
            a.missing
        );
        // Once it names an entry point (an existing symbol it alters), the
        // references of that one are needed; MODIFY needs them either way.
        let alters = Understanding {
            entry_points: vec!["logout".into()],
            ..new_code.clone()
        };
        let a = assess(
            &Requirements::of(Intent::Implement, Risk::Medium),
            &alters,
            &facts,
        );
        assert!(
            a.missing[&Requirement::EntryPoints].contains("logout"),
            "{:?}",
            a.missing
        );
        let a = assess(
            &Requirements::of(Intent::Modify, Risk::Medium),
            &new_code,
            &facts,
        );
        assert!(
            a.missing.contains_key(&Requirement::EntryPoints),
            "{:?}",
            a.missing
        );
        // An entry point whose definition was never read does not pass.
        let unread_entry = Understanding {
            symbols_identified: vec!["login".into(), "Auth".into()],
            entry_points: vec!["Auth".into()],
            ..u.clone()
        };
        let a = assess(
            &Requirements::of(Intent::Modify, Risk::Low),
            &unread_entry,
            &facts,
        );
        assert!(
            a.missing[&Requirement::Symbols].contains("entry point"),
            "{a:?}"
        );
        // HIGH: every entry point's references.
        let two = Understanding {
            symbols_identified: vec!["login".into(), "logout".into()],
            entry_points: vec!["login".into(), "logout".into()],
            ..u
        };
        let a = assess(&Requirements::of(Intent::Modify, Risk::High), &two, &facts);
        assert!(a.missing[&Requirement::EntryPoints].contains("logout"));
    }

    #[test]
    fn an_entry_point_the_change_leaves_alone_is_context() {
        // The honest agent trial's shape (bench/README.md § Honest agent
        // trial): the form request is edited, the controller action that
        // receives it is named as where the behaviour starts.
        let defs = |s: &str| match s {
            "NewCommentRequest" | "NewCommentRequest::rules" => vec!["req.php".to_string()],
            "CommentsController::create" => vec!["ctl.php".to_string()],
            _ => vec![],
        };
        let read: BTreeSet<String> = ["req.php"].map(String::from).into();
        // The class was checked, not its method.
        let refs: BTreeMap<String, usize> = [("NewCommentRequest".to_string(), 1)].into();
        let facts = Facts {
            definition_files: &defs,
            file_exists: &|f| matches!(f, "req.php" | "ctl.php"),
            is_test: &|_| false,
            files_read: &read,
            definition_read: &|x| defs(x).iter().any(|f| read.contains(f)),
            reference_checks: &refs,
            text_checks: &BTreeMap::new(),
        };
        let u = Understanding {
            symbols_identified: vec![
                "NewCommentRequest::rules".into(),
                "CommentsController::create".into(),
            ],
            entry_points: vec!["CommentsController::create".into()],
            existing_patterns: vec![],
            files_analyzed: vec![],
            files_to_edit: vec!["req.php".into()],
            slot_evidence: BTreeMap::new(),
        };
        for risk in [Risk::Low, Risk::Medium] {
            let a = assess(&Requirements::of(Intent::Modify, risk), &u, &facts);
            assert!(a.complete(), "{risk:?}: {:?}", a.missing);
        }
        // HIGH: every entry point, read and checked.
        let a = assess(&Requirements::of(Intent::Modify, Risk::High), &u, &facts);
        assert!(
            a.missing[&Requirement::Symbols].contains("ctl.php"),
            "{a:?}"
        );
        assert!(a.missing[&Requirement::EntryPoints].contains("CommentsController::create"));
        // When the action itself is edited it is what changes: read it.
        let edits_action = Understanding {
            files_to_edit: vec!["req.php".into(), "ctl.php".into()],
            ..u.clone()
        };
        let a = assess(
            &Requirements::of(Intent::Modify, Risk::Low),
            &edits_action,
            &facts,
        );
        assert!(
            a.missing[&Requirement::Symbols].contains("ctl.php"),
            "{a:?}"
        );
        assert!(a.missing[&Requirement::Files].contains("ctl.php"), "{a:?}");
        // The class check stands for its method, never for another class's.
        let no_check = Facts {
            reference_checks: &BTreeMap::new(),
            ..facts
        };
        let a = assess(&Requirements::of(Intent::Modify, Risk::Low), &u, &no_check);
        assert!(
            a.missing[&Requirement::EntryPoints].contains("NewCommentRequest::rules"),
            "{a:?}"
        );
    }

    fn target(file: &str, exists: bool, allow_new: bool) -> WriteTarget {
        WriteTarget {
            file: file.into(),
            exists,
            allow_new,
            class: crate::classify::classify_path(file).class,
            convention: None,
            existing_dir: file.rsplit_once('/').map_or("", |(d, _)| d).into(),
        }
    }

    /// READY with `read` read and listed in the understanding.
    fn ready(intent: Intent, query: &str, read: &[&str]) -> Session {
        let mut s = Session::new(intent, query);
        s.phase = Phase::Ready;
        s.explored = read.iter().map(|f| (*f).to_string()).collect();
        s.understanding = Some(Understanding {
            files_to_edit: read.iter().map(|f| (*f).to_string()).collect(),
            ..Understanding::default()
        });
        s
    }

    #[test]
    fn write_gate() {
        let s = ready(
            Intent::Modify,
            "fix the list",
            &["app/views.py", "app/Models/Order.php"],
        );
        let ok = |s: &Session, t: WriteTarget| check_write(s, &t).is_ok();
        assert!(ok(&s, target("app/views.py", true, false)));
        // Read-only intents never write, whatever they read.
        for intent in [Intent::Question, Intent::Investigate] {
            assert!(!ok(
                &ready(intent, "q", &["app/views.py"]),
                target("app/views.py", true, false)
            ));
        }
        let mut explo = s.clone();
        explo.phase = Phase::Exploration;
        assert!(!ok(&explo, target("app/views.py", true, false)));
        assert!(!ok(&s, target("app/other.py", true, false)));
        assert!(ok(&s, target("app/new.py", false, true)));
        assert!(!ok(&s, target("lib/new.py", false, true)));
        assert!(!ok(&s, target("app/new.py", false, false)));
        // A conventional new directory: allowed once a file under its
        // nearest existing directory was read.
        let observer = WriteTarget {
            convention: Some("Laravel app/Observers".into()),
            existing_dir: "app".into(),
            ..target("app/Observers/OrderObserver.php", false, true)
        };
        assert!(ok(&s, observer.clone()));
        let nothing_read = ready(Intent::Implement, "observer", &["README.md"]);
        let r = check_write(&nothing_read, &observer).unwrap_err();
        assert!(!r.recovery_options.is_empty());
        // Lock, vendored and generated files: only when the request names them.
        let lock = ready(Intent::Modify, "bump a dependency", &["composer.lock"]);
        assert!(!ok(&lock, target("composer.lock", true, false)));
        let named = ready(Intent::Modify, "composer.lock を更新", &["composer.lock"]);
        assert!(ok(&named, target("composer.lock", true, false)));
        // A read file the understanding did not list is refused, however
        // harmless, until add_explored_files adds it (docs/sessions.md § Gate).
        let mut low = ready(
            Intent::Modify,
            "fix",
            &["app/Http/Controllers/Auth/LoginController.php", "app/a.php"],
        );
        low.understanding = Some(Understanding {
            files_to_edit: vec!["app/a.php".into()],
            // Analysed is not edited: its risk was not judged.
            files_analyzed: vec!["app/Http/Controllers/Auth/LoginController.php".into()],
            ..Understanding::default()
        });
        assert!(ok(&low, target("app/a.php", true, false)));
        let login = target("app/Http/Controllers/Auth/LoginController.php", true, false);
        let r = check_write(&low, &login).unwrap_err();
        assert!(
            r.recovery_options[0].starts_with("add_explored_files"),
            "{r:?}"
        );
        low.scope_added
            .insert("app/Http/Controllers/Auth/LoginController.php".into());
        assert!(ok(
            &low,
            target("app/Http/Controllers/Auth/LoginController.php", true, false)
        ));
        // New files: listed, or beside / under a covered file; not beside a
        // file that was only read.
        let mut scoped = ready(
            Intent::Implement,
            "add an observer",
            &["app/Models/Order.php"],
        );
        scoped.explored.insert("lib/util.py".into());
        assert!(ok(&scoped, target("app/Models/Invoice.php", false, true)));
        assert!(!ok(&scoped, target("lib/new.py", false, true)));
        scoped
            .understanding
            .as_mut()
            .unwrap()
            .files_to_edit
            .push("lib/new.py".into());
        assert!(ok(&scoped, target("lib/new.py", false, true)));
        // Hypotheses: pending blocks every write; rejected blocks its file.
        let mut pending = s.clone();
        pending.hypotheses.push(Hypothesis {
            symbol: "x".into(),
            file: "app/views.py".into(),
            slot_source: "symbols".into(),
            reason: "hit".into(),
            state: HypothesisState::Hypothesis,
            evidence: None,
        });
        assert!(!ok(&pending, target("app/views.py", true, false)));
        pending.hypotheses[0].state = HypothesisState::Rejected;
        let r = check_write(&pending, &target("app/views.py", true, false)).unwrap_err();
        assert!(
            r.recovery_options
                .contains(&"revert_to_exploration".to_string())
        );
    }

    #[test]
    fn sessions_of_the_previous_release_still_load() {
        let s = Session::new(Intent::Modify, "fix the list");
        let mut v = serde_json::to_value(&s).unwrap();
        let o = v.as_object_mut().unwrap();
        o.insert(
            "requirements".into(),
            serde_json::json!({"symbols": 3, "entry_points": 1, "files": 2, "patterns": 1,
                               "slot_evidence": [], "tools": ["find_definitions"]}),
        );
        o.insert(
            "last_assessment".into(),
            serde_json::json!({"rejected_claims": [], "missing": {"symbols": [1, 3]},
                               "missing_slot_evidence": [], "missing_tools": [], "confidence": 0.5}),
        );
        o.remove("reference_checks");
        o.remove("risk_reasons");
        let old = Session::from_json(&v.to_string()).unwrap();
        assert_eq!(
            old.requirements,
            Requirements::of(Intent::Modify, Risk::Low)
        );
        assert!(old.last_assessment.is_none() && old.reference_checks.is_empty());
    }
}
