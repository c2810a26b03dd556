//! The session state machine: intents, phases, the tool gate, query frames
//! with quote verification, risk, requirements, checks of submitted
//! understanding, semantic-phase reasons, the write gate, and
//! [`transition`], which applies each event of a session and decides its
//! next phase. Pure logic: no I/O; facts about the code come in through
//! [`CodeFacts`]. `learn` persists sessions; `server` parses, calls
//! [`transition`], persists and formats.
//!
//! The server decides; the model never supplies confidence. The rules and
//! numbers are in docs/sessions.md.

mod frame;
mod gate;
mod machine;
mod model;
mod requirements;

pub use frame::{assess_risk, missing_slots, normalize, verify_frame};
pub use gate::{check_write, gate, tool_offered};
pub use machine::{CodeFacts, Event, Rejected, Step, Verification, transition};
pub use model::*;
pub use requirements::{BEFORE_SEMANTIC, Facts, assess, reason_fits, requirements};

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

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
    fn risk_rules() {
        let full: QueryFrame = SlotName::ALL
            .into_iter()
            .map(|s| (s, slot("v", "q")))
            .collect();
        let mut no_issue = full.clone();
        no_issue.remove(&SlotName::ObservedIssue);
        let only_target: QueryFrame = [(SlotName::TargetFeature, slot("v", "q"))].into();
        let mut two_missing = full.clone();
        two_missing.remove(&SlotName::TriggerCondition);
        two_missing.remove(&SlotName::DesiredAction);
        for (intent, frame, grey, expected) in [
            (Intent::Modify, &full, false, Risk::Low),
            (Intent::Modify, &full, true, Risk::High),
            (Intent::Modify, &no_issue, false, Risk::High),
            (Intent::Investigate, &only_target, false, Risk::High),
            (Intent::Investigate, &two_missing, false, Risk::Medium),
            (Intent::Implement, &full, false, Risk::Medium),
        ] {
            assert_eq!(
                assess_risk(intent, frame, grey),
                expected,
                "{intent:?} {frame:?} {grey}"
            );
        }
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

    #[test]
    fn claims_are_checked_not_counted() {
        let seen: BTreeSet<String> = ["a.py", "b.py"].map(String::from).into();
        let tools: BTreeSet<String> = ["find_definitions".to_string()].into();
        let exists = |s: &str| matches!(s, "login" | "logout" | "Auth");
        let files = |f: &str| matches!(f, "a.py" | "b.py" | "c.py");
        let facts = Facts {
            symbol_exists: &exists,
            file_exists: &files,
            files_seen: &seen,
            tools_used: &tools,
        };
        let u = Understanding {
            symbols_identified: vec![
                "login".into(),
                "logout".into(),
                "ghost".into(),
                "login".into(),
            ],
            entry_points: vec!["login".into(), "main".into()],
            existing_patterns: vec![PatternClaim {
                name: "service".into(),
                files: vec!["nope.py".into()],
            }],
            files_analyzed: vec!["a.py".into(), "c.py".into(), "z.py".into()],
            slot_evidence: BTreeMap::new(),
        };
        let req = requirements(Intent::Modify, Risk::Medium);
        let a = assess(&req, &u, &facts);
        assert_eq!(a.rejected_claims.len(), 6, "{:?}", a.rejected_claims);
        assert_eq!(a.missing[&Requirement::Symbols], (2, 3));
        assert_eq!(a.missing[&Requirement::Files], (1, 2));
        assert_eq!(a.missing[&Requirement::Patterns], (0, 1));
        assert!(!a.missing.contains_key(&Requirement::EntryPoints));
        assert_eq!(a.missing_slot_evidence, vec![SlotName::TargetFeature]);
        assert_eq!(a.missing_tools, vec!["find_references".to_string()]);
        assert!(!a.complete() && a.confidence > 0.0 && a.confidence < 1.0);

        let u = Understanding {
            symbols_identified: vec!["login".into(), "logout".into(), "Auth".into()],
            entry_points: vec!["login".into()],
            existing_patterns: vec![PatternClaim {
                name: "service".into(),
                files: vec!["a.py".into()],
            }],
            files_analyzed: vec!["a.py".into(), "b.py".into()],
            slot_evidence: [(SlotName::TargetFeature, "a.py:3 login".to_string())].into(),
        };
        let tools: BTreeSet<String> = ["find_definitions", "find_references"]
            .map(String::from)
            .into();
        let facts = Facts {
            tools_used: &tools,
            ..facts
        };
        let a = assess(&req, &u, &facts);
        assert!(a.complete(), "{a:?}");
        assert_eq!(a.confidence, 1.0);
    }

    #[test]
    fn write_gate() {
        let explored: BTreeSet<String> = ["app/auth.py".to_string()].into();
        let ok = |phase, file, exists, allow, hyp: &[(String, HypothesisState)]| {
            check_write(phase, file, exists, allow, &explored, hyp).is_ok()
        };
        assert!(!ok(Phase::Exploration, "app/auth.py", true, false, &[]));
        assert!(ok(Phase::Ready, "app/auth.py", true, false, &[]));
        assert!(!ok(Phase::Ready, "app/other.py", true, false, &[]));
        assert!(ok(Phase::Ready, "app/new.py", false, true, &[]));
        assert!(!ok(Phase::Ready, "lib/new.py", false, true, &[]));
        assert!(!ok(Phase::Ready, "app/new.py", false, false, &[]));
        let pending = [("app/auth.py".to_string(), HypothesisState::Hypothesis)];
        assert!(!ok(Phase::Ready, "app/auth.py", true, false, &pending));
        let rejected = [("app/auth.py".to_string(), HypothesisState::Rejected)];
        let r = check_write(
            Phase::Ready,
            "app/auth.py",
            true,
            false,
            &explored,
            &rejected,
        )
        .unwrap_err();
        assert!(
            r.recovery_options
                .contains(&"revert_to_exploration".to_string())
        );
    }
}
