//! The framework facts of a chunk, typed: what the strategies of
//! `crate::framework` read from the AST (Laravel, Filament, Composer,
//! Tailwind, Blade). [`Facts`] is a list of [`Fact`]s, one of each kind at
//! most, in the order the strategy found them.
//!
//! Shape on the wire and in the `forest` table's `meta` column: one JSON
//! object, a key a fact ([`Fact::key`]), in the list's order. That is the
//! shape the column held when facts were a free JSON map (an
//! insertion-ordered `serde_json::Map`), so an index written before reads
//! back the same facts, and [`Facts::summary`], the facts line of the
//! embedded text, is byte-identical to the one that map gave: no chunk is
//! embedded again. The stored form adds a version, [`FACTS_VERSION`] (a row
//! without one is version 1). Keys are read in one place, [`Fact::read`].

use std::fmt;

use indexmap::IndexMap;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Version of the stored facts' shape ([`Facts::to_stored`]). A row written
/// by a newer shape is refused by [`Facts::from_stored`] rather than read
/// wrong.
pub const FACTS_VERSION: u32 = 1;

/// Which framework a chunk's facts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framework {
    /// A Blade view's components, views and routes (`related`).
    Blade,
    /// A `composer.json` section.
    Composer,
    Filament,
    /// Eloquent models and migrations.
    Laravel,
    /// A `tailwind.config.*` section.
    Tailwind,
}

/// What a PHP class is to its framework.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    EloquentModel,
    /// Filament: a resource, its pages, relation managers, clusters,
    /// widgets, and v4's schema classes (form, table, infolist).
    Resource,
    RelationManager,
    Cluster,
    Widget,
    Page,
    Form,
    Table,
    Infolist,
}

impl Role {
    /// The name on the wire (`eloquent_model`, `resource`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::EloquentModel => "eloquent_model",
            Role::Resource => "resource",
            Role::RelationManager => "relation_manager",
            Role::Cluster => "cluster",
            Role::Widget => "widget",
            Role::Page => "page",
            Role::Form => "form",
            Role::Table => "table",
            Role::Infolist => "infolist",
        }
    }
}

/// What a migration does to its table: `Schema::create` or `Schema::table`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TableOperation {
    Create,
    /// `Schema::table`: the table is altered.
    Table,
}

impl TableOperation {
    /// `create` or `table` (the `Schema::` method).
    pub fn as_str(self) -> &'static str {
        match self {
            TableOperation::Create => "create",
            TableOperation::Table => "table",
        }
    }
}

/// An Eloquent relation: the method `name` returns `$this->type(related)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relation {
    pub name: String,
    /// `hasMany`, `belongsTo`, … (Laravel's `HasRelationships` methods).
    #[serde(rename = "type")]
    pub kind: String,
    /// The related model's FQCN; `None` when its class is not resolved.
    pub related: Option<String>,
}

/// A column a migration declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableColumn {
    pub name: String,
    /// The Blueprint method: `string`, `foreignId`, `timestamps`, ….
    #[serde(rename = "type")]
    pub kind: String,
    /// Modifier calls as written, arguments kept: `nullable`, `default(0)`.
    pub modifiers: Vec<String>,
}

/// An index a migration adds, drops or renames (`unique`, `dropColumn`,
/// `renameColumn`, …) and the columns it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableIndex {
    #[serde(rename = "type")]
    pub kind: String,
    pub columns: Vec<String>,
}

/// A foreign key: `column` references `references` on table `on`;
/// `on_delete` is what deleting the referenced row does, as the migration
/// says it (`cascade` of `onDelete('cascade')` or `cascadeOnDelete()`,
/// `set null`, `restrict`, `no action`), `None` when it says nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKey {
    pub column: Option<String>,
    pub references: Option<String>,
    pub on: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_delete: Option<String>,
}

/// `columns`: a Filament table's column names, or a migration's columns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Columns {
    Names(Vec<String>),
    Table(Vec<TableColumn>),
}

/// `translatable`: the fields a model lists, or (a Filament resource with
/// the Translatable concern) the whole resource (`true`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Translatable {
    Fields(Vec<String>),
    Whole(bool),
}

