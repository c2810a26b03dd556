//! Names: the FQCN of a definition (namespace or module path + class),
//! qualified names split (`A::b`, `A.b`, `Ns\\A`) and matched.

use super::*;

pub(super) fn fqcn(
    lang: Lang,
    rel_path: &str,
    namespace: Option<&str>,
    def: &Definition,
) -> Option<String> {
    match lang {
        Lang::Php => {
            if def.kind == "module" {
                return Some(def.name.clone());
            }
            let mut parts: Vec<&str> = def
                .scope
                .as_deref()
                .map(|s| s.split('.').collect())
                .unwrap_or_default();
            // A braced namespace encloses its classes: drop it from the scope.
            if namespace.is_some() && parts.first().copied() == namespace {
                parts.remove(0);
            }
            let class_path = parts.join("\\");
            let prefix = namespace.map(|n| format!("{n}\\")).unwrap_or_default();
            Some(match (class_path.is_empty(), def.kind.as_str()) {
                (true, _) => format!("{prefix}{}", def.name),
                (false, "method" | "constant" | "field") => {
                    format!("{prefix}{class_path}::{}", def.name)
                }
                (false, _) => format!("{prefix}{class_path}\\{}", def.name),
            })
        }
        Lang::Python => {
            let module = rel_path
                .trim_end_matches(".pyi")
                .trim_end_matches(".py")
                .trim_end_matches("/__init__")
                .replace('/', ".");
            Some(match &def.scope {
                Some(s) => format!("{module}.{s}.{}", def.name),
                None => format!("{module}.{}", def.name),
            })
        }
        _ => None,
    }
}

/// Splits `A.b`, `A::b`, `Ns\A` into (qualifier, name). A PHP property
/// written with its sigil, `Metric::$rules`, is named without it, as its
/// definition is (`rules`; a bare `$rules` stays a variable's name): a
/// trial agent's `Metric::$rules` was taken for a property the change
/// would create (bench/README.md § Honest agent trial).
pub fn split_qualified(symbol: &str) -> (Option<String>, String) {
    let s = symbol.trim();
    if let Some((class, prop)) = s.rsplit_once("::$")
        && !class.is_empty()
        && !prop.is_empty()
    {
        return (Some(class.to_string()), prop.to_string());
    }
    let idx = [
        s.rfind("::").map(|i| (i, 2)),
        s.rfind('.').map(|i| (i, 1)),
        s.rfind('\\').map(|i| (i, 1)),
    ]
    .into_iter()
    .flatten()
    .max_by_key(|(i, _)| *i);
    match idx {
        Some((i, w)) if i > 0 && i + w < s.len() => {
            (Some(s[..i].to_string()), s[i + w..].to_string())
        }
        _ => (None, s.trim_start_matches('\\').to_string()),
    }
}

/// The component a single-file component file defines (`.vue`, `.svelte`):
/// its file stem (`ReportCreateModal` for `…/ReportCreateModal.vue`).
pub fn component_name(file: &str) -> Option<&str> {
    let name = file.rsplit('/').next()?;
    name.strip_suffix(".vue")
        .or_else(|| name.strip_suffix(".svelte"))
        .filter(|s| !s.is_empty())
}

/// [`qualifier_matches`], or `q` names the single-file component `file`
/// (by name, file name or path) that `d` is defined in: agents name a Vue
/// component's function `ReportCreateModal::submit` and its template
/// `ReportCreateModal::template` (bench/README.md § Honest agent trial).
pub fn qualifier_matches_in(q: &str, file: &str, d: &Definition) -> bool {
    qualifier_matches(q, d)
        || component_name(file).is_some_and(|c| {
            let q = q.trim_start_matches("./");
            q == c || file == q || file.ends_with(&format!("/{q}")) && q.contains('.')
        })
}

pub fn qualifier_matches(q: &str, d: &Definition) -> bool {
    let q_norm = q.replace("::", ".").replace('\\', ".");
    let scope = d.scope.as_deref().unwrap_or("");
    let fq = d
        .fqcn
        .as_deref()
        .unwrap_or("")
        .replace("::", ".")
        .replace('\\', ".");
    scope == q_norm || scope.ends_with(&format!(".{q_norm}")) || fq.contains(&format!("{q_norm}."))
}

#[cfg(test)]
mod tests {
    use super::split_qualified;

    /// A class's PHP property is named without its `$`; a bare `$x` (a
    /// variable) and other forms split as before.
    #[test]
    fn a_property_is_named_without_its_sigil() {
        let split = split_qualified;
        assert_eq!(
            split("Metric::$rules"),
            (Some("Metric".into()), "rules".into())
        );
        assert_eq!(
            split("App\\Models\\Metric::$rules"),
            (Some("App\\Models\\Metric".into()), "rules".into())
        );
        assert_eq!(split("$rules"), (None, "$rules".into()));
        assert_eq!(
            split("Metric::rules"),
            (Some("Metric".into()), "rules".into())
        );
        assert_eq!(split("$"), (None, "$".into()));
        assert_eq!(split("App\\Metric"), (Some("App".into()), "Metric".into()));
    }
}
