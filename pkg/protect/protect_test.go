package protect_test

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/chatbridge/chat/pkg/protect"
)

// workspace is the Names of the tests' workspace.
var workspace = protect.Names{
	Members:  []string{"Frank Will", "Ana María", "Bill"},
	Guests:   []string{"Rose"},
	Bots:     []string{"Deploy Bot 🚀"},
	Channels: []string{"general", "build-alerts"},
	Keep:     []string{"Cloud Run", "Go", "C++", "Big Table"},
}

// mark is a letter no test message has: a translator that turns every
// letter it receives into it shows what it received.
const mark = 'ẋ'

// letters is a translator that replaces every letter of the text it
// receives, keeping tags and entities: a word it was sent does not
// survive, a protected span does.
func letters(units []string) []string {
	out := make([]string, len(units))
	for i, u := range units {
		out[i] = markup.ReplaceAllStringFunc(u, func(s string) string {
			if s[0] == '<' || s[0] == '&' {
				return s
			}
			return strings.Map(func(r rune) rune {
				if unicode.IsLetter(r) {
					return mark
				}
				return r
			}, s)
		})
	}
	return out
}

var markup = regexp.MustCompile(`<[^<>]*>|&[#a-zA-Z0-9]+;|[^<&]+|[<&]`)

func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		in    string
		units int
		keep  []string // survives a translator, byte-identical
		words []string // reaches the translator
	}{
		// Code.
		{"Run `make build` before you push", 1, []string{"`make build`"}, []string{"Run", "before", "push"}},
		{"```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```", 0, []string{"```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```"}, nil},
		{"Try this:\n\n```bash\nexport PATH=$HOME/bin:$PATH\nmake test\n```\nthen restart", 2, []string{"```bash\nexport PATH=$HOME/bin:$PATH\nmake test\n```"}, []string{"Try", "then", "restart"}},
		{"Indented code below:\n\n    if err != nil {\n        return err\n    }\n\nthat is all", 2, []string{"    if err != nil {\n        return err\n    }"}, []string{"Indented", "below", "that"}},
		{"~~~\nplain fence with tildes\n~~~", 0, []string{"plain fence with tildes"}, nil},
		{"Use ``a `nested` tick`` here", 1, []string{"``a `nested` tick``"}, []string{"Use", "here"}},
		{"The call `os.Getenv(\"HOME\")` returns an empty string", 1, []string{"`os.Getenv(\"HOME\")`"}, []string{"returns", "empty", "string"}},
		{"panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/home/ana/src/app/main.go:12 +0x1d", 2, []string{"[5]", "main.main()", "/home/ana/src/app/main.go:12", "+0x1d"}, []string{"runtime", "error", "index", "range"}},
		{"Traceback (most recent call last):\n  File \"/usr/lib/python3/app.py\", line 42, in <module>\nValueError: bad value", 3, []string{"/usr/lib/python3/app.py", "42", "ValueError", "<module>"}, []string{"Traceback", "recent", "bad", "value"}},
		{"Exception in thread \"main\" java.lang.NullPointerException at com.example.App.run(App.java:17)", 1, []string{"java.lang.NullPointerException", "com.example.App.run(App.java:17)"}, []string{"Exception in", "thread"}},
		{"The build failed with exit code 137 (OOMKilled)", 1, []string{"137", "OOMKilled"}, []string{"build", "failed", "exit"}},
		{"The service user-profile-api is slow, the up-to-date one is not", 1, []string{"user-profile-api"}, []string{"service", "slow", "up", "date"}},
		{"call fetchUserData() then parseJSON", 1, []string{"fetchUserData()", "parseJSON"}, []string{"call", "then"}},
		{"Set MAX_RETRIES to 5 and retry_delay_ms to 200", 1, []string{"MAX_RETRIES", "5", "retry_delay_ms", "200"}, []string{"Set", "and"}},
		{"Rename UserService to AccountService please", 1, []string{"UserService", "AccountService"}, []string{"Rename", "please"}},
		{"Check config.yaml and the .env file", 1, []string{"config.yaml", ".env"}, []string{"Check", "file"}},
		{"Run it with --force or -rf at your own risk", 1, []string{"--force", "-rf"}, []string{"Run", "risk"}},
		{"std::vector is faster than a list -> use it", 1, []string{"std::vector", "->"}, []string{"faster", "use"}},
		{"Set key=value in the map", 1, []string{"key=value"}, []string{"Set", "map"}},
		{"The result of a<b is true", 1, []string{"a<b"}, []string{"result", "true"}},
		{"Press Ctrl+C to stop the server", 1, []string{"Ctrl+C"}, []string{"Press", "stop", "server"}},
		// Links, URLs, e-mail.
		{"See https://status.example.invalid/incidents/42 for details.", 1, []string{"https://status.example.invalid/incidents/42"}, []string{"See", "details"}},
		{"Read [the runbook](https://wiki.example.invalid/runbook \"Runbook\") first", 1, []string{"](https://wiki.example.invalid/runbook \"Runbook\")"}, []string{"the runbook", "first"}},
		{"![a diagram of the flow](./img/flow.png)", 1, []string{"](./img/flow.png)"}, []string{"diagram", "the flow"}},
		{"Mail ana@example.invalid or <bob@example.invalid>", 1, []string{"ana@example.invalid", "<bob@example.invalid>"}, []string{"Mail"}},
		{"Go to <https://x.example.invalid/a?b=c&d=e> now", 1, []string{"<https://x.example.invalid/a?b=c&d=e>"}, []string{"now"}},
		{"Open www.example.invalid/path in your browser", 1, []string{"www.example.invalid/path"}, []string{"Open", "browser"}},
		{"(see https://example.invalid/a_(b))", 1, []string{"https://example.invalid/a_(b)"}, []string{"see"}},
		{"Check [this][ref] out\n\n[ref]: https://example.invalid/ref", 1, []string{"][ref]", "[ref]: https://example.invalid/ref"}, []string{"this", "out"}},
		{"ftp://files.example.invalid/pub and ssh://git@example.invalid:22/repo.git work", 1, []string{"ftp://files.example.invalid/pub", "ssh://git@example.invalid:22/repo.git"}, []string{"and", "work"}},
		// Mentions and channels.
		{"@here the deploy is done", 1, []string{"@here"}, []string{"the", "deploy", "done"}},
		{"@channel please review, @everyone else can wait", 1, []string{"@channel", "@everyone"}, []string{"please", "review", "else", "wait"}},
		{"Thanks @ana.garcia, and cc @bob_smith!", 1, []string{"@ana.garcia", "@bob_smith"}, []string{"Thanks"}},
		{"Post it in #build-alerts and #general", 1, []string{"#build-alerts", "#general"}, []string{"Post", "and"}},
		{"Is issue #1234 fixed?", 1, []string{"#1234"}, []string{"Is", "issue", "fixed"}},
		{"(@rose) said yes", 1, []string{"@rose"}, []string{"said", "yes"}},
		{"C# and F# are languages", 1, []string{"#"}, []string{"and", "are", "languages"}},
		// Emoji.
		{"Great job 🎉🎉", 1, []string{"🎉🎉"}, []string{"Great", "job"}},
		{"Done :white_check_mark: and shipped :rocket:", 1, []string{":white_check_mark:", ":rocket:"}, []string{"Done", "shipped"}},
		{"The team 👩‍💻👨‍💻 is working", 1, []string{"👩‍💻👨‍💻"}, []string{"team", "working"}},
		{"Thumbs up 👍🏽 from me", 1, []string{"👍🏽"}, []string{"Thumbs", "from"}},
		{"Greetings from 🇪🇸 and 🇲🇽", 1, []string{"🇪🇸", "🇲🇽"}, []string{"Greetings", "from"}},
		{"Step 1️⃣ then step 2️⃣", 1, []string{"1️⃣", "2️⃣"}, []string{"Step", "then"}},
		{"I ❤️ this ✅ and ⭐", 1, []string{"❤️", "✅", "⭐"}, []string{"this", "and"}},
		{"🏴󠁧󠁢󠁳󠁣󠁴󠁿 is Scotland's flag", 1, []string{"🏴󠁧󠁢󠁳󠁣󠁴󠁿"}, []string{"Scotland", "flag"}},
		{"nice:tada:work", 1, []string{":tada:"}, []string{"nice", "work"}},
		// Paths.
		{"The log is in /var/log/nginx/error.log now", 1, []string{"/var/log/nginx/error.log"}, []string{"The log", "is", "now"}},
		{"Run ./scripts/deploy.sh from ~/src/app", 1, []string{"./scripts/deploy.sh", "~/src/app"}, []string{"Run", "from"}},
		{"Edit ../config/app.toml and src/main.go", 1, []string{"../config/app.toml", "src/main.go"}, []string{"Edit", "and"}},
		{`Copy C:\Users\ana\Documents\report.docx to the share`, 1, []string{`C:\Users\ana\Documents\report.docx`}, []string{"Copy", "share"}},
		{`Open \\fileserver\team\notes please`, 1, []string{`\\fileserver\team\notes`}, []string{"Open", "please"}},
		{"He said yes and/or no", 1, nil, []string{"said", "and", "or", "no"}},
		{"Look at /etc for it", 1, []string{"/etc"}, []string{"Look", "for"}},
		// Variables and placeholders.
		{"Set $HOME and ${JAVA_HOME} first", 1, []string{"$HOME", "${JAVA_HOME}"}, []string{"Set", "and", "first"}},
		{"The format is %s has %d items", 1, []string{"%s", "%d"}, []string{"format", "has", "items"}},
		{"Hello {{user.name}}, you have {0} new messages", 1, []string{"{{user.name}}", "{0}"}, []string{"Hello", "you", "have", "new", "messages"}},
		{"Hello {{ name }} and welcome", 1, []string{"{{ name }}"}, []string{"Hello", "welcome"}},
		{"Windows uses %APPDATA% for that", 1, []string{"%APPDATA%"}, []string{"Windows", "uses", "for"}},
		{"The value {name} is missing", 1, []string{"{name}"}, []string{"value", "missing"}},
		{"Run $(whoami) to see who you are", 1, []string{"$(whoami)"}, []string{"Run", "see"}},
		// Numbers, versions, addresses.
		{"We have 4,812 users and 3.5GB of logs", 1, []string{"4,812", "3.5GB"}, []string{"We", "have", "users", "logs"}},
		{"Latency is 200ms at p99, uptime 99.9%", 1, []string{"200ms", "p99", "99.9%"}, []string{"Latency", "uptime"}},
		{"Upgrade to v1.2.3 or Go 1.26.8 today", 1, []string{"v1.2.3", "Go", "1.26.8"}, []string{"Upgrade", "today"}},
		{"The server at 10.0.0.12:8080 is down", 1, []string{"10.0.0.12:8080"}, []string{"server", "down"}},
		{"Use [2001:db8::1]:443 or ::1 instead", 1, []string{"2001:db8::1]:443", "::1"}, []string{"Use", "instead"}},
		{"The commit a3f9c2e broke it, 0x1F is the flag", 1, []string{"a3f9c2e", "0x1F"}, []string{"commit", "broke", "flag"}},
		{"Meeting at 10:30 on 2026-11-28", 1, []string{"10:30", "2026-11-28"}, []string{"Meeting"}},
		{"It costs $5 or €4.50", 1, []string{"$5", "€4.50"}, []string{"costs"}},
		{"Deploy to us-east-1 and node-18", 1, []string{"us-east-1", "node-18"}, []string{"Deploy"}},
		{"This is a well-known state-of-the-art tool", 1, nil, []string{"well", "known", "state", "art", "tool"}},
		{"Build 42 of 100 failed", 1, []string{"42", "100"}, []string{"Build", "failed"}},
		// Names.
		{"Frank Will is on leave", 1, []string{"Frank Will"}, []string{"is", "on", "leave"}},
		{"Ask Bill, he will know", 1, []string{"Bill"}, []string{"Ask", "he", "will", "know"}},
		{"Billing is not Bill", 1, []string{"Bill"}, []string{"Billing"}},
		{"Ana María and Rose are here", 1, []string{"Ana María", "Rose"}, []string{"and", "are", "here"}},
		{"Deploy Bot 🚀 finished", 1, []string{"Deploy Bot 🚀"}, []string{"finished"}},
		{"We moved to Cloud Run last week", 1, []string{"Cloud Run"}, []string{"moved", "last", "week"}},
		{"Big Table and big table differ", 1, []string{"Big Table"}, []string{"and", "big", "table", "differ"}},
		{"C++ is older than Go", 1, []string{"C++", "Go"}, []string{"older", "than"}},
		{"the general idea", 1, []string{"general"}, []string{"the", "idea"}},
		// Markdown structure.
		{"# Release notes\n\nThe new version is out", 2, []string{"# "}, []string{"Release", "notes", "version"}},
		{"## Known issues ##", 1, []string{"## ", " ##"}, []string{"Known", "issues"}},
		{"Title\n=====\n\nbody text", 2, []string{"\n=====\n"}, []string{"Title", "body", "text"}},
		{"- first item\n- second item\n  - nested item", 3, []string{"- ", "\n  - "}, []string{"first", "second", "nested", "item"}},
		{"1. open the door\n2. close the window", 2, []string{"1. ", "\n2. "}, []string{"open", "door", "close", "window"}},
		{"- [ ] write tests\n- [x] write code", 2, []string{"- [ ] ", "- [x] "}, []string{"write", "tests", "code"}},
		{"> I think we should wait\n> until Monday", 2, []string{"> ", "\n> "}, []string{"think", "wait", "until"}},
		{"> quoted\n\nreply here", 2, []string{"> "}, []string{"quoted", "reply", "here"}},
		{"| Name | Status |\n|:-----|-------:|\n| the database | is down |\n| the cache | works fine |", 6, []string{"|:-----|-------:|", "| ", " | "}, []string{"Name", "Status", "database", "down", "cache", "works"}},
		{"**Important:** read this", 1, []string{"**Important:**"[:2], ":**"[1:]}, []string{"Important", "read"}},
		{"This is *very* _really_ ~~not~~ important", 1, []string{"*", "_", "~~"}, []string{"very", "really", "not", "important"}},
		{"line one  \nline two\\\nline three", 3, []string{"  \n", "\\\n"}, []string{"one", "two", "three"}},
		{"para one\n\n\n\npara two", 2, []string{"\n\n\n\n"}, []string{"one", "two"}},
		{"***\n\nafter the rule", 1, []string{"***"}, []string{"after", "rule"}},
		{"<div>raw html block</div>\n\nthen text", 1, []string{"<div>raw html block</div>"}, []string{"then", "text"}},
		{"inline <kbd>Ctrl</kbd> key", 1, []string{"<kbd>", "</kbd>"}, []string{"inline", "key"}},
		{"Escaped \\*stars\\* stay", 1, []string{"\\*", "\\*"}, []string{"Escaped", "stars", "stay"}},
		{"Tom & Jerry < Bugs > Daffy", 1, []string{"<", ">"}, []string{"Tom", "Jerry", "Bugs", "Daffy"}},
		{"&amp; is an entity", 1, []string{"&amp;"}, []string{"is", "entity"}},
		// Shorthand, mixed, punctuation only.
		{"ok", 1, nil, nil},
		{"+1", 0, []string{"+1"}, nil},
		{"LGTM 👍", 1, []string{"👍"}, nil},
		{"...", 0, []string{"..."}, nil},
		{"", 0, nil, nil},
		{"¿Dónde está el servidor? Está en 10.0.0.1", 2, []string{"10.0.0.1"}, []string{"Dónde", "servidor"}},
		{"Das ist gut, merci beaucoup", 1, nil, []string{"Das", "gut", "merci"}},
		{"東京のサーバーが落ちた https://example.invalid", 1, []string{"https://example.invalid"}, []string{"東京のサーバーが落ちた"}},
		{"Привет, @ivan! Как дела?", 2, []string{"@ivan"}, []string{"Привет", "Как"}},
		{"مرحبا @here", 1, []string{"@here"}, []string{"مرحبا"}},
		{"He said\u2028next line", 1, []string{"\u2028"}, []string{"said", "next"}},
		{"zero\u200bwidth and bidi \u202e mark", 1, []string{"\u200b", "\u202e"}, []string{"zero", "width", "bidi"}},
	} {
		d := protect.Parse(tc.in, workspace)
		if got := len(d.Units()); got != tc.units {
			t.Errorf("Parse(%q): got %d units, want %d: %q", tc.in, got, tc.units, d.Placeholders())
		}
		for name, form := range forms(d) {
			same, err := form.restore(form.units)
			if err != nil || same != tc.in {
				t.Errorf("%s: identity round trip of %q: got %q, %v", name, tc.in, same, err)
			}
			got, err := form.restore(letters(form.units))
			if err != nil {
				t.Errorf("%s: restoring %q: %v", name, tc.in, err)
				continue
			}
			for _, k := range tc.keep {
				if !strings.Contains(got, k) {
					t.Errorf("%s: %q: %q did not survive: got %q", name, tc.in, k, got)
				}
			}
			for _, w := range tc.words {
				if strings.Contains(got, w) {
					t.Errorf("%s: %q: %q was not sent to the translator: got %q", name, tc.in, w, got)
				}
			}
		}
	}
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // Placeholders
	}{
		{"Run `make build` now", []string{`Run <b id="p1"/> now`}},
		{"**Important:** read", []string{`<b id="p1"/>Important:<b id="p2"/> read`}},
		{"@alice @bob please look", []string{`<b id="p1"/> please look`}},
		{"- one\n- two `x`", []string{"one", `two <b id="p1"/>`}},
		{"| a b | `c` d |\n|---|---|\n| e | f |", []string{"a b", `<b id="p1"/> d`, "e", "f"}},
		{"a & b < c", []string{`a &amp; b <b id="p1"/> c`}},
		{"[docs](https://x.invalid) and [more](https://y.invalid)", []string{`<b id="p1"/>docs<b id="p2"/> and <b id="p3"/>more<b id="p4"/>`}},
		{"# Title\nbody", []string{"Title", "body"}},
		{"```\ncode\n```\ntext after", []string{"text after"}},
	} {
		d := protect.Parse(tc.in, protect.Names{})
		if got := d.Placeholders(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q).Placeholders() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSpanOffsets(t *testing.T) {
	in := "- see `a` and @bob\n- then /tmp/x"
	d := protect.Parse(in, protect.Names{})
	var got []string
	for _, u := range d.Units() {
		for _, s := range u.Spans {
			if s.Start < u.Start || s.End > u.End {
				t.Errorf("span %v outside its unit %v", s, u)
			}
			got = append(got, in[s.Start:s.End])
		}
	}
	if want := []string{"`a`", "@bob", "/tmp/x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("spans of %q = %q, want %q", in, got, want)
	}
}

func TestHTMLEscapesTheSpans(t *testing.T) {
	d := protect.Parse("compare `a<b && c>d` today", protect.Names{})
	want := []string{`compare <span translate="no" id="p1">` + "`a&lt;b &amp;&amp; c&gt;d`" + `</span> today`}
	if got := d.HTML(); !reflect.DeepEqual(got, want) {
		t.Errorf("HTML() = %q, want %q", got, want)
	}
}

func TestTranslatableAndChars(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  bool
		chars int
	}{
		{"ok", false, 2},
		{"LGTM!", false, 5},
		{"lol 😂", false, 4},
		{"+1", false, 0},
		{"thx @bob", false, 4},
		{"ty, np, brb", false, 11},
		{"`make build`", false, 0},
		{"https://example.invalid", false, 0},
		{"???", false, 0},
		{"", false, 0},
		{"ok, the build is green", true, 22},
		{"Run `make`", true, 4},
		{"Hola", true, 4},
	} {
		d := protect.Parse(tc.in, protect.Names{})
		if got := d.Translatable(); got != tc.want {
			t.Errorf("Parse(%q).Translatable() = %v, want %v", tc.in, got, tc.want)
		}
		if got := d.Chars(); got != tc.chars {
			t.Errorf("Parse(%q).Chars() = %d, want %d", tc.in, got, tc.chars)
		}
	}
	for _, w := range protect.Shorthand() {
		if protect.Parse(w, protect.Names{}).Translatable() {
			t.Errorf("shorthand %q is translatable", w)
		}
	}
}

func TestRestoreWrongNumberOfUnits(t *testing.T) {
	d := protect.Parse("one\n\ntwo", protect.Names{})
	if _, err := d.RestorePlaceholders([]string{"uno"}); !errors.Is(err, protect.ErrNotRestored) {
		t.Errorf("got %v, want ErrNotRestored", err)
	}
}
