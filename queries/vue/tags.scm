; Vue single-file component blocks. The HTML tags follow; the <script>
; block is parsed again as TypeScript or JavaScript by the symbol layer.

(document
  (element
    (start_tag (tag_name) @name)
    (#eq? @name "template")) @definition.section)

(document
  (script_element
    (start_tag (tag_name) @name)) @definition.section)

(document
  (style_element
    (start_tag (tag_name) @name)) @definition.section)
