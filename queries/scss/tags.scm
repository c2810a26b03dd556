; SCSS tags on top of the CSS ones (the CSS grammar parses SCSS nesting):
; @mixin and @function are named by their header.

(at_rule
  (at_keyword) @_kw
  (#match? @_kw "^@(mixin|function)$")) @definition.mixin
