//! PHP declaration lines (`class A extends B implements C`) and name
//! boundaries, as the reference resolution reads them.

use std::sync::OnceLock;

use regex::Regex;

/// Whether `needle` occurs in `line` not preceded by a name character (so
/// `OrderForm::x` does not match inside `SubOrderForm::x`).
pub(super) fn has_word_start(line: &str, needle: &str) -> bool {
    line.match_indices(needle).any(|(i, _)| {
        !line[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// A PHP declaration on one line: the declared name and the short names it
/// extends or implements (`class A extends B implements C, D`).
pub(super) fn declaration(line: &str) -> Option<(String, Vec<String>)> {
    static DECL: OnceLock<Regex> = OnceLock::new();
    let re = DECL.get_or_init(|| {
        Regex::new(
            r"^\s*(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(\w+)(?:\s*:\s*\w+)?(?:\s+extends\s+([\w\\,\s]+?))?(?:\s+implements\s+([\w\\,\s]+?))?\s*(?:\{.*)?$",
        )
        .expect("a valid pattern")
    });
    let c = re.captures(line)?;
    let parents = [c.get(2), c.get(3)]
        .into_iter()
        .flatten()
        .flat_map(|m| m.as_str().split(','))
        .filter_map(|p| {
            let short = p.trim().rsplit('\\').next()?.to_string();
            (!short.is_empty()).then_some(short)
        })
        .collect();
    Some((c[1].to_string(), parents))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_give_the_name_and_parents() {
        assert_eq!(
            declaration("final class A extends \\B\\Base implements C, D\\E {"),
            Some(("A".into(), vec!["Base".into(), "C".into(), "E".into()]))
        );
        assert_eq!(declaration("trait T"), Some(("T".into(), vec![])));
        assert_eq!(
            declaration("enum S: string implements I"),
            Some(("S".into(), vec!["I".into()]))
        );
        assert_eq!(declaration("$class = new A;"), None);
    }
}
