package e2e

import (
	"debug/elf"
	"debug/gosym"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/chatbridge/chat/internal/stacktest"
)

// linkedSites returns the adapter functions (iampolicy.Site) linked into
// the binary at path, read from its pclntab (present in a stripped
// binary): what the linker kept because some path from main reaches it.
func linkedSites(path string) (map[string]bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		return nil, fmt.Errorf("%s: no .gopclntab or .text", path)
	}
	data, err := pcln.Data()
	if err != nil {
		return nil, err
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]bool{}
	for _, fn := range tab.Funcs {
		if s, ok := iampolicy.Site(fn.Name); ok {
			out[s] = true
		}
	}
	return out, nil
}

// awsSites returns the adapter functions that make AWS calls: those that
// call an AWS SDK service client's method, and, within the adapter
// packages, those that call one of them (a store method through the
// table's helpers), by their linker names.
func awsSites(t *testing.T) map[string]bool {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: root}
	var patterns []string
	for _, p := range iampolicy.AdapterPackages {
		patterns = append(patterns, p+"/...")
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatalf("load the adapter packages: %v", err)
	}
	calls := map[string]map[string]bool{} // site -> the module functions it calls
	sites := map[string]bool{}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("load %s: %v", p.PkgPath, e)
		}
		for _, file := range p.Syntax {
			for _, d := range file.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				fn, _ := p.TypesInfo.Defs[fd.Name].(*types.Func)
				if fn == nil {
					continue
				}
				name := linkerName(fn)
				calls[name] = map[string]bool{}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					var id *ast.Ident
					switch f := ast.Unparen(call.Fun).(type) {
					case *ast.SelectorExpr:
						id = f.Sel
					case *ast.Ident:
						id = f
					case *ast.IndexExpr: // a generic function's instance
						if sel, ok := f.X.(*ast.SelectorExpr); ok {
							id = sel.Sel
						} else {
							id, _ = f.X.(*ast.Ident)
						}
					}
					if id == nil {
						return true
					}
					callee, _ := p.TypesInfo.Uses[id].(*types.Func)
					if callee == nil || callee.Pkg() == nil {
						return true
					}
					switch path := callee.Pkg().Path(); {
					case strings.HasPrefix(path, "github.com/aws/aws-sdk-go-v2/service/") && callee.Type().(*types.Signature).Recv() != nil &&
						!strings.HasPrefix(callee.Name(), "Presign"): // a presigned request is sent by its holder, not made here
						sites[name] = true
					case strings.HasPrefix(path, "github.com/chatbridge/chat/"):
						calls[name][linkerName(callee.Origin())] = true
					}
					return true
				})
			}
		}
	}
	// Callers of a site are sites, within the adapter packages.
	for changed := true; changed; {
		changed = false
		for name, callees := range calls {
			if sites[name] {
				continue
			}
			for c := range callees {
				if sites[c] {
					sites[name], changed = true, true
					break
				}
			}
		}
	}
	return sites
}

// linkerName is fn's name as the linker and runtime name it.
func linkerName(fn *types.Func) string {
	sig := fn.Type().(*types.Signature)
	pkg := fn.Pkg().Path()
	if recv := sig.Recv(); recv != nil {
		rt := recv.Type()
		ptr := false
		if p, ok := rt.(*types.Pointer); ok {
			rt, ptr = p.Elem(), true
		}
		named, ok := rt.(*types.Named)
		if !ok {
			return pkg + "." + fn.Name() // an interface method
		}
		if ptr {
			return pkg + ".(*" + named.Obj().Name() + ")." + fn.Name()
		}
		return pkg + "." + named.Obj().Name() + "." + fn.Name()
	}
	return pkg + "." + fn.Name()
}

