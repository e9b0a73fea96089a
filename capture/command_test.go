package capture

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func FuzzCommand(f *testing.F) {
	for _, args := range []string{
		`{"command":"go test ./..."}`, `{"cmd":["sh","-c","ls -la"]}`, `{"command":null,"cmd":"make"}`,
		`{"command":"","cmd":"make"}`, `{"command":7,"cmd":{"a":1}}`, `{"Command":"go vet"}`, `{"CMD":"x"}`,
		`{"command":"a","command":"b"}`, `{"command":["a"],"command":"b"}`, `{"comm\u0061nd":"x"}`,
		`{"command":"caf\u00e9 \ud800 \"q\""}`, "{\"command\":\"\xff\"}", `{"command":"x"`, `{"command":"x"} x`,
		`[]`, `null`, `"go test"`, `{}`, `{"file_path":"src/a.go","content":"package a\n"}`,
		` { "command" : [ ] , "cmd" : [ "b" ] } `, `{"command":[null,"x"]}`, `{"command":[1]}`,
	} {
		f.Add([]byte(args))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		if got, want := Command(args), commandJSON(args); got != want {
			t.Errorf("Command(%q) = %q, encoding/json's %q", args, got, want)
		}
	})
}

func BenchmarkCommand(b *testing.B) {
	for name, args := range map[string]string{
		"read":  `{"file_path":"/home/ana/shop/src/cart/discount.go","offset":120,"limit":80}`,
		"shell": `{"command":"go test ./cart/... -run TestDiscount -count=1","description":"Run the discount tests","timeout":120000}`,
		"write": `{"file_path":"/home/ana/shop/src/cart/discount.go","content":` + strconv.Quote(strings.Repeat("func discount(p Price) Price { return p * 9 / 10 }\n", 40)) + `}`,
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Command(json.RawMessage(args))
			}
		})
	}
}

// TestCommandOfAList: a command given as a list is its words; one a shell is given to
// run is that command, as the agent wrote it.
func TestCommandOfAList(t *testing.T) {
	for args, want := range map[string]string{
		`{"command":["bash","-lc","npm test --silent"]}`: "npm test --silent",
		`{"command":["/bin/sh","-c","ls -la && make"]}`:  "ls -la && make",
		`{"cmd":["zsh","-ic","git status"]}`:             "git status",
		`{"command":["bash","script.sh","-c"]}`:          "bash script.sh -c",
		`{"command":["bash","--rcfile","x"]}`:            "bash --rcfile x",
		`{"command":["bash","-lc","npm test","extra"]}`:  "bash -lc npm test extra",
		`{"command":["python3","-c","print(1)"]}`:        "python3 -c print(1)",
		`{"command":["rg","-n","TODO"]}`:                 "rg -n TODO",
		`{"command":["bash","--login","-c","make"]}`:     "make",
		`{"command":["fish","--command","make"]}`:        "make",
	} {
		if got := Command(json.RawMessage(args)); got != want {
			t.Errorf("Command(%s) = %q, want %q", args, got, want)
		}
	}
}