/// A PSR-4 root's directory, or its directories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Directories {
    One(String),
    Many(Vec<String>),
}

/// Declares [`Fact`] from one table: variant, value type and wire key.
macro_rules! fact_kinds {
    ($($(#[$doc:meta])* $variant:ident($ty:ty) = $key:literal,)*) => {
        /// One framework fact: its kind and its value.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Fact {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Fact {
            /// The fact's key on the wire and in the stored JSON.
            pub fn key(&self) -> &'static str {
                match self {
                    $(Fact::$variant(_) => $key,)*
                }
            }

            fn serialize_into<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                match self {
                    $(Fact::$variant(v) => map.serialize_entry($key, v),)*
                }
            }

            /// The value of `key` as its fact; `None` (the value skipped)
            /// for a key this build does not know.
            fn read<'de, A: MapAccess<'de>>(key: &str, map: &mut A) -> Result<Option<Fact>, A::Error> {
                Ok(match key {
                    $($key => Some(Fact::$variant(map.next_value()?)),)*
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                        None
                    }
                })
            }
        }
    };
}

fact_kinds! {
    /// Filament actions (`delete`, `edit`, or the `make('…')` name).
    Actions(Vec<String>) = "actions",
    /// The Filament cluster a resource or page belongs to (FQCN).
    Cluster(String) = "cluster",
    /// Tailwind theme colours.
    Colors(Vec<String>) = "colors",
    Columns(Columns) = "columns",
    /// v4 schema classes a resource method delegates to (`ProductForm`).
    ConfiguredBy(Vec<String>) = "configured_by",
    /// Tailwind content paths.
    Content(Vec<String>) = "content",
    /// Filament infolist entries.
    Entries(Vec<String>) = "entries",
    /// The parent class (FQCN).
    Extends(String) = "extends",
    /// Filament form fields.
    Fields(Vec<String>) = "fields",
    /// An Eloquent model's `$fillable`.
    Fillable(Vec<String>) = "fillable",
    /// Filament table filters.
    Filters(Vec<String>) = "filters",
    /// Tailwind theme font families.
    Fonts(Vec<String>) = "fonts",
    ForeignKeys(Vec<ForeignKey>) = "foreign_keys",
    Framework(Framework) = "framework",
    /// A Filament resource defines `form()`.
    HasForm(bool) = "has_form",
    HasInfolist(bool) = "has_infolist",
    HasTable(bool) = "has_table",
    /// The file's `use` imports (FQCNs, sorted).
    Imports(Vec<String>) = "imports",
    Indexes(Vec<TableIndex>) = "indexes",
    /// Constructor-injected classes (FQCNs).
    InjectedDependencies(Vec<String>) = "injected_dependencies",
    /// Filament layout components (`Section`, `Grid`, …).
    Layout(Vec<String>) = "layout",
    /// The Eloquent model a Filament class is about (FQCN).
    Model(String) = "model",
    NavigationGroup(String) = "navigation_group",
    NavigationIcon(String) = "navigation_icon",
    NavigationLabel(String) = "navigation_label",
    Operation(TableOperation) = "operation",
    /// The Composer package's name (`vendor/name`).
    Package(String) = "package",
    /// Composer requirements: package → version constraint, in the file's
    /// order.
    Packages(IndexMap<String, String>) = "packages",
    /// Filament pages a resource routes (`ListProducts`).
    Pages(Vec<String>) = "pages",
    /// Tailwind plugins.
    Plugins(Vec<String>) = "plugins",
    /// Composer PSR-4 roots: namespace prefix → directory or directories.
    Psr4(IndexMap<String, Directories>) = "psr4",
    RecordTitleAttribute(String) = "record_title_attribute",
    /// The Eloquent relation a method defines.
    Relation(Relation) = "relation",
    /// Relation managers a Filament resource lists.
    RelationManagers(Vec<String>) = "relation_managers",
    /// The Eloquent relations a model defines.
    Relations(Vec<Relation>) = "relations",
    /// The Filament resource a page, schema class or relation manager
    /// belongs to (FQCN).
    Resource(String) = "resource",
    Role(Role) = "role",
    /// Tailwind theme breakpoints.
    Screens(Vec<String>) = "screens",
    Slug(String) = "slug",
    /// A model's or a migration's table.
    Table(String) = "table",
    Translatable(Translatable) = "translatable",
}

