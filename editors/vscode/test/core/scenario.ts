// The stand-in model's script for the core tests: each rule answers prompts with its word.

export const GREETING = 'Hello from the stand-in model.';

export const SCENARIO = {
  rules: [
    {
      match: '(?i)hello',
      steps: [[{ thinking: 'The user greets me.' }, { text: GREETING }]],
      chunk: 6,
    },
    {
      match: '(?i)greet',
      steps: [
        [{ tool_use: { name: 'Edit', input: { file_path: '{cwd}/hello.py', old_string: "print('hello')", new_string: "print('hello, world')" } } }],
        [{ text: 'Greeting changed.' }],
      ],
    },
    {
      match: '(?i)notes',
      steps: [
        [{ tool_use: { name: 'Write', input: { file_path: '{cwd}/notes.md', content: '# Notes\nfirst line\n' } } }],
        [{ text: 'Notes written.' }],
      ],
    },
    { match: '(?i)long', steps: [[{ text: 'word '.repeat(400) }]], chunk: 5, delay: 0.02 },
    {
      match: '(?i)selection',
      steps: [
        [{ tool_use: { name: 'mcp__editor__getSelection', input: {} } }],
        [{ text: 'I looked at your selection.' }],
      ],
    },
  ],
  default: [[{ text: 'Plain answer.' }]],
};
