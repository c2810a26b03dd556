//! Risk from what a change touches (docs/sessions.md § Risk): the files it
//! edits, the symbols it changes and how widely they are used. Which slots
//! of the query frame were filled plays no part, so saying less never
//! lowers the bar.

use std::collections::BTreeMap;

use super::model::{QueryFrame, Risk, SlotName};
use crate::classify::{FileClass, classify_path};

/// Words of a path or symbol that mark authentication, authorisation,
/// secrets or money: a change there is HIGH risk. Matched against whole
/// identifier words (`PasswordBroker` → `password`, `broker`), so `author`
/// does not match `auth`.
const SENSITIVE_WORDS: &[&str] = &[
    "auth",
    "login",
    "logout",
    "password",
    "passwd",
    "credential",
    "credentials",
    "secret",
    "token",
    "permission",
    "permissions",
    "policy",
    "policies",
    "guard",
    "csrf",
    "oauth",
    "sanctum",
    "passport",
    "payment",
    "payments",
    "billing",
    "checkout",
    "refund",
    "stripe",
    "paypal",
    "cashier",
    "encrypt",
    "encrypter",
    "encryption",
    "decrypt",
    "crypt",
    "2fa",
];

/// Word prefixes with the same meaning (`authenticate`, `authorization`).
const SENSITIVE_PREFIXES: &[&str] = &["authentic", "authoriz", "authoris", "encrypt", "decrypt"];

/// Uses of a changed symbol from which a change is MEDIUM risk (a change
/// ripples into callers) and HIGH risk (a widely used API). Chosen, not
/// fitted: on laravel/framework a method with ≥ 50 uses is one of the ~2 %
/// most referenced (`find_references` over src/), one with ≥ 10 of the ~15 %.
pub const MEDIUM_REFERENCES: usize = 10;
pub const HIGH_REFERENCES: usize = 50;

/// Risk of a change to `files` (repo-relative, edited or created) naming
/// `symbols` and changing `changed` (its entry points), with
/// `references` = symbol as given to `find_references` → uses it found and
/// `parsed` = the same → of those, the uses the parsed code names as a
/// reference (a call, an import, a route action; not a line holding the
/// name in a string or URL: in an agent trial a bare `follow` matched 10
/// lines of a RealWorld app, half of them `…/follow` URLs and route names;
/// bench/README.md § Honest agent trial). `parsed` counts where it
/// has the symbol; `references` where it does not (sessions saved before
/// it was kept). Sensitive words count on every symbol given (the caller
/// gives those the change edits); uses count only for the changed ones (a
/// class the change calls 27 times is read, not changed). Returns the
/// level and one reason per rule that fired (empty for LOW).
pub fn touch_risk(
    files: &[String],
    symbols: &[String],
    changed: &[String],
    references: &BTreeMap<String, usize>,
    parsed: &BTreeMap<String, usize>,
) -> (Risk, Vec<String>) {
    let mut high = Vec::new();
    let mut medium = Vec::new();
    for f in files {
        // A test of auth code (`tests/Commands/ResetPasswordCommandTest.php`)
        // runs nothing in production: the code it tests carries the risk.
        if let Some(w) = sensitive_word(f).filter(|_| !crate::classify::is_test_path(f)) {
            high.push(format!("`{f}` is on an auth/secret/payment path ({w})"));
        }
        if let Some(why) = schema_or_wiring(f) {
            medium.push(format!("`{f}` {why}"));
        }
    }
    for s in symbols {
        if let Some(w) = sensitive_word(s) {
            high.push(format!("`{s}` is auth/secret/payment code ({w})"));
        }
    }
    for s in changed {
        let uses = super::requirements::uses_found(parsed, s)
            .or_else(|| super::requirements::uses_found(references, s));
        match uses {
            Some(n) if n >= HIGH_REFERENCES => {
                high.push(format!("`{s}` has {n} uses (≥ {HIGH_REFERENCES})"))
            }
            Some(n) if n >= MEDIUM_REFERENCES => {
                medium.push(format!("`{s}` has {n} uses (≥ {MEDIUM_REFERENCES})"))
            }
            _ => {}
        }
    }
    if !high.is_empty() {
        (Risk::High, high)
    } else if !medium.is_empty() {
        (Risk::Medium, medium)
    } else {
        (Risk::Low, Vec::new())
    }
}