impl Fact {
    /// This fact's part of [`Facts::summary`], if it has one.
    fn summarise(&self, line: &mut SummaryLine) {
        let key = self.key();
        match self {
            // The graph has these; they would crowd the line.
            Fact::Imports(_) | Fact::Framework(_) | Fact::Packages(_) | Fact::Psr4(_) => {}
            Fact::Cluster(s)
            | Fact::Extends(s)
            | Fact::Model(s)
            | Fact::NavigationGroup(s)
            | Fact::NavigationIcon(s)
            | Fact::NavigationLabel(s)
            | Fact::Package(s)
            | Fact::RecordTitleAttribute(s)
            | Fact::Resource(s)
            | Fact::Slug(s)
            | Fact::Table(s) => line.text(key, s),
            Fact::Operation(op) => line.text(key, op.as_str()),
            Fact::Role(role) => line.text(key, role.as_str()),
            Fact::Actions(items)
            | Fact::Colors(items)
            | Fact::Columns(Columns::Names(items))
            | Fact::ConfiguredBy(items)
            | Fact::Content(items)
            | Fact::Entries(items)
            | Fact::Fields(items)
            | Fact::Fillable(items)
            | Fact::Filters(items)
            | Fact::Fonts(items)
            | Fact::InjectedDependencies(items)
            | Fact::Layout(items)
            | Fact::Pages(items)
            | Fact::Plugins(items)
            | Fact::RelationManagers(items)
            | Fact::Screens(items)
            | Fact::Translatable(Translatable::Fields(items)) => {
                line.named(key, items.iter().map(|s| Some(short_name(s))).collect());
            }
            Fact::Columns(Columns::Table(columns)) => {
                line.named(key, columns.iter().map(|c| Some(c.name.as_str())).collect());
            }
            Fact::Relations(relations) => {
                line.named(
                    key,
                    relations.iter().map(|r| Some(r.name.as_str())).collect(),
                );
            }
            // Objects without a name: the key alone.
            Fact::ForeignKeys(keys) => line.named(key, keys.iter().map(|_| None).collect()),
            Fact::Indexes(indexes) => line.named(key, indexes.iter().map(|_| None).collect()),
            Fact::HasForm(flag)
            | Fact::HasInfolist(flag)
            | Fact::HasTable(flag)
            | Fact::Translatable(Translatable::Whole(flag)) => line.flag(key, *flag),
            Fact::Relation(r) => {
                let related = r.related.as_deref().map_or("", short_name);
                line.part(key, &format!("{} {related}", r.kind));
            }
        }
    }
}

/// The framework facts of one chunk: at most one [`Fact`] of each kind, in
/// the order they were set (the stored and summarised order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts(Vec<Fact>);

/// Why a stored facts text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FactsError {
    #[error("stored framework facts are not valid: {0}")]
    Invalid(#[from] serde_json::Error),
    #[error(
        "stored framework facts have version {0}, newer than this build's {FACTS_VERSION}: \
         upgrade code-intel, or rebuild the index with `code-intel index --force`"
    )]
    Newer(u32),
}

impl Facts {
    /// No fact is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The facts in order.
    pub fn iter(&self) -> impl Iterator<Item = &Fact> {
        self.0.iter()
    }

    /// Sets `fact`: in the place of the fact of its kind when there is one
    /// (the order is kept), else last.
    pub fn set(&mut self, fact: Fact) {
        let kind = std::mem::discriminant(&fact);
        match self
            .0
            .iter_mut()
            .find(|f| std::mem::discriminant(*f) == kind)
        {
            Some(slot) => *slot = fact,
            None => self.0.push(fact),
        }
    }

    /// Sets every fact of `other`, in its order.
    pub fn merge(&mut self, other: Facts) {
        for fact in other.0 {
            self.set(fact);
        }
    }

    /// The facts as the `meta` column stores them: the JSON object with
    /// `"v": FACTS_VERSION` first.
    pub fn to_stored(&self) -> String {
        serde_json::to_string(&Versioned(Some(FACTS_VERSION), self))
            .unwrap_or_else(|_| format!("{{\"v\":{FACTS_VERSION}}}"))
    }

