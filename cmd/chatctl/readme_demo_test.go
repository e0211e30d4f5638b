package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/pkg/app/translating"
	"github.com/chatbridge/chat/pkg/fixture"
)

// readmeDemoStart and readmeDemoEnd bound, in README.md, the copy of what
// `make run` prints.
const (
	readmeDemoStart = "<!-- the demo's steps, as `make run` prints them (a test holds them to it) -->\n```sh\n"
	readmeDemoEnd   = "```\n"
)

// tomorrow is step 9's expires_at, which `make run` fills in from the clock.
var tomorrow = regexp.MustCompile(`"expires_at":"[0-9T:Z-]+"`)

// TestReadmeDemoStepsAreWhatMakeRunPrints: README.md's walk-through is,
// word for word, what `make run` prints on the default address (the room's
// expiry aside, which the program takes from the clock). WRITE_README_DEMO=FILE
// writes what README.md should hold to FILE, to paste after a change.
func TestReadmeDemoStepsAreWhatMakeRunPrints(t *testing.T) {
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		t.Fatalf("parse demo fixture: %v", err)
	}
	var b strings.Builder
	printDemo(&b, "http://"+defaultAddr, d.Workspaces[0], translating.TranslatorApertium, time.Now())
	printed := b.String()
	printed = printed[strings.Index(printed, "\n# 1.")+1:]
	printed = tomorrow.ReplaceAllString(strings.TrimSpace(printed)+"\n", `"expires_at":"…"`)
	if os.Getenv("WRITE_README_DEMO") != "" {
		_ = os.WriteFile(os.Getenv("WRITE_README_DEMO"), []byte(printed), 0o644)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, readmeDemoStart)
	if i < 0 {
		t.Fatalf("README.md has no %q", readmeDemoStart)
	}
	s = s[i+len(readmeDemoStart):]
	j := strings.Index(s, readmeDemoEnd)
	if j < 0 {
		t.Fatal("README.md: the demo's code block does not end")
	}
	got := tomorrow.ReplaceAllString(s[:j], `"expires_at":"…"`)
	if got != printed {
		t.Errorf("README.md's demo steps differ from what make run prints.\ngot:\n%s\nwant:\n%s", got, printed)
	}
}
