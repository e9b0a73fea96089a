// Package render turns observations into what a commit holds: the markdown file of each
// observation, the machine-readable record of a flush batch under sessions/, and the text
// of the commit message (without its trailers, which belong to vcs).
//
// It is pure: no I/O, no journal, no git. The same input always gives the same bytes.
//
// What it promises, whatever the input holds (tool names, ids, summaries and results come
// from agents and are not trusted):
//
//   - Paths are relative, use '/', stay under current/ or sessions/, and every component is
//     a name that Linux, macOS, Windows and git all accept (no "..", no ".git", no device
//     names, at most 64 bytes from any one piece of input).
//   - The frontmatter always parses as YAML and gives back the field values exactly
//     (invalid UTF-8 becomes U+FFFD): every string is written as a double-quoted scalar.
//   - No content can close a fence or a code span early. Outside fenced blocks, input text
//     only ever appears inside a line that render starts (the heading, the tool line), made
//     one line first. Rendered files never hold "\r".
//   - A commit message subject and body are made of whole lines that input cannot split.
package render
