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
pub(super) fn filament_role(f: &ClassFacts, filament_file: bool) -> Option<Role> {
    let parent = f.extends.as_deref().unwrap_or("");
    let short = f.fqcn.rsplit('\\').next().unwrap_or("");
    if parent.starts_with("Filament\\") {
        let base = parent.rsplit('\\').next().unwrap_or("");
        return Some(match base {
            "Resource" => Role::Resource,
            "RelationManager" => Role::RelationManager,
            "Cluster" => Role::Cluster,
            b if b.ends_with("Widget") || b == "Widget" => Role::Widget,
            _ => Role::Page,
        });
    }
    if filament_file && f.methods.iter().any(|m| m == "configure") {
        for (suffix, role) in [
            ("Form", Role::Form),
            ("Table", Role::Table),
            ("Infolist", Role::Infolist),
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
pub(super) fn owning_resource(fqcn: &str, role: Role) -> Option<String> {
    if matches!(role, Role::Resource | Role::Cluster | Role::Widget) {
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

/// What a Filament component or reference in a method is, and the fact it
/// is listed under.
#[derive(Clone, Copy, PartialEq)]
enum Group {
    Fields,
    Columns,
    Actions,
    Filters,
    Entries,
    Layout,
    RelationManagers,
    Pages,
    ConfiguredBy,
}

impl Group {
    /// `items` as this group's fact.
    fn fact(self, items: Vec<String>) -> Fact {
        match self {
            Group::Fields => Fact::Fields(items),
            Group::Columns => Fact::Columns(Columns::Names(items)),
            Group::Actions => Fact::Actions(items),
            Group::Filters => Fact::Filters(items),
            Group::Entries => Fact::Entries(items),
            Group::Layout => Fact::Layout(items),
            Group::RelationManagers => Fact::RelationManagers(items),
            Group::Pages => Fact::Pages(items),
            Group::ConfiguredBy => Fact::ConfiguredBy(items),
        }
    }
}

/// The group a Filament component's class name puts it in.
fn component_group(short: &str) -> Group {
    const LAYOUT: [&str; 11] = [
        "Section", "Grid", "Tabs", "Tab", "Fieldset", "Wizard", "Step", "Group", "Split", "Card",
        "Flex",
    ];
    if short.ends_with("Column") {
        Group::Columns
    } else if short.ends_with("Action") {
        Group::Actions
    } else if short.ends_with("Filter") {
        Group::Filters
    } else if short.ends_with("Entry") {
        Group::Entries
    } else if LAYOUT.contains(&short) {
        Group::Layout
    } else {
        Group::Fields
    }
}

/// The components of one method: their facts and every class they name.
pub(super) struct Components {
    pub(super) facts: Facts,
    /// FQCNs of everything referenced, sorted (for `related`).
    pub(super) classes: Vec<String>,
}

/// `TextInput::make('name')`, `TextColumn::make('price')`,
/// `DeleteAction::make()` … in a method body, grouped by what the class
/// name says it is: `fields`, `columns`, `actions`, `filters`, `entries`,
/// `layout`; `relation_managers` (in `getRelations`) and `pages` from
/// `X::class` / `X::route(…)`; `configured_by` from `X::configure(…)`.
pub(super) fn filament_components(method: Node, src: &str, names: &Names) -> Components {
    let mut groups: Vec<(Group, Vec<String>)> = Vec::new();
    let mut push = |group: Group, item: String| match groups.iter_mut().find(|(g, _)| *g == group) {
        Some((_, v)) => {
            if !v.contains(&item) {
                v.push(item);
            }
        }
        None => groups.push((group, vec![item])),
    };
    let Some(body) = method.child_by_field_name("body") else {
        return Components {
            facts: Facts::default(),
            classes: Vec::new(),
        };
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
                    push(Group::ConfiguredBy, short.to_string());
                    classes.extend(names.resolve(class));
                    continue;
                }
                if call == "route" {
                    push(Group::Pages, short.to_string());
                    classes.extend(names.resolve(class));
                    continue;
                }
                if call != "make" {
                    continue;
                }
                classes.extend(names.resolve(class));
                let group = component_group(short);
                let item = match (group, arg) {
                    (Group::Actions, Some(a)) => a,
                    (Group::Actions, None) => short.trim_end_matches("Action").to_ascii_lowercase(),
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
                        Group::RelationManagers,
                        c.rsplit('\\').next().unwrap_or(&c).to_string(),
                    );
                    classes.extend(names.resolve(&c));
                }
            }
            _ => {}
        }
    }
    let facts = groups
        .into_iter()
        .map(|(group, items)| group.fact(items))
        .collect();
    classes.sort();
    classes.dedup();
    Components { facts, classes }
}
