package chatbundle_test

import (
	"os"
	"strings"
	"testing"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/samtemplate"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// TestReadmeRouteTableIsComplete: the README's table from route to function
// to handler names every route of httpapi.Routes with its function, and
// every function of the template, so a new endpoint cannot go undocumented.
func TestReadmeRouteTableIsComplete(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{} // first cell -> the row
	for _, line := range strings.Split(string(readme), "\n") {
		if cells := strings.Split(line, "|"); len(cells) > 3 && strings.HasPrefix(line, "| ") {
			rows[strings.TrimSpace(cells[1])] = line
		}
	}
	for _, rt := range httpapi.Routes {
		row, ok := rows["`"+rt.Method+" "+rt.Path+"`"]
		if !ok {
			t.Errorf("README.md: no row for %s %s", rt.Method, rt.Path)
			continue
		}
		if !strings.Contains(row, "`"+rt.Function+"`") {
			t.Errorf("README.md: the row of %s %s does not name %s", rt.Method, rt.Path, rt.Function)
		}
	}
	tmpl, err := samtemplate.Parse(chatbundle.Template)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range tmpl.OfType("AWS::Serverless::Function") {
		if !strings.Contains(string(readme), "| `"+fn+"` |") {
			t.Errorf("README.md: the route table does not list %s", fn)
		}
	}
}
