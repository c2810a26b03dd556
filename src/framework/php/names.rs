//! Names in a PHP file: `use` imports and the namespace, string and
//! `X::class` arguments, resolved class names; snake and plural forms.

use super::*;

/// Names in scope in one file: namespace and `use` imports.
pub(super) struct Names {
    pub(super) namespace: Option<String>,
    /// Alias (last segment or `as` name) → fully qualified name.
    pub(super) imports: HashMap<String, String>,
}

impl Names {
    /// Resolves a class name as PHP does: leading `\` is absolute, a first
    /// segment matching an import is replaced by it, anything else is
    /// relative to the namespace. `self`/`static` and built-in types give
    /// `None`.
    pub(super) fn resolve(&self, name: &str) -> Option<String> {
        let name = name.trim();
        if name.is_empty()
            || matches!(
                name.to_ascii_lowercase().as_str(),
                "self"
                    | "static"
                    | "parent"
                    | "array"
                    | "string"
                    | "int"
                    | "float"
                    | "bool"
                    | "mixed"
                    | "callable"
                    | "iterable"
                    | "object"
                    | "void"
                    | "null"
                    | "false"
                    | "true"
            )
        {
            return None;
        }
        if let Some(abs) = name.strip_prefix('\\') {
            return Some(abs.to_string());
        }
        let (first, rest) = match name.split_once('\\') {
            Some((f, r)) => (f, Some(r)),
            None => (name, None),
        };
        if let Some(full) = self.imports.get(first) {
            return Some(match rest {
                Some(r) => format!("{full}\\{r}"),
                None => full.clone(),
            });
        }
        Some(match &self.namespace {
            Some(ns) => format!("{ns}\\{name}"),
            None => name.to_string(),
        })
    }
}

/// The value of a string literal node (`'x'` / `"x"`), without quotes.
pub(super) fn string_value(n: Node, src: &str) -> Option<String> {
    match n.kind() {
        "string" | "encapsed_string" => Some(
            text(n, src)
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string(),
        ),
        "argument" => n.named_child(0).and_then(|c| string_value(c, src)),
        _ => None,
    }
}

/// `Foo::class` → `Foo`.
pub(super) fn class_constant(n: Node, src: &str) -> Option<String> {
    let n = if n.kind() == "argument" {
        n.named_child(0)?
    } else {
        n
    };
    if n.kind() != "class_constant_access_expression" {
        return None;
    }
    let parts = named_children(n);
    (parts.len() == 2 && text(parts[1], src) == "class").then(|| text(parts[0], src).to_string())
}

pub(super) fn arguments(call: Node) -> Vec<Node> {
    call.child_by_field_name("arguments")
        .map(named_children)
        .unwrap_or_default()
}

/// Strings of an array literal (`['a', 'b']`), or of a single string.
pub(super) fn strings(n: Node, src: &str) -> Vec<String> {
    let n = if n.kind() == "argument" {
        match n.named_child(0) {
            Some(c) => c,
            None => return Vec::new(),
        }
    } else {
        n
    };
    if let Some(s) = string_value(n, src) {
        return vec![s];
    }
    if n.kind() != "array_creation_expression" {
        return Vec::new();
    }
    named_children(n)
        .into_iter()
        .filter_map(|e| {
            // `'a'` or `'key' => 'value'`: the last child is the value.
            let v = named_children(e).pop()?;
            string_value(v, src)
        })
        .collect()
}

pub(super) fn collect_names(root: Node, src: &str) -> Names {
    let mut names = Names {
        namespace: None,
        imports: HashMap::new(),
    };
    for n in named_children(root) {
        match n.kind() {
            "namespace_definition" if names.namespace.is_none() => {
                names.namespace = n
                    .child_by_field_name("name")
                    .map(|x| text(x, src).to_string());
            }
            "namespace_use_declaration" => {
                let kids = named_children(n);
                let prefix = kids
                    .iter()
                    .find(|k| k.kind() == "namespace_name")
                    .map(|k| text(*k, src).trim_start_matches('\\').to_string());
                let clauses: Vec<Node> = match n.child_by_field_name("body") {
                    Some(group) => named_children(group),
                    None => kids,
                };
                for c in clauses
                    .into_iter()
                    .filter(|c| c.kind() == "namespace_use_clause")
                {
                    let Some(target) = named_children(c)
                        .into_iter()
                        .find(|k| matches!(k.kind(), "qualified_name" | "name"))
                    else {
                        continue;
                    };
                    let path = text(target, src).trim_start_matches('\\');
                    let full = match &prefix {
                        Some(p) => format!("{p}\\{path}"),
                        None => path.to_string(),
                    };
                    let alias = c
                        .child_by_field_name("alias")
                        .map(|a| text(a, src).to_string())
                        .unwrap_or_else(|| full.rsplit('\\').next().unwrap_or(&full).to_string());
                    names.imports.insert(alias, full);
                }
            }
            _ => {}
        }
    }
    names
}

/// `navigationIcon` → `navigation_icon`.
pub(super) fn snake(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_uppercase() {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

pub(super) use crate::util::plural_snake;
