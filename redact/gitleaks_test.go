package redact

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/lucasjones/reggen"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
)

// TestGitleaksParity generates text from every gitleaks rule's own regex and checks that
// whatever gitleaks' real detector finds in it, agmem's redaction removes: the generated
// table and the prefilter lose none of gitleaks' recall.
func TestGitleaksParity(t *testing.T) {
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	d.MaxDecodeDepth = 0 // agmem scans text as it is; see the package doc
	r := Default()
	samples, found, missed := 0, 0, 0
	for _, rule := range d.Config.Rules {
		if rule.Regex == nil || rule.Path != nil {
			continue
		}
		g, err := reggen.NewGenerator(rule.Regex.String())
		if err != nil {
			t.Fatalf("%s: %v", rule.RuleID, err)
		}
		g.SetSeed(1)
		// The rule's keywords far from the sample: agmem scans windows around
		// keywords, and must still find what gitleaks finds anywhere in the text.
		far := strings.Join(rule.Keywords, " ") + strings.Repeat("\nfiller line", 200) + "\n"
		for i := 0; i < 12; i++ {
			sample := g.Generate(8)
			for _, text := range []string{"output of the tool:\n" + sample + "\nend\n", far + sample} {
				samples++
				redacted, _ := r.Text(text)
				for _, f := range d.DetectString(text) {
					found++
					if strings.Contains(redacted, f.Secret) {
						missed++
						t.Errorf("%s: gitleaks finds %q in %q; agmem leaves %q", f.RuleID, f.Secret, sample, redacted)
					}
				}
			}
		}
	}
	t.Logf("%d samples from %d rules, gitleaks found %d secrets, agmem missed %d", samples, len(d.Config.Rules), found, missed)
	if found < samples/4 {
		t.Fatalf("gitleaks found only %d secrets in %d samples: the test generates the wrong text", found, samples)
	}
}

// TestGeneratedRulesUpToDate checks gitleaks_rules.go against the gitleaks module in
// go.mod: run "go generate ./redact" after upgrading it.
func TestGeneratedRulesUpToDate(t *testing.T) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/zricethezav/gitleaks/v8" && m.Path+"@"+m.Version != gitleaksVersion {
				t.Errorf("go.mod has %s@%s, gitleaks_rules.go was made from %s", m.Path, m.Version, gitleaksVersion)
			}
		}
	}
	cfg := config.DefaultConfig
	for i := range gitleaksRules {
		if !strings.Contains(cfg, "id = \""+gitleaksRules[i].id+"\"") {
			t.Errorf("rule %s is not in gitleaks' default config", gitleaksRules[i].id)
		}
		if !gitleaksRules[i].gitleaks {
			t.Errorf("rule %s is not marked as gitleaks': run go generate ./redact", gitleaksRules[i].id)
		}
	}
	pathRules := strings.Count(cfg, "\npath = ")
	if n := strings.Count(cfg, "[[rules]]"); n-pathRules != len(gitleaksRules) {
		t.Errorf("gitleaks has %d rules that work on text, gitleaks_rules.go %d: run go generate ./redact", n-pathRules, len(gitleaksRules))
	}
}