// TestEveryLinkedCallAllowed: the IAM check of every call path, not only
// those the suites took as each function. Each recorded call (the suites'
// record, internal/iampolicy/testdata/calls.json) names the adapter
// functions it came from; every function whose binary links all of them
// can make that call, so its policy must allow it, whichever function the
// suite made it as. And every adapter function that makes AWS calls and
// is linked into some function must have been seen making one in the
// suites, so that no linked call path goes unchecked.
func TestEveryLinkedCallAllowed(t *testing.T) {
	policies, err := iampolicy.Project()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "internal", "iampolicy", "testdata", "calls.json"))
	if err != nil {
		t.Fatal(err)
	}
	var record []stacktest.RecordedCall
	if err := json.Unmarshal(b, &record); err != nil {
		t.Fatal(err)
	}
	linked := map[string]map[string]bool{}
	anywhere := map[string]bool{}
	for _, fn := range mk.Functions {
		bin, _ := host.binary(t, fn.ID)
		sites, err := linkedSites(bin)
		if err != nil {
			t.Fatal(err)
		}
		linked[fn.ID] = sites
		for s := range sites {
			anywhere[s] = true
		}
	}
	isSite := awsSites(t)
	seen, used := map[string]bool{}, map[string]bool{}
	checked := 0
	for _, c := range record {
		// The call's path is its sites up to the first adapter function
		// that makes no AWS call itself (a handler, such as the realtime
		// route's, which reaches the store through an interface): what
		// decides the call. A site linked nowhere was inlined into its
		// caller: the rest of the path decides.
		var path []string
		for _, s := range c.Sites {
			if !isSite[s] {
				break
			}
			seen[s] = true
			if anywhere[s] {
				path = append(path, s)
			}
		}
		if len(path) == 0 {
			continue
		}
		req := iampolicy.Request{Action: c.Action, Resource: c.Resource, LeadingKeys: c.LeadingKeys}
		for _, fn := range mk.Functions {
			if !allLinked(linked[fn.ID], path) || !sameKind(path, c.Function, fn.ID) {
				continue
			}
			checked++
			if d := policies.Evaluate(fn.ID, req); d != iampolicy.Allow && !isWiredOut(path, fn.ID, used) {
				t.Errorf("%s links %s, whose %s of %v (made in the suites as %s) its policy denies (%v)",
					fn.ID, strings.Join(path, " <- "), c.Action, c.LeadingKeys, c.Function, d)
			}
		}
	}
	for site, w := range wiredOut {
		for _, fn := range w.functions {
			if !used[site+" "+fn] {
				t.Errorf("wiredOut: %s is no longer linked by %s through a recorded path, or its calls are allowed: drop the entry", site, fn)
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no recorded call names its sites: refresh the record (internal/iampolicy/calls_test.go)")
	}
	var unseen []string
	for s := range isSite {
		if anywhere[s] && !seen[s] {
			var by []string
			for _, fn := range mk.Functions {
				if linked[fn.ID][s] {
					by = append(by, fn.ID)
				}
			}
			unseen = append(unseen, s+" (linked by "+strings.Join(by, ", ")+")")
		}
	}
	sort.Strings(unseen)
	if len(unseen) > 0 {
		t.Errorf("%d adapter functions that make AWS calls are linked into functions but no suite made a call through them, so no policy is checked against their calls: test them as a function on the local stack, then refresh the record:\n%s", len(unseen), strings.Join(unseen, "\n"))
	}
	t.Logf("%d (function, recorded call path) pairs checked against the policies", checked)
}

// kindBound are the adapter functions that take the webhook kind
// (inbound, outbound, support) as data which each function's wiring fixes:
// webhooksapi builds one handler per kind and function, so the key
// prefixes of their calls (IWH#, OWH#, SWH#) follow the function's kind.
var kindBound = []string{
	"github.com/chatbridge/chat/pkg/dynamo/webhookstore.",
	// The delivery log, redelivery, recovery and test read their event's
	// webhook by the kind of the route they serve.
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore.(*Store).eventWebhook",
}

// wiredOut are linked call paths that a function's wiring makes
// unreachable: the adapter function, the functions it is out of reach of,
// and why. TestEveryLinkedCallAllowed fails for an entry it no longer
// needs, so the list only holds what the linker cannot see.
var wiredOut = map[string]struct {
	functions []string
	why       string
}{
	"github.com/chatbridge/chat/pkg/dynamo/editstore.(*Store).auditedDelete": {
		[]string{"EditWebhookMessageFunction", "DeleteWebhookMessageFunction", "DeleteGuestMessageFunction"},
		"edits.Service audits only an admin member's deletion of another's message (in the deletion's transaction); a guest or a webhook is never one"},
	"github.com/chatbridge/chat/pkg/dynamo/deliverystore.(*Store).MarkSlow": {
		[]string{"TestOutboundWebhookFunction", "TestSupportWebhookFunction"},
		"the test endpoint's Deliverer has no Marker (integratorsapi): a test is one attempt, never moved to the slow lane"},
}

// isWiredOut reports whether path is out of fn's reach by its wiring,
// noting each entry used (a call its policy denies) in used.
func isWiredOut(path []string, fn string, used map[string]bool) bool {
	for _, s := range path {
		if w, ok := wiredOut[s]; ok && slices.Contains(w.functions, fn) {
			used[s+" "+fn] = true
			return true
		}
	}
	return false
}

// webhookKindOf is the webhook kind a function's name says, "" for none.
func webhookKindOf(function string) string {
	for _, k := range []string{"Inbound", "Outbound", "Support"} {
		if strings.Contains(function, k) {
			return k
		}
	}
	return ""
}

// sameKind reports whether a call made through path as function made may
// be made by function fn: always, unless path goes through a kindBound
// adapter and the two functions serve different kinds of webhook.
func sameKind(path []string, made, fn string) bool {
	bound := slices.ContainsFunc(path, func(s string) bool {
		return slices.ContainsFunc(kindBound, func(p string) bool { return strings.HasPrefix(s, p) })
	})
	return !bound || webhookKindOf(made) == "" || webhookKindOf(fn) == "" || webhookKindOf(made) == webhookKindOf(fn)
}

func allLinked(set map[string]bool, path []string) bool {
	return !slices.ContainsFunc(path, func(s string) bool { return !set[s] })
}
