package iampolicy

import (
	"sort"
	"strings"
	"testing"
)

// itemActions are the DynamoDB actions that read or write items by key:
// each grant of one of them names the key prefixes it may touch.
var itemActions = []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
	"dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem"}

// writeActions change items.
var writeActions = []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}

// TestEveryItemGrantNamesItsKeyPrefixes: no function may read or write an
// item of the table whatever its key (the secrets' items included): every
// Allow of an item action on the table or an index carries a
// dynamodb:LeadingKeys condition, and no function may Scan.
func TestEveryItemGrantNamesItsKeyPrefixes(t *testing.T) {
	s := project(t)
	for _, fn := range sortedFunctions(s) {
		for _, st := range s.Functions[fn].Statements {
			if st.Effect != "Allow" || !onTable(s, st) {
				continue
			}
			for _, a := range itemActions {
				if grants(st, a) && !hasLeadingKeys(st) {
					t.Errorf("%s may %s any key of the table: name the key prefixes (dynamodb:LeadingKeys)", fn, a)
				}
			}
			if grants(st, "dynamodb:Scan") {
				t.Errorf("%s may Scan the table", fn)
			}
		}
	}
}

// TestNoFunctionWritesAPITokens: API tokens are made by `chatctl apply`
// alone; a flaw in any function must not be able to mint or change one.
func TestNoFunctionWritesAPITokens(t *testing.T) {
	s := project(t)
	for _, fn := range sortedFunctions(s) {
		for _, a := range writeActions {
			for _, key := range []string{"APITOKEN#0123456789abcdef", "APITOKEN#"} {
				if s.Evaluate(fn, Request{Action: a, Resource: s.TableARN(), LeadingKeys: []string{key}}) == Allow {
					t.Errorf("%s may %s %s", fn, a, key)
				}
			}
		}
	}
	// The check itself bites: a grant of every key would be caught.
	p := &Policy{Statements: []Statement{{Effect: "Allow", Actions: []string{"dynamodb:PutItem"}, Resources: []string{s.TableARN()}}}}
	if p.Evaluate(Request{Action: "dynamodb:PutItem", Resource: s.TableARN(), LeadingKeys: []string{"APITOKEN#x"}}) != Allow {
		t.Fatal("a policy allowing PutItem on any key does not allow an APITOKEN# write: the test proves nothing")
	}
}

func sortedFunctions(s *Set) []string {
	var fns []string
	for fn := range s.Functions {
		fns = append(fns, fn)
	}
	sort.Strings(fns)
	return fns
}

func onTable(s *Set, st Statement) bool {
	for _, r := range st.Resources {
		if r == "*" || MatchARN(r, s.TableARN()) || strings.HasPrefix(r, s.TableARN()+"/index/") {
			return true
		}
	}
	return false
}

func grants(st Statement, action string) bool {
	for _, a := range st.Actions {
		if matchAction(a, action) {
			return true
		}
	}
	return false
}

func hasLeadingKeys(st Statement) bool {
	for _, c := range st.Conditions {
		if c.Key == "dynamodb:LeadingKeys" {
			return true
		}
	}
	return false
}
