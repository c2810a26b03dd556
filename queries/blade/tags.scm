; Blade: the HTML tags (appended) give sectioning elements and elements with
; an id. Blade's own syntax is not in the HTML grammar (its tag names stop at
; `.`, so <x-forms.input> would lose its path), so directives (@section …
; @endsection, @push, @slot, @component, @livewire, @include, @extends),
; components (<x-user-card>, <x-forms.input/>, <livewire:counter/>) and
; route('…') calls are read by search::symbols::blade_directives.
