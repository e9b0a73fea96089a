// Package redact owns finding secrets in text and replacing each with
// "[REDACTED:<rule>]" before anything agmem captures is written anywhere.
//
// Its rules are gitleaks' default set (generated into gitleaks_rules.go; see
// internal/gengitleaks), agmem's own rules for secrets named by their key
// (password=…, "api_key": …, Authorization: Bearer …), credentials in URLs and
// private key blocks, and any patterns a user adds. Building gitleaks' detector costs
// ten times agmem record's whole budget, so nothing is built up front: a keyword
// prefilter (gitleaks' own keywords) picks the few rules whose keywords occur in the
// text, and only those regexes are compiled, once per process.
package redact

//go:generate go run ./internal/gengitleaks
