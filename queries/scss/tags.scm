; SCSS tags on top of the CSS ones (the CSS grammar parses SCSS nesting):
; @mixin and @function are named by their name when it is a bare word, else
; by their header (`@mixin button-variant($color)`); @include is a call.

(at_rule
  (at_keyword) @_kw
  .
  (keyword_query) @name
  (#match? @_kw "^@(mixin|function)$")) @definition.mixin

(at_rule
  (at_keyword) @_kw
  (#match? @_kw "^@(mixin|function)$")) @definition.mixin

(at_rule
  (at_keyword) @_kw
  .
  (keyword_query) @name
  (#eq? @_kw "@include")) @reference.call