/// Sensitive words that prose uses in other senses ("the privacy policy
/// page", "guard against empty input"): they count in identifiers only.
const PROSE_AMBIGUOUS: &[&str] = &["policy", "policies", "guard"];

/// Risk from what the query frame says the change is about: HIGH when its
/// `desired_action` or `observed_issue` value names authentication, a
/// secret or money ([`SENSITIVE_WORDS`] but [`PROSE_AMBIGUOUS`]). A ticket
/// asking that users may change their password edits a form request and a
/// controller action whose names say nothing of it, and was judged LOW in
/// the honest agent trial (bench/README.md § Honest agent trial), where the
/// agent expected HIGH. Returns the level and its reason (empty for LOW).
pub fn frame_risk(frame: &QueryFrame) -> (Risk, Vec<String>) {
    for (slot, name) in [
        (SlotName::DesiredAction, "desired_action"),
        (SlotName::ObservedIssue, "observed_issue"),
    ] {
        let Some(s) = frame.get(&slot) else { continue };
        if let Some(w) = sensitive_word(&s.value).filter(|w| !PROSE_AMBIGUOUS.contains(&w.as_str()))
        {
            return (
                Risk::High,
                vec![format!(
                    "the request is about auth/secret/payment ({w}): {name} \"{}\"",
                    s.value
                )],
            );
        }
    }
    (Risk::Low, Vec::new())
}

/// The sensitive word of a path or symbol, if any.
fn sensitive_word(text: &str) -> Option<String> {
    crate::util::split_identifier(text)
        .split(' ')
        .find(|w| {
            SENSITIVE_WORDS.contains(w) || SENSITIVE_PREFIXES.iter().any(|p| w.starts_with(p))
        })
        .map(str::to_string)
}

