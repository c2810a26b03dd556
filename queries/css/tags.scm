; CSS tags (tree-sitter-css ships none). Rule sets are named by their
; selectors; @media and @keyframes are containers whose name is their header.

(rule_set
  (selectors) @name) @definition.rule

(media_statement) @definition.media

(keyframes_statement
  (keyframes_name) @name) @definition.keyframes
