package chatbundle_test

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// separatorCell is one cell of a table's delimiter row: ---, :--, --:, :-:.
var separatorCell = regexp.MustCompile(`^:?-+:?$`)

// tableCells splits a table row into its cells, as GitHub renders it: an
// escaped \| is part of a cell, the outer pipes are optional.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteString(`\|`)
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

// tableProblems returns what keeps the tables of a markdown document from
// rendering: a run of table rows (lines starting with |, outside fenced
// code) must open with a header and a valid delimiter row of as many cells,
// and every row must have that many cells. A run cut by a blank line makes
// its second part a headerless run, which this reports.
func tableProblems(doc string) []string {
	var problems []string
	var run []string
	var start int
	flush := func() {
		defer func() { run = nil }()
		if len(run) == 0 {
			return
		}
		if len(run) < 2 {
			problems = append(problems, lineRef(start)+": a table row without a header and delimiter row")
			return
		}
		header := tableCells(run[0])
		sep := tableCells(run[1])
		for _, c := range sep {
			if !separatorCell.MatchString(c) {
				problems = append(problems, lineRef(start+1)+": got delimiter row "+strings.TrimSpace(run[1])+", want cells like --- (is a header missing above "+lineRef(start)+"?)")
				return
			}
		}
		if len(sep) != len(header) {
			problems = append(problems, lineRef(start+1)+": got a delimiter row of "+itoa(len(sep))+" cells, want the header's "+itoa(len(header)))
		}
		for i, row := range run[2:] {
			if n := len(tableCells(row)); n != len(header) {
				problems = append(problems, lineRef(start+2+i)+": got "+itoa(n)+" cells, want the header's "+itoa(len(header)))
			}
		}
	}
	fence := ""
	for i, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			fence = trimmed[:3]
			continue
		}
		if strings.HasPrefix(trimmed, "|") {
			if len(run) == 0 {
				start = i + 1
			}
			run = append(run, line)
			continue
		}
		flush()
	}
	flush()
	return problems
}

func lineRef(n int) string { return "line " + itoa(n) }

func itoa(n int) string { return strconv.Itoa(n) }

// TestMarkdownTablesRender: every table of every markdown file of the
// repository renders as one table (README.md's route table was once cut by
// blank lines, and its second half rendered as plain text).
func TestMarkdownTablesRender(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "*.md").Output()
	if err != nil {
		t.Skipf("SKIPPED: git ls-files failed (%v): this test reads the repository's tracked markdown files", err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatal("got no markdown files, want README.md and docs/*.md")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range tableProblems(string(b)) {
			t.Errorf("%s %s", f, p)
		}
	}
}

// TestTableProblemsFindsBrokenTables: the checker itself tells a table
// that renders from the ways one breaks.
func TestTableProblemsFindsBrokenTables(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      int
	}{
		{"good", "| a | b |\n|---|:-:|\n| 1 | `x \\| y` |\n", 0},
		{"a header and delimiter only", "| a |\n|---|\n", 0},
		{"cut by a blank line", "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n| 5 | 6 |\n", 1},
		{"a lone row", "text\n| 1 | 2 |\ntext\n", 1},
		{"a row too short", "| a | b |\n|---|---|\n| 1 |\n", 1},
		{"a short delimiter row", "| a | b |\n|---|\n| 1 | 2 |\n", 1},
		{"in a code fence", "```\n| 1 | 2 |\n```\n", 0},
	} {
		if got := tableProblems(c.doc); len(got) != c.want {
			t.Errorf("%s: got %d problems %q, want %d", c.name, len(got), got, c.want)
		}
	}
}
