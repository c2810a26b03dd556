//! PHP facts from the tree-sitter PHP AST: `use` imports (aliases and group
//! uses resolved), constructor-injected dependencies (promoted properties
//! too), Eloquent models and relations, `$translatable`, Filament resources
//! / schema classes / relation managers / pages and their `X::make('…')`
//! components, and Laravel migrations (`Schema::create/table`) as
//! `table_schema` chunks.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{descendants, named_children, parse};
use crate::chunk::Chunk;
use crate::chunk::facts::{
    Columns, Fact, Facts, ForeignKey, Framework, Relation, Role, TableColumn, TableIndex,
    TableOperation, Translatable,
};
use crate::lang::Lang;
use crate::search::symbols::text;

mod filament;
mod migration;
mod names;

use filament::*;
use migration::*;
use names::*;

/// Eloquent relation methods (Laravel 8–12 `HasRelationships`).
const RELATIONS: &[&str] = &[
    "hasOne",
    "hasMany",
    "belongsTo",
    "belongsToMany",
    "hasOneThrough",
    "hasManyThrough",
    "morphOne",
    "morphMany",
    "morphTo",
    "morphToMany",
    "morphedByMany",
];

/// What one class declares, by the AST.
#[derive(Default)]
struct ClassFacts {
    fqcn: String,
    /// Declared `abstract`: a base class, with no table of its own.
    is_abstract: bool,
    extends: Option<String>,
    traits: Vec<String>,
    injected: Vec<String>,
    /// Property name → its default value node text facts.
    translatable: Vec<String>,
    fillable: Vec<String>,
    table: Option<String>,
    model: Option<String>,
    /// Navigation, slug, record title and cluster of a Filament class.
    navigation: Facts,
    relations: Vec<Relation>,
    methods: Vec<String>,
}

/// Adds PHP metadata to the chunks of one file and appends `table_schema`
/// chunks for its migrations. Chunks are matched to classes and methods by
/// FQCN (`Ns\Class`, `Ns\Class::method`), as `search::symbols` computes it.
pub fn enrich(file: &str, source: &str, chunks: &mut Vec<Chunk>) {
    let Some(tree) = parse(Lang::Php, source) else {
        return;
    };
    let root = tree.root_node();
    let names = collect_names(root, source);
    let filament_file = names.imports.values().any(|f| f.starts_with("Filament\\"));
    let all = descendants(root);
    for class in all.iter().filter(|n| n.kind() == "class_declaration") {
        let facts = class_facts(*class, source, &names);
        apply_class(&facts, *class, source, &names, filament_file, chunks);
    }
    let migrations: Vec<Chunk> = all
        .iter()
        .filter(|n| n.kind() == "scoped_call_expression")
        .filter_map(|n| table_schema(*n, source, file))
        .collect();
    chunks.extend(migrations);
}

