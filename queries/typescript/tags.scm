; TypeScript-only tags, adapted from tree-sitter-typescript's queries/tags.scm.
; The language table appends queries/javascript/tags.scm to this file, as
; tree-sitter-typescript's own tags configuration does.

(function_signature
  name: (identifier) @name) @definition.function

(method_signature
  name: (property_identifier) @name) @definition.method

(abstract_method_signature
  name: (property_identifier) @name) @definition.method

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(module
  name: (identifier) @name) @definition.module

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.enum

(type_annotation
  (type_identifier) @name) @reference.type
