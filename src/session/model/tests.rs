//! Tests of `model`.
use super::*;

#[test]
fn agreements_keep_symbols_once_and_files_sorted() {
    let mut s = Session::new(Intent::Modify, "fix the login form");
    assert_eq!(s.agreement().term, "fix the login form");
    s.understanding = Some(Understanding {
        symbols_identified: vec!["login".into(), "Auth".into()],
        files_analyzed: vec!["b.php".into(), "a.php".into()],
        ..Understanding::default()
    });
    s.hypotheses.push(Hypothesis {
        symbol: "Auth".into(),
        file: "a.php".into(),
        slot_source: "symbols".into(),
        reason: String::new(),
        state: HypothesisState::Fact,
        evidence: None,
    });
    s.hypotheses.push(Hypothesis {
        symbol: "Guard".into(),
        file: "g.php".into(),
        slot_source: "symbols".into(),
        reason: String::new(),
        state: HypothesisState::Rejected,
        evidence: None,
    });
    s.writes_allowed.push("a.php".into());
    s.writes_allowed.push("c.php".into());
    s.frame.insert(
        SlotName::TargetFeature,
        Slot {
            value: "login".into(),
            quote: "login form".into(),
        },
    );
    let a = s.agreement();
    assert_eq!(a.symbols, ["login", "Auth"]);
    assert_eq!(a.files, ["a.php", "b.php", "c.php"]);
    assert_eq!(a.term, "login form");
}

/// `Display` and `Tool::name` say what serde writes.
#[test]
fn display_names_match_the_json() {
    let json = |v: serde_json::Value| v.as_str().unwrap().to_string();
    for t in Tool::ALL {
        assert_eq!(json(serde_json::to_value(t).unwrap()), t.to_string());
        assert_eq!(Tool::parse(t.name()), Some(t));
    }
    for s in SlotName::ALL {
        assert_eq!(json(serde_json::to_value(s).unwrap()), s.to_string());
    }
    for r in [Risk::Low, Risk::Medium, Risk::High] {
        assert_eq!(json(serde_json::to_value(r).unwrap()), r.to_string());
    }
    for p in [
        Phase::Exploration,
        Phase::Semantic,
        Phase::Verification,
        Phase::Ready,
    ] {
        assert_eq!(json(serde_json::to_value(p).unwrap()), p.to_string());
    }
    for i in [
        Intent::Implement,
        Intent::Modify,
        Intent::Investigate,
        Intent::Question,
    ] {
        assert_eq!(json(serde_json::to_value(i).unwrap()), i.to_string());
    }
    for o in [
        SessionOutcome::Success,
        SessionOutcome::Failure,
        SessionOutcome::Partial,
    ] {
        assert_eq!(json(serde_json::to_value(o).unwrap()), o.to_string());
    }
}
