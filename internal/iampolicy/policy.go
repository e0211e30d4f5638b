// Package iampolicy evaluates the IAM policies of template.yaml's functions
// as AWS evaluates an identity-based policy, so that a local run refuses
// what a deployed function's role would refuse (internal/motoserver asks it
// about every AWS call a function makes).
//
// What it implements: default deny; an explicit Deny wins over any Allow;
// Action and Resource with the wildcards * and ? (actions match without
// regard to case, ARNs segment by segment); and the condition operators
// StringEquals, StringLike and their ForAllValues: and ForAnyValue: set
// forms on the key dynamodb:LeadingKeys. ForAllValues on an absent or empty
// key set is true and ForAnyValue false, as in AWS: a Scan, which has no
// leading keys, passes a ForAllValues:StringLike condition. Any other
// operator, key or policy element is an error when the template is read,
// never a silent allow or deny.
package iampolicy

import (
	"fmt"
	"regexp"
	"strings"
)

// Request is one authorisation question: may the caller perform Action on
// Resource. LeadingKeys are the partition key values a DynamoDB item
// operation touches (nil when the key is absent from the request, as for a
// Scan).
type Request struct {
	Action      string
	Resource    string
	LeadingKeys []string
}

// Decision is the outcome of evaluating a request.
type Decision int

// The three outcomes of IAM's evaluation of identity-based policies.
const (
	ImplicitDeny Decision = iota
	Allow
	ExplicitDeny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case ExplicitDeny:
		return "ExplicitDeny"
	}
	return "ImplicitDeny"
}

// KeyLeadingKeys is the one condition key implemented.
const KeyLeadingKeys = "dynamodb:LeadingKeys"

// Condition is one operator/key/values triple of a statement's Condition.
type Condition struct {
	Operator string // e.g. "ForAllValues:StringLike"
	Key      string // "dynamodb:LeadingKeys"
	Values   []string
}

// Statement is one statement of a policy document, its intrinsic
// functions already resolved to local ARN patterns.
type Statement struct {
	Effect     string // "Allow" or "Deny"
	Actions    []string
	Resources  []string
	Conditions []Condition
}

// Policy is every statement of one principal's policies.
type Policy struct {
	Statements []Statement
}

// Evaluate decides r as IAM does: an explicit Deny wins, else an Allow
// allows, else it is denied by default.
func (p *Policy) Evaluate(r Request) Decision {
	d := ImplicitDeny
	if p == nil {
		return d
	}
	for _, s := range p.Statements {
		if !s.applies(r) {
			continue
		}
		if s.Effect == "Deny" {
			return ExplicitDeny
		}
		d = Allow
	}
	return d
}

// Without returns a copy of p in which no statement grants action (the
// action removed from every statement's list; a statement left with no
// action is dropped).
func (p *Policy) Without(action string) *Policy {
	out := &Policy{}
	for _, s := range p.Statements {
		var kept []string
		for _, a := range s.Actions {
			if !strings.EqualFold(a, action) {
				kept = append(kept, a)
			}
		}
		if len(kept) == 0 {
			continue
		}
		s.Actions = kept
		out.Statements = append(out.Statements, s)
	}
	return out
}

func (s *Statement) applies(r Request) bool {
	if !anyMatch(s.Actions, r.Action, matchAction) || !anyMatch(s.Resources, r.Resource, MatchARN) {
		return false
	}
	for _, c := range s.Conditions {
		if !c.holds(r) {
			return false
		}
	}
	return true
}

func anyMatch(patterns []string, v string, match func(p, v string) bool) bool {
	for _, p := range patterns {
		if match(p, v) {
			return true
		}
	}
	return false
}

// validate refuses what Evaluate does not implement.
func (c Condition) validate() error {
	if !strings.EqualFold(c.Key, KeyLeadingKeys) {
		return fmt.Errorf("iampolicy: condition key %q is not implemented (only %s)", c.Key, KeyLeadingKeys)
	}
	switch c.Operator {
	case "StringEquals", "StringLike",
		"ForAllValues:StringEquals", "ForAllValues:StringLike",
		"ForAnyValue:StringEquals", "ForAnyValue:StringLike":
		return nil
	}
	return fmt.Errorf("iampolicy: condition operator %q is not implemented", c.Operator)
}

// holds evaluates the condition against the request's key values.
func (c Condition) holds(r Request) bool {
	set, op, _ := strings.Cut(c.Operator, ":")
	if op == "" {
		set, op = "", c.Operator
	}
	match := func(v string) bool {
		for _, p := range c.Values {
			if op == "StringLike" && glob(p, v, false) || op == "StringEquals" && p == v {
				return true
			}
		}
		return false
	}
	values := r.LeadingKeys
	switch set {
	case "ForAllValues":
		// True for an absent or empty set: nothing fails to match.
		for _, v := range values {
			if !match(v) {
				return false
			}
		}
		return true
	case "ForAnyValue":
		for _, v := range values {
			if match(v) {
				return true
			}
		}
		return false
	}
	// A single-valued operator: false when the key is absent; with several
	// values (a BatchGetItem's keys), each must match.
	if len(values) == 0 {
		return false
	}
	for _, v := range values {
		if !match(v) {
			return false
		}
	}
	return true
}

// matchAction matches an action pattern ("dynamodb:Get*") without regard
// to case, as IAM does.
func matchAction(p, v string) bool { return glob(p, v, true) }

// MatchARN matches an ARN against an ARN pattern as IAM does: "*" alone
// matches anything; otherwise the six colon-separated parts are matched
// one by one, the wildcards of one part never reaching into another (the
// resource part, the sixth, keeps any colons of its own).
func MatchARN(p, v string) bool {
	if p == "*" {
		return true
	}
	pp, vp := strings.SplitN(p, ":", 6), strings.SplitN(v, ":", 6)
	if len(pp) != 6 || len(vp) != 6 {
		return false
	}
	for i := range pp {
		if !glob(pp[i], vp[i], false) {
			return false
		}
	}
	return true
}

// glob matches v against p, where * matches any run of characters and ?
// any one character.
func glob(p, v string, fold bool) bool {
	if fold {
		p, v = strings.ToLower(p), strings.ToLower(v)
	}
	// Iterative matching with backtracking to the last star.
	pi, vi, star, mark := 0, 0, -1, 0
	for vi < len(v) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == v[vi]):
			pi++
			vi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, vi
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			vi = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// credential reads the access key id and region of a SigV4 Authorization
// header ("AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request, ...").
var credential = regexp.MustCompile(`Credential=([^/,\s]+)/[^/]*/([^/]*)/`)

// Principal returns the access key id and region a SigV4 Authorization
// header was signed with; ok is false for anything else.
func Principal(authorization string) (akid, region string, ok bool) {
	m := credential.FindStringSubmatch(authorization)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}
