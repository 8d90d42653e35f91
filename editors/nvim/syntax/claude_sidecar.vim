" The chat transcript: markdown (the plugin's own lines are highlighted with extmarks).
if exists('b:current_syntax')
  finish
endif
runtime! syntax/markdown.vim
unlet! b:current_syntax
let b:current_syntax = 'claude_sidecar'
