//! Filament: the role of a class (resource, page, form, table, …), the
//! resource that owns it, and the components a method builds.

use super::*;

/// Filament resource methods that get a chunk kind of their own.
pub(super) const FILAMENT_METHODS: &[(&str, &str)] = &[
    ("form", "filament_form"),
    ("table", "filament_table"),
    ("infolist", "filament_infolist"),
    ("getRelations", "filament_relations"),
    ("getPages", "filament_pages"),
];

/// The Filament role of a class, by its parent class or (v4 schema
/// classes) its name and namespace.
pub(super) fn filament_role(f: &ClassFacts, filament_file: bool) -> Option<&'static str> {
    let parent = f.extends.as_deref().unwrap_or("");
    let short = f.fqcn.rsplit('\\').next().unwrap_or("");
    if parent.starts_with("Filament\\") {
        let base = parent.rsplit('\\').next().unwrap_or("");
        return Some(match base {
            "Resource" => "resource",
            "RelationManager" => "relation_manager",
            "Cluster" => "cluster",
            b if b.ends_with("Widget") || b == "Widget" => "widget",
            _ => "page",
        });
    }
    if filament_file && f.methods.iter().any(|m| m == "configure") {
        for (suffix, role) in [
            ("Form", "form"),
            ("Table", "table"),
            ("Infolist", "infolist"),
        ] {
            if short.ends_with(suffix) {
                return Some(role);
            }
        }
    }
    None
}

/// Filament v4 puts a resource's schema, table and page classes beside it:
/// `…\Products\Schemas\ProductForm`, `…\Products\Tables\ProductsTable`,
/// `…\Products\Pages\EditProduct` belong to `…\Products\ProductResource`
/// (the directory name singularised by dropping a trailing `s`).
pub(super) fn owning_resource(fqcn: &str, role: &str) -> Option<String> {
    if matches!(role, "resource" | "cluster" | "widget") {
        return None;
    }
    let mut parts: Vec<&str> = fqcn.split('\\').collect();
    parts.pop()?;
    let sub = parts.pop()?;
    if !matches!(sub, "Schemas" | "Tables" | "Pages" | "RelationManagers") {
        return None;
    }
    let dir = *parts.last()?;
    let singular = dir.strip_suffix('s').unwrap_or(dir);
    Some(format!("{}\\{singular}Resource", parts.join("\\")))
}

/// The group a Filament component's class name puts it in.
fn component_group(short: &str) -> &'static str {
    const LAYOUT: [&str; 11] = [
        "Section", "Grid", "Tabs", "Tab", "Fieldset", "Wizard", "Step", "Group", "Split", "Card",
        "Flex",
    ];
    if short.ends_with("Column") {
        "columns"
    } else if short.ends_with("Action") {
        "actions"
    } else if short.ends_with("Filter") {
        "filters"
    } else if short.ends_with("Entry") {
        "entries"
    } else if LAYOUT.contains(&short) {
        "layout"
    } else {
        "fields"
    }
}

/// `TextInput::make('name')`, `TextColumn::make('price')`,
/// `DeleteAction::make()` … in a method body, grouped by what the class
/// name says it is: `fields`, `columns`, `actions`, `filters`, `entries`,
/// `layout`; `relation_managers` (in `getRelations`) and `pages` from
/// `X::class` / `X::route(…)`; `classes` (FQCNs of everything referenced, for
/// related_symbols).
pub(super) fn filament_components(method: Node, src: &str, names: &Names) -> Map<String, Value> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    let mut push =
        |group: &'static str, item: String| match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, v)) => {
                if !v.contains(&item) {
                    v.push(item);
                }
            }
            None => groups.push((group, vec![item])),
        };
    let Some(body) = method.child_by_field_name("body") else {
        return Map::new();
    };
    // `X::class` names a relation manager only in getRelations(); elsewhere
    // (`->hiddenOn(ProductsRelationManager::class)`) it is a condition.
    let in_relations = method
        .child_by_field_name("name")
        .is_some_and(|n| text(n, src) == "getRelations");
    let mut classes = Vec::new();
    for n in descendants(body) {
        match n.kind() {
            "scoped_call_expression" => {
                let (Some(scope), Some(call)) = (
                    n.child_by_field_name("scope"),
                    n.child_by_field_name("name"),
                ) else {
                    continue;
                };
                let class = text(scope, src);
                let short = class.rsplit('\\').next().unwrap_or(class);
                let call = text(call, src);
                let arg = arguments(n).first().and_then(|a| string_value(*a, src));
                if call == "configure" {
                    // v4: `ProductForm::configure($schema)` delegates to a
                    // schema class.
                    push("configured_by", short.to_string());
                    classes.extend(names.resolve(class));
                    continue;
                }
                if call == "route" {
                    push("pages", short.to_string());
                    classes.extend(names.resolve(class));
                    continue;
                }
                if call != "make" {
                    continue;
                }
                classes.extend(names.resolve(class));
                let group = component_group(short);
                let item = match (group, arg) {
                    ("actions", Some(a)) => a,
                    ("actions", None) => short.trim_end_matches("Action").to_ascii_lowercase(),
                    (_, Some(a)) => a,
                    (_, None) => continue,
                };
                push(group, item);
            }
            "class_constant_access_expression" if in_relations => {
                if let Some(c) = class_constant(n, src)
                    && c.ends_with("RelationManager")
                {
                    push(
                        "relation_managers",
                        c.rsplit('\\').next().unwrap_or(&c).to_string(),
                    );
                    classes.extend(names.resolve(&c));
                }
            }
            _ => {}
        }
    }
    let mut out: Map<String, Value> = groups
        .into_iter()
        .map(|(g, v)| (g.to_string(), json!(v)))
        .collect();
    classes.sort();
    classes.dedup();
    if !classes.is_empty() {
        out.insert("classes".into(), json!(classes));
    }
    out
}