fn class_facts(class: Node, src: &str, names: &Names) -> ClassFacts {
    let short = class
        .child_by_field_name("name")
        .map_or("", |n| text(n, src));
    let mut f = ClassFacts {
        fqcn: names.resolve(short).unwrap_or_default(),
        ..ClassFacts::default()
    };
    for k in named_children(class) {
        if k.kind() == "abstract_modifier" {
            f.is_abstract = true;
        }
        if k.kind() == "base_clause" {
            f.extends = named_children(k)
                .first()
                .and_then(|b| names.resolve(text(*b, src)));
        }
    }
    let Some(body) = class.child_by_field_name("body") else {
        return f;
    };
    for member in named_children(body) {
        match member.kind() {
            "use_declaration" => {
                for t in named_children(member) {
                    if matches!(t.kind(), "name" | "qualified_name")
                        && let Some(full) = names.resolve(text(t, src))
                    {
                        f.traits.push(full);
                    }
                }
            }
            "property_declaration" => {
                for el in named_children(member)
                    .into_iter()
                    .filter(|e| e.kind() == "property_element")
                {
                    let prop = el
                        .child_by_field_name("name")
                        .map_or("", |n| text(n, src).trim_start_matches('$'));
                    let Some(value) = el.child_by_field_name("default_value") else {
                        continue;
                    };
                    match prop {
                        "translatable" => f.translatable = strings(value, src),
                        "fillable" => f.fillable = strings(value, src),
                        "table" => f.table = string_value(value, src),
                        "model" => {
                            f.model = class_constant(value, src).and_then(|c| names.resolve(&c));
                        }
                        "navigationIcon"
                        | "navigationGroup"
                        | "navigationLabel"
                        | "slug"
                        | "recordTitleAttribute" => {
                            if let Some(v) = string_value(value, src) {
                                f.navigation.set(match prop {
                                    "navigationIcon" => Fact::NavigationIcon(v),
                                    "navigationGroup" => Fact::NavigationGroup(v),
                                    "navigationLabel" => Fact::NavigationLabel(v),
                                    "slug" => Fact::Slug(v),
                                    _ => Fact::RecordTitleAttribute(v),
                                });
                            }
                        }
                        "cluster" => {
                            if let Some(c) =
                                class_constant(value, src).and_then(|c| names.resolve(&c))
                            {
                                f.navigation.set(Fact::Cluster(c));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "method_declaration" => {
                let name = member
                    .child_by_field_name("name")
                    .map_or("", |n| text(n, src))
                    .to_string();
                if name == "__construct" {
                    f.injected = injected(member, src, names);
                }
                if let Some(rel) = relation(member, src, names) {
                    f.relations.push(rel);
                }
                f.methods.push(name);
            }
            _ => {}
        }
    }
    f
}

/// Constructor parameters with a class type (promoted properties too), as
/// FQCNs.
fn injected(method: Node, src: &str, names: &Names) -> Vec<String> {
    let Some(params) = method.child_by_field_name("parameters") else {
        return Vec::new();
    };
    named_children(params)
        .into_iter()
        .filter(|p| {
            matches!(
                p.kind(),
                "simple_parameter" | "property_promotion_parameter"
            )
        })
        .filter_map(|p| p.child_by_field_name("type"))
        .filter_map(|t| {
            // `?Foo` and `Foo|Bar`: every named type inside.
            let named: Vec<Node> = descendants(t)
                .into_iter()
                .filter(|n| n.kind() == "named_type")
                .collect();
            named.first().and_then(|n| names.resolve(text(*n, src)))
        })
        .collect()
}

/// `return $this->hasMany(Order::class, …)` in a method body.
fn relation(method: Node, src: &str, names: &Names) -> Option<Relation> {
    let body = method.child_by_field_name("body")?;
    let name = text(method.child_by_field_name("name")?, src);
    descendants(body).into_iter().find_map(|n| {
        if n.kind() != "member_call_expression" {
            return None;
        }
        let object = n.child_by_field_name("object")?;
        let call = text(n.child_by_field_name("name")?, src);
        if text(object, src) != "$this" || !RELATIONS.contains(&call) {
            return None;
        }
        let related = arguments(n)
            .first()
            .and_then(|a| class_constant(*a, src))
            .and_then(|c| names.resolve(&c));
        Some(Relation {
            name: name.to_string(),
            kind: call.to_string(),
            related,
        })
    })
}

fn is_model(f: &ClassFacts) -> bool {
    matches!(
        f.extends.as_deref(),
        Some(
            "Illuminate\\Database\\Eloquent\\Model"
                | "Illuminate\\Foundation\\Auth\\User"
                | "Illuminate\\Database\\Eloquent\\Relations\\Pivot"
        )
    ) || !f.relations.is_empty()
}

/// What a class says about itself, for its chunks: imports, parent,
/// injected dependencies, translatable fields, Eloquent model facts,
/// Filament role, model and resource.
struct ClassMeta {
    meta: Facts,
    related: Vec<String>,
    role: Option<Role>,
    resource: Option<String>,
}

fn class_meta(f: &ClassFacts, names: &Names, filament_file: bool) -> ClassMeta {
    let mut class_meta = Facts::default();
    let mut related: Vec<String> = Vec::new();
    if !names.imports.is_empty() {
        let mut imports: Vec<String> = names.imports.values().cloned().collect();
        imports.sort();
        class_meta.set(Fact::Imports(imports));
    }
    if let Some(e) = &f.extends {
        class_meta.set(Fact::Extends(e.clone()));
        related.push(e.clone());
    }
    if !f.injected.is_empty() {
        class_meta.set(Fact::InjectedDependencies(f.injected.clone()));
        related.extend(f.injected.iter().cloned());
    }
    let translatable = !f.translatable.is_empty()
        || f.traits
            .iter()
            .any(|t| t.ends_with("\\HasTranslations") || t.ends_with("\\Translatable"));
    if translatable {
        // Models list their fields; a Filament resource with the
        // Translatable concern is translatable as a whole.
        class_meta.set(Fact::Translatable(if f.translatable.is_empty() {
            Translatable::Whole(true)
        } else {
            Translatable::Fields(f.translatable.clone())
        }));
    }
    if is_model(f) {
        class_meta.set(Fact::Framework(Framework::Laravel));
        class_meta.set(Fact::Role(Role::EloquentModel));
        let short = f.fqcn.rsplit('\\').next().unwrap_or("");
        // An abstract base model has no table by the naming convention
        // (akaunting's `App\Abstracts\Model` was said to be table `models`).
        let table = f
            .table
            .clone()
            .or_else(|| (!f.is_abstract).then(|| plural_snake(short)));
        if let Some(table) = table {
            related.push(format!("table:{table}"));
            class_meta.set(Fact::Table(table));
        }
        if !f.fillable.is_empty() {
            class_meta.set(Fact::Fillable(f.fillable.clone()));
        }
        if !f.relations.is_empty() {
            class_meta.set(Fact::Relations(f.relations.clone()));
            related.extend(f.relations.iter().filter_map(|r| r.related.clone()));
        }
    }
    let role = filament_role(f, filament_file);
    let resource = role.and_then(|r| owning_resource(&f.fqcn, r));
    if let Some(role) = role {
        class_meta.set(Fact::Framework(Framework::Filament));
        class_meta.set(Fact::Role(role));
        if let Some(m) = &f.model {
            class_meta.set(Fact::Model(m.clone()));
            related.push(m.clone());
        }
        class_meta.merge(f.navigation.clone());
        if let Some(resource) = &resource {
            class_meta.set(Fact::Resource(resource.clone()));
            related.push(resource.clone());
        }
        if role == Role::Resource {
            let defines = |method: &str| f.methods.iter().any(|m| m == method);
            class_meta.set(Fact::HasForm(defines("form")));
            class_meta.set(Fact::HasTable(defines("table")));
            class_meta.set(Fact::HasInfolist(defines("infolist")));
        }
    }
    related.sort();
    related.dedup();
    ClassMeta {
        meta: class_meta,
        related,
        role,
        resource,
    }
}

/// (facts, related symbols, a kind that replaces `method`).
type MethodMeta = (Facts, Vec<String>, Option<String>);

/// What one method adds to its chunk: (facts, related symbols, a kind that
/// replaces `method`), `None` when nothing: constructor DI, an Eloquent
/// relation, Filament components, actions and resource methods.
fn method_meta(
    f: &ClassFacts,
    m: Node,
    name: &str,
    src: &str,
    names: &Names,
    class: &ClassMeta,
    filament_file: bool,
) -> Option<MethodMeta> {
    let mut meta = Facts::default();
    let mut rel: Vec<String> = Vec::new();
    let mut kind: Option<String> = None;
    if name == "__construct" && !f.injected.is_empty() {
        meta.set(Fact::InjectedDependencies(f.injected.clone()));
        rel.extend(f.injected.iter().cloned());
    }
    if let Some(r) = f.relations.iter().find(|r| r.name == name) {
        meta.set(Fact::Relation(r.clone()));
        rel.extend(r.related.clone());
        kind = Some("eloquent_relation".into());
    }
    let role = class.role;
    if role.is_some() || filament_file {
        let parts = filament_components(m, src, names);
        let method_kind = match role {
            Some(r @ (Role::Form | Role::Table | Role::Infolist)) if name == "configure" => {
                Some(format!("filament_{}", r.as_str()))
            }
            Some(_) => FILAMENT_METHODS
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, k)| (*k).to_string()),
            None => None,
        };
        let has_actions = parts.facts.iter().any(|p| matches!(p, Fact::Actions(_)));
        if let Some(k) = method_kind {
            kind = Some(k);
        } else if has_actions {
            kind = Some("filament_action".into());
        }
        if kind.is_some() {
            rel.extend(parts.classes);
            meta.set(Fact::Framework(Framework::Filament));
            if let Some(model) = &f.model {
                meta.set(Fact::Model(model.clone()));
                rel.push(model.clone());
            }
            if let Some(r) = &class.resource {
                meta.set(Fact::Resource(r.clone()));
                rel.push(r.clone());
            }
            meta.merge(parts.facts);
        }
    }
    if meta.is_empty() {
        return None;
    }
    rel.sort();
    rel.dedup();
    Some((meta, rel, kind))
}

/// Writes a class's facts into its chunks and each method's into the
/// method's chunk.
fn apply_class(
    f: &ClassFacts,
    class: Node,
    src: &str,
    names: &Names,
    filament_file: bool,
    chunks: &mut [Chunk],
) {
    let cm = class_meta(f, names, filament_file);
    let class_fqcn = Some(f.fqcn.clone());
    for c in chunks.iter_mut().filter(|c| c.fqcn == class_fqcn) {
        if c.kind == "class" && cm.role == Some(Role::Resource) {
            c.kind = "filament_resource".into();
        }
        c.meta.merge(cm.meta.clone());
        c.related.clone_from(&cm.related);
    }
    // Methods: relations, constructor DI, Filament components.
    let Some(body) = class.child_by_field_name("body") else {
        return;
    };
    for m in named_children(body)
        .into_iter()
        .filter(|m| m.kind() == "method_declaration")
    {
        let name = m.child_by_field_name("name").map_or("", |n| text(n, src));
        let Some((meta, rel, kind)) = method_meta(f, m, name, src, names, &cm, filament_file)
        else {
            continue;
        };
        let fq = Some(format!("{}::{name}", f.fqcn));
        for c in chunks.iter_mut().filter(|c| c.fqcn == fq) {
            if let Some(k) = &kind {
                c.kind.clone_from(k);
            }
            c.meta.merge(meta.clone());
            c.related.clone_from(&rel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plural_and_snake() {
        assert_eq!(plural_snake("Product"), "products");
        assert_eq!(plural_snake("Category"), "categories");
        assert_eq!(plural_snake("OrderItem"), "order_items");
        assert_eq!(plural_snake("Address"), "addresses");
        assert_eq!(snake("navigationIcon"), "navigation_icon");
    }

    /// An abstract base model has no conventional table; a concrete one
    /// has, and an explicit `$table` wins either way.
    #[test]
    fn an_abstract_model_has_no_conventional_table() {
        let table = |src: &str| {
            let chunks =
                crate::framework::chunk_source("app/Models/X.php", src, &Default::default());
            chunks.iter().find(|c| c.kind == "class").and_then(|c| {
                c.meta.iter().find_map(|f| match f {
                    Fact::Table(t) => Some(t.clone()),
                    _ => None,
                })
            })
        };
        let base = "use Illuminate\\Database\\Eloquent\\Model as Eloquent;\n";
        assert_eq!(
            table(&format!(
                "<?php\nnamespace App\\Abstracts;\n{base}abstract class Model extends Eloquent {{}}\n"
            )),
            None
        );
        assert_eq!(
            table(&format!(
                "<?php\nnamespace App\\Models;\n{base}class Invoice extends Eloquent {{}}\n"
            ))
            .as_deref(),
            Some("invoices")
        );
        assert_eq!(
            table(&format!("<?php\nnamespace App\\Abstracts;\n{base}abstract class Model extends Eloquent {{ protected $table = 'things'; }}\n")).as_deref(),
            Some("things")
        );
    }
}
