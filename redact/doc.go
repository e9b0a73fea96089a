// Package redact owns finding secrets in text and replacing each with
// "[REDACTED:<rule>]" before anything agmem captures is written anywhere.
//
// Its rules are gitleaks' default set (generated into gitleaks_rules.go; see
// internal/gengitleaks), agmem's own rules for secrets named by their key
// (password=…, "api_key": …, Authorization: Bearer …), credentials in URLs and
// private key blocks, and any patterns a user adds. Building gitleaks' detector costs
// ten times agmem record's whole budget, so nothing is built up front: a keyword
// prefilter (gitleaks' own keywords) picks the few rules whose keywords occur in the
// text, and only those regexes are compiled, once per process; they scan windows
// around the keywords, or match from the identifier that holds one, or, when every
// match starts with a keyword, match only at the keywords.
//
// Where agmem differs from gitleaks, it redacts more: it does not decode base64, hex
// or percent-encoded text (gitleaks' --max-decode-depth), but reads JSON's escapes
// (JSON written in a string, where a quote is \" and a slash \/), it ignores "gitleaks:allow"
// comments (input must not be able to switch redaction off), and gitleaks' global
// allowlist, whose "true|false|null" is mended to mean those words alone, applies to
// gitleaks' rules only.
package redact

//go:generate go run ./internal/gengitleaks
