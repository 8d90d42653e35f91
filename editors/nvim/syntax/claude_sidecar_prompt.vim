" The prompt buffer: what you write to Claude is markdown.
if exists('b:current_syntax')
  finish
endif
runtime! syntax/markdown.vim
unlet! b:current_syntax
let b:current_syntax = 'claude_sidecar_prompt'
