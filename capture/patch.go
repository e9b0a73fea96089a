package capture

import (
	"slices"
	"strings"
)

// PatchFiles are the files a patch in the envelope Codex's apply_patch takes names
// ("*** Begin Patch", then "*** Add File: PATH", "*** Update File: PATH", "*** Delete
// File: PATH" or "*** Move to: PATH" lines), each once, in order; nil for any other text.
func PatchFiles(text string) []string {
	if !strings.HasPrefix(strings.TrimSpace(text), "*** Begin Patch") {
		return nil
	}
	var files []string
	for line := range strings.Lines(text) {
		for _, op := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if f, ok := strings.CutPrefix(line, op); ok {
				if f = strings.TrimSpace(f); f != "" && !slices.Contains(files, f) {
					files = append(files, f)
				}
			}
		}
	}
	return files
}