    /// Reads the `meta` column: a text without `v` is version 1 (rows
    /// written before the version); keys this build does not know are
    /// skipped.
    ///
    /// # Errors
    /// [`FactsError::Invalid`] for text that is not a facts object (or a
    /// known key with a value of another shape), [`FactsError::Newer`] for a
    /// version this build does not know.
    pub fn from_stored(text: &str) -> Result<Facts, FactsError> {
        let Stored(version, facts) = serde_json::from_str(text)?;
        match version {
            Some(v) if v > FACTS_VERSION => Err(FactsError::Newer(v)),
            _ => Ok(facts),
        }
    }

    /// The facts as one JSON object (the reply's `facts:` line).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// One line naming the facts for the embedded text and the keyword
    /// index: `key: value` parts joined by `; ` in the facts' order (a key's
    /// `_` read as a space), names by their short form (the last `\`
    /// segment), lists of objects by their `name`, a list of objects without
    /// names and a true flag by the key alone; imports, the framework and
    /// Composer's packages and PSR-4 roots are left out. At most `max_chars`
    /// chars, then `…`.
    pub fn summary(&self, max_chars: usize) -> String {
        let mut line = SummaryLine::default();
        for fact in &self.0 {
            fact.summarise(&mut line);
        }
        let mut s = line.0.join("; ");
        if s.chars().count() > max_chars {
            s = s.chars().take(max_chars).collect::<String>() + "…";
        }
        s
    }
}

impl FromIterator<Fact> for Facts {
    fn from_iter<I: IntoIterator<Item = Fact>>(iter: I) -> Facts {
        let mut facts = Facts::default();
        for fact in iter {
            facts.set(fact);
        }
        facts
    }
}

/// The stored form: the version (`None` when the text has none) and the
/// facts, as one JSON object.
struct Stored(Option<u32>, Facts);

/// The key of [`Stored`]'s version.
const VERSION_KEY: &str = "v";

/// The facts as one JSON object, with the version first when there is one
/// (the serialising side of [`Stored`], borrowing the facts).
struct Versioned<'a>(Option<u32>, &'a Facts);

