; HTML tags (tree-sitter-html ships none): elements with an id, and the
; semantic sectioning elements, which are named by their tag.

(element
  (start_tag
    (attribute
      (attribute_name) @_attr
      (quoted_attribute_value (attribute_value) @name)))
  (#eq? @_attr "id")) @definition.element

(element
  (start_tag
    (tag_name) @name)
  (#match? @name "^(header|nav|main|section|article|aside|footer|form|dialog)$")) @definition.section
