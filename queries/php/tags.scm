; PHP tags, adapted from tree-sitter-php's queries/tags.scm: traits and enums
; get their own kinds, methods are `definition.method`, class constants added;
; imports, types and static scopes are references of their class (the short
; name, as `find_references` matches it).

(namespace_definition
  name: (namespace_name) @name) @definition.module

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

(class_declaration
  name: (name) @name) @definition.class

(property_declaration
  (property_element (variable_name (name) @name))) @definition.field

(const_declaration
  (const_element (name) @name)) @definition.constant

(function_definition
  name: (name) @name) @definition.function

(method_declaration
  name: (name) @name) @definition.method

(class_interface_clause
  [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.implementation

(base_clause
  [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.class

; `use App\Http\Requests\FeedRequest;` (the imported name, not an alias).
(namespace_use_clause
  .
  [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.import

; Parameter, return, property and catch types.
(named_type
  [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.type

; The class of a static call and of `Foo::class` / `Foo::BAR`.
(scoped_call_expression
  scope: [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.class

(class_constant_access_expression
  .
  [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.class

(object_creation_expression
  [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.class

(function_call_expression
  function: [
    (qualified_name (name) @name)
    (name) @name
  ]) @reference.call

(scoped_call_expression
  name: (name) @name) @reference.call

(member_call_expression
  name: (name) @name) @reference.call

(nullsafe_member_call_expression
  name: (name) @name) @reference.call