impl Serialize for Versioned<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if let Some(v) = self.0 {
            map.serialize_entry(VERSION_KEY, &v)?;
        }
        for fact in &self.1.0 {
            fact.serialize_into(&mut map)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Stored {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Stored, D::Error> {
        struct StoredVisitor;
        impl<'de> Visitor<'de> for StoredVisitor {
            type Value = Stored;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object of framework facts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Stored, A::Error> {
                let mut stored = Stored(None, Facts::default());
                while let Some(key) = map.next_key::<String>()? {
                    if key == VERSION_KEY {
                        stored.0 = Some(map.next_value()?);
                    } else if let Some(fact) = Fact::read(&key, &mut map)? {
                        stored.1.set(fact);
                    }
                }
                Ok(stored)
            }
        }
        deserializer.deserialize_map(StoredVisitor)
    }
}

impl Serialize for Facts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Versioned(None, self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Facts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Facts, D::Error> {
        Stored::deserialize(deserializer).map(|Stored(_, facts)| facts)
    }
}

/// `App\Models\Product` → `Product`.
fn short_name(s: &str) -> &str {
    s.rsplit('\\').next().unwrap_or(s)
}

/// The parts of [`Facts::summary`].
#[derive(Default)]
struct SummaryLine(Vec<String>);

impl SummaryLine {
    /// `key: value`, or the key alone when the value is empty.
    fn part(&mut self, key: &str, value: &str) {
        let key = key.replace('_', " ");
        self.0.push(if value.is_empty() {
            key
        } else {
            format!("{key}: {value}")
        });
    }

    /// A name, by its short form.
    fn text(&mut self, key: &str, value: &str) {
        self.part(key, short_name(value));
    }

    /// A list by its items' names (`None`: an item without one); an empty
    /// list says nothing.
    fn named(&mut self, key: &str, names: Vec<Option<&str>>) {
        if !names.is_empty() {
            let names: Vec<&str> = names.into_iter().flatten().collect();
            self.part(key, &names.join(", "));
        }
    }

    /// A true flag by its key; false says nothing.
    fn flag(&mut self, key: &str, value: bool) {
        if value {
            self.part(key, "");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::*;

    /// The facts line as it was computed from the free JSON map, kept as the
    /// oracle [`Facts::summary`] must equal (so no stored vector goes
    /// stale).
    fn map_summary(meta: &Map<String, Value>, max_chars: usize) -> String {
        let mut parts = Vec::new();
        for (k, v) in meta {
            if matches!(k.as_str(), "imports" | "framework" | "psr4" | "packages") {
                continue;
            }
            let value = match v {
                Value::String(s) => s.rsplit('\\').next().unwrap_or(s).to_string(),
                Value::Bool(true) => String::new(),
                Value::Array(a) if !a.is_empty() => a
                    .iter()
                    .filter_map(|x| match x {
                        Value::String(s) => Some(s.rsplit('\\').next().unwrap_or(s).to_string()),
                        Value::Object(o) => o.get("name").and_then(Value::as_str).map(String::from),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                Value::Object(o) if k == "relation" => format!(
                    "{} {}",
                    o.get("type").and_then(Value::as_str).unwrap_or(""),
                    o.get("related")
                        .and_then(Value::as_str)
                        .and_then(|s| s.rsplit('\\').next())
                        .unwrap_or("")
                ),
                _ => continue,
            };
            let key = k.replace('_', " ");
            parts.push(if value.is_empty() {
                key
            } else {
                format!("{key}: {value}")
            });
        }
        let mut s = parts.join("; ");
        if s.chars().count() > max_chars {
            s = s.chars().take(max_chars).collect::<String>() + "…";
        }
        s
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    /// A fact of every kind (the migration's `columns`, a relation without
    /// its class, an index and a foreign key without names, a false flag).
    fn every_fact() -> Vec<Fact> {
        let relation = |name: &str, related: Option<&str>| Relation {
            name: name.into(),
            kind: "hasMany".into(),
            related: related.map(String::from),
        };
        vec![
            Fact::Actions(strings(&["delete", "edit"])),
            Fact::Cluster("App\\Filament\\Clusters\\Shop".into()),
            Fact::Colors(strings(&["brand"])),
            Fact::Columns(Columns::Table(vec![TableColumn {
                name: "total".into(),
                kind: "decimal".into(),
                modifiers: strings(&["nullable"]),
            }])),
            Fact::ConfiguredBy(strings(&["ProductForm"])),
            Fact::Content(strings(&["./resources/**/*.blade.php"])),
            Fact::Entries(strings(&["name"])),
            Fact::Extends("Illuminate\\Database\\Eloquent\\Model".into()),
            Fact::Fields(strings(&["name", "price"])),
            Fact::Fillable(strings(&["name"])),
            Fact::Filters(strings(&["status"])),
            Fact::Fonts(strings(&["sans"])),
            Fact::ForeignKeys(vec![ForeignKey {
                column: Some("user_id".into()),
                references: Some("id".into()),
                on: None,
                on_delete: Some("cascade".into()),
            }]),
            Fact::Framework(Framework::Laravel),
            Fact::HasForm(true),
            Fact::HasInfolist(false),
            Fact::HasTable(true),
            Fact::Imports(strings(&["App\\Models\\User"])),
            Fact::Indexes(vec![TableIndex {
                kind: "unique".into(),
                columns: strings(&["email"]),
            }]),
            Fact::InjectedDependencies(strings(&["App\\Services\\Cart"])),
            Fact::Layout(strings(&["Section"])),
            Fact::Model("App\\Models\\Product".into()),
            Fact::NavigationGroup("Shop".into()),
            Fact::NavigationIcon("heroicon-o-cube".into()),
            Fact::NavigationLabel("Products".into()),
            Fact::Operation(TableOperation::Create),
            Fact::Package("acme/shop".into()),
            Fact::Packages(IndexMap::from([
                ("php".into(), "^8.2".into()),
                ("laravel/framework".into(), "^11".into()),
            ])),
            Fact::Pages(strings(&["ListProducts"])),
            Fact::Plugins(strings(&["@tailwindcss/forms"])),
            Fact::Psr4(IndexMap::from([(
                "App\\".into(),
                Directories::Many(strings(&["app/", "src/"])),
            )])),
            Fact::RecordTitleAttribute("name".into()),
            Fact::Relation(relation("orders", None)),
            Fact::RelationManagers(strings(&["OrdersRelationManager"])),
            Fact::Relations(vec![relation("orders", Some("App\\Models\\Order"))]),
            Fact::Resource("App\\Filament\\Resources\\ProductResource".into()),
            Fact::Role(Role::Resource),
            Fact::Screens(strings(&["sm"])),
            Fact::Slug("shop/products".into()),
            Fact::Table("products".into()),
            Fact::Translatable(Translatable::Whole(true)),
        ]
    }

    fn as_map(facts: &Facts) -> Map<String, Value> {
        match serde_json::to_value(facts).expect("json") {
            Value::Object(map) => map,
            other => panic!("facts are an object: {other}"),
        }
    }

    #[test]
    fn every_kind_is_summarised_as_the_map_was_in_any_order() {
        let facts: Facts = every_fact().into_iter().collect();
        let map = as_map(&facts);
        assert_eq!(map.len(), 41, "a fact of every kind: {map:?}");
        assert_eq!(facts.summary(10_000), map_summary(&map, 10_000));
        assert_eq!(facts.summary(40), map_summary(&map, 40));
        let reversed: Facts = every_fact().into_iter().rev().collect();
        let map = as_map(&reversed);
        assert_eq!(map.keys().next().map(String::as_str), Some("translatable"));
        assert_eq!(reversed.summary(10_000), map_summary(&map, 10_000));
        assert_ne!(reversed.summary(10_000), facts.summary(10_000));
    }

    #[test]
    fn the_summary_and_json_equal_the_maps_on_every_strategy_snapshot() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).expect("snapshots") {
            let path = entry.expect("entry").path();
            let text = std::fs::read_to_string(&path).expect("read");
            let Ok(Value::Array(chunks)) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            for chunk in chunks {
                let Some(Value::Object(meta)) = chunk.get("meta") else {
                    continue;
                };
                let facts: Facts = serde_json::from_value(Value::Object(meta.clone()))
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(facts.summary(400), map_summary(meta, 400), "{meta:?}");
                assert_eq!(facts.to_json(), Value::Object(meta.clone()).to_string());
                checked += usize::from(!meta.is_empty());
            }
        }
        assert!(checked >= 30, "only {checked} chunks with facts");
    }

    #[test]
    fn stored_facts_carry_their_version_and_older_rows_still_read() {
        let facts: Facts = every_fact().into_iter().collect();
        let stored = facts.to_stored();
        assert!(stored.starts_with("{\"v\":1,\"actions\":"), "{stored}");
        assert_eq!(Facts::from_stored(&stored).expect("read"), facts);
        // A row written before the version: the bare object, or `{}`.
        assert_eq!(
            Facts::from_stored(&facts.to_json()).expect("old row"),
            facts
        );
        assert!(Facts::from_stored("{}").expect("empty").is_empty());
        // A key of a later build is skipped.
        let later = Facts::from_stored("{\"table\":\"orders\",\"livewire\":[1]}").expect("read");
        assert_eq!(
            later.iter().collect::<Vec<_>>(),
            [&Fact::Table("orders".into())]
        );
        assert!(matches!(
            Facts::from_stored("{\"v\":2}"),
            Err(FactsError::Newer(2))
        ));
        assert!(matches!(
            Facts::from_stored("[1]"),
            Err(FactsError::Invalid(_))
        ));
        assert!(matches!(
            Facts::from_stored("{\"role\":\"wizard\"}"),
            Err(FactsError::Invalid(_))
        ));
    }

    #[test]
    fn set_replaces_a_fact_in_its_place_and_merge_appends_the_new_ones() {
        let mut facts: Facts = [
            Fact::Framework(Framework::Blade),
            Fact::Table("orders".into()),
        ]
        .into_iter()
        .collect();
        facts.merge(
            [
                Fact::Model("App\\Models\\Order".into()),
                Fact::Framework(Framework::Laravel),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(
            facts.to_json(),
            r#"{"framework":"laravel","table":"orders","model":"App\\Models\\Order"}"#
        );
    }
}
