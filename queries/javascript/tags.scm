; JavaScript tags, adapted from tree-sitter-javascript's queries/tags.scm.
; Doc comments are collected by the symbol layer, so the @doc captures and
; their directives are left out; constructors are kept (they carry DI).

(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

[
  (class
    name: (_) @name)
  (class_declaration
    name: (_) @name)
] @definition.class

[
  (function_expression
    name: (identifier) @name)
  (function_declaration
    name: (identifier) @name)
  (generator_function
    name: (identifier) @name)
  (generator_function_declaration
    name: (identifier) @name)
] @definition.function

(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @definition.function)

(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression)]) @definition.function)

(assignment_expression
  left: [
    (identifier) @name
    (member_expression
      property: (property_identifier) @name)
  ]
  right: [(arrow_function) (function_expression)]
) @definition.function

(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

(
  (call_expression
    function: (identifier) @name) @reference.call
  (#not-match? @name "^(require)$")
)

(call_expression
  function: (member_expression
    property: (property_identifier) @name)) @reference.call

(new_expression
  constructor: (_) @name) @reference.class

; A module's top-level constants and variables (`const form = useForm()`,
; `export const routes = [...]`, a Vue `<script setup>`'s refs): named by
; agents as the symbols a change edits. Functions bound this way match the
; patterns above first (the earlier pattern wins for one node). Not chunks
; (`chunk::worthy` leaves constants out).
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name) @definition.constant))

(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name) @definition.constant)))

; Names a top-level destructuring binds (`const { data: reports, isLoading }
; = useQuery(...)`, `const [open, setOpen] = …`): each is its own constant.
(program
  (lexical_declaration
    (variable_declarator
      name: (object_pattern
        [
          (shorthand_property_identifier_pattern) @name @definition.constant
          (pair_pattern
            value: (identifier) @name) @definition.constant
        ]))))

(program
  (lexical_declaration
    (variable_declarator
      name: (array_pattern
        (identifier) @name @definition.constant))))