/// Why a file is MEDIUM risk by what it is: a migration or schema changes
/// stored data; routes and configuration wire the whole application. The
/// configuration reason gives `classify`'s own (`path segment config/`,
/// `configuration format .json`), so a misclassified file shows why.
fn schema_or_wiring(rel: &str) -> Option<String> {
    let dirs: Vec<&str> = rel.split('/').collect();
    let name = dirs.last().copied().unwrap_or(rel).to_ascii_lowercase();
    if dirs.contains(&"migrations") || name.ends_with(".sql") || name.starts_with("schema.") {
        return Some("changes the database schema".to_string());
    }
    if dirs.first() == Some(&"routes") || name.starts_with("routes.") || name == "urls.py" {
        return Some("defines routes".to_string());
    }
    let class = classify_path(rel);
    if class.class == FileClass::Config {
        return Some(format!("is configuration ({})", class.reason));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(files: &[&str], symbols: &[&str], refs: &[(&str, usize)]) -> Risk {
        let files: Vec<String> = files.iter().map(|s| (*s).to_string()).collect();
        let symbols: Vec<String> = symbols.iter().map(|s| (*s).to_string()).collect();
        let refs = refs.iter().map(|(s, n)| ((*s).to_string(), *n)).collect();
        touch_risk(&files, &symbols, &symbols, &refs, &BTreeMap::new()).0
    }

    #[test]
    fn risk_comes_from_what_the_change_touches() {
        use Risk::*;
        for (files, symbols, refs, expected) in [
            (
                &["app/Filament/Resources/ProductResource.php"][..],
                &["ProductResource"][..],
                &[][..],
                Low,
            ),
            (&["app/Models/Post.php"], &["author"], &[], Low),
            (
                &["app/Http/Controllers/Auth/LoginController.php"],
                &[],
                &[],
                High,
            ),
            (
                &["src/Illuminate/Auth/Passwords/PasswordBroker.php"],
                &[],
                &[],
                High,
            ),
            (&["app/Services/Billing.php"], &[], &[], High),
            // Its test is not: the code it tests carries the risk.
            (
                &["tests/Commands/ResetPasswordCommandTest.php"],
                &[],
                &[],
                Low,
            ),
            (&["app/Models/User.php"], &["UserPolicy::update"], &[], High),
            (
                &["database/migrations/2024_01_01_create_products.php"],
                &[],
                &[],
                Medium,
            ),
            (&["routes/web.php"], &[], &[], Medium),
            (&["config/app.php"], &[], &[], Medium),
            (
                &["app/Models/Order.php"],
                &["Order::scopePaid"],
                &[("scopePaid", 12)],
                Medium,
            ),
            (
                &["app/Models/Order.php"],
                &["Order::total"],
                &[("total", 80)],
                High,
            ),
            (
                &["app/Models/Order.php"],
                &["Order::total"],
                &[("total", 3)],
                Low,
            ),
        ] {
            assert_eq!(
                risk(files, symbols, refs),
                expected,
                "{files:?} {symbols:?}"
            );
        }
    }

    #[test]
    fn uses_count_for_changed_symbols_only_and_reasons_name_the_class() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
        let refs: BTreeMap<String, usize> = [("Tag::all".to_string(), 27)].into();
        // Tag is read (named), the change is in TagController::index.
        let (r, why) = touch_risk(
            &s(&["app/Http/Controllers/TagController.php"]),
            &s(&["Tag::all", "TagController::index"]),
            &s(&["TagController::index"]),
            &refs,
            &BTreeMap::new(),
        );
        assert_eq!((r, why.len()), (Risk::Low, 0), "{why:?}");
        let (r, _) = touch_risk(
            &s(&["app/Models/Tag.php"]),
            &s(&["Tag::all"]),
            &s(&["Tag::all"]),
            &refs,
            &BTreeMap::new(),
        );
        assert_eq!(r, Risk::Medium);
        let (_, why) = touch_risk(
            &s(&["config/app.php"]),
            &[],
            &[],
            &BTreeMap::new(),
            &BTreeMap::new(),
        );
        assert_eq!(
            why,
            vec!["`config/app.php` is configuration (path segment config/)"]
        );
        let (r, why) = touch_risk(
            &s(&["docs/examples/app.json"]),
            &[],
            &[],
            &BTreeMap::new(),
            &BTreeMap::new(),
        );
        assert_eq!((r, why.len()), (Risk::Low, 0), "{why:?}");
    }

    /// What the frame says the change is about raises risk when it names a
    /// credential or money; prose senses of `policy` and `guard` do not.
    #[test]
    fn a_frame_about_passwords_is_high_risk() {
        use super::super::model::Slot;
        let frame = |slot: SlotName, value: &str| -> QueryFrame {
            [(
                slot,
                Slot {
                    value: value.into(),
                    quote: "q".into(),
                },
            )]
            .into()
        };
        let (r, why) = frame_risk(&frame(
            SlotName::DesiredAction,
            "allow changing to a new password of at least 8 characters",
        ));
        assert_eq!(r, Risk::High);
        assert!(why[0].contains("(password)"), "{why:?}");
        assert_eq!(
            frame_risk(&frame(
                SlotName::ObservedIssue,
                "the login form ignores the remember box"
            ))
            .0,
            Risk::High
        );
        for (slot, value) in [
            (
                SlotName::DesiredAction,
                "link the privacy policy page in the footer",
            ),
            (
                SlotName::DesiredAction,
                "refuse following yourself with a 403",
            ),
            (SlotName::TargetFeature, "password reset"),
        ] {
            assert_eq!(frame_risk(&frame(slot, value)).0, Risk::Low, "{value}");
        }
    }

    /// A bare name matched in URLs and route names is not used that often:
    /// the uses the parsed code names count, where the check recorded them.
    #[test]
    fn uses_in_code_count_rather_than_every_line_holding_the_name() {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_string()).collect::<Vec<_>>();
        let lines: BTreeMap<String, usize> = [("follow".to_string(), 10)].into();
        let parsed: BTreeMap<String, usize> = [("follow".to_string(), 2)].into();
        let touch = |parsed: &BTreeMap<String, usize>| {
            touch_risk(
                &s(&["app/Http/Controllers/Api/ProfileController.php"]),
                &s(&["ProfileController::follow"]),
                &s(&["ProfileController::follow"]),
                &lines,
                parsed,
            )
        };
        assert_eq!(touch(&parsed).0, Risk::Low);
        // A session saved before the parsed count: every line counts.
        let (r, why) = touch(&BTreeMap::new());
        assert_eq!(r, Risk::Medium);
        assert_eq!(why, vec!["`ProfileController::follow` has 10 uses (≥ 10)"]);
    }
}
