package localrun

import (
	"encoding/json"
	"fmt"
	"strings"
)

// filter is an event source mapping's FilterCriteria: a record passes when
// it matches any pattern. It knows the part of Lambda's pattern syntax the
// template uses: exact values, {"prefix": ...} and {"exists": ...}; a
// pattern using anything else is refused when the mapping is built.
type filter []map[string]any

func newFilter(patterns []string) (filter, error) {
	var f filter
	for _, p := range patterns {
		var m map[string]any
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			return nil, fmt.Errorf("localrun: filter pattern %s: %w", p, err)
		}
		if err := checkPattern(m); err != nil {
			return nil, fmt.Errorf("localrun: filter pattern %s: %w", p, err)
		}
		f = append(f, m)
	}
	return f, nil
}

func checkPattern(p map[string]any) error {
	for k, v := range p {
		switch v := v.(type) {
		case map[string]any:
			if err := checkPattern(v); err != nil {
				return err
			}
		case []any:
			for _, o := range v {
				op, ok := o.(map[string]any)
				if !ok {
					continue
				}
				for name := range op {
					if name != "prefix" && name != "exists" {
						return fmt.Errorf("operator %q is not emulated", name)
					}
				}
			}
		default:
			return fmt.Errorf("%s: a pattern's values are objects or arrays", k)
		}
	}
	return nil
}

// pass reports whether doc, a record as the Lambda event's JSON, passes.
// No pattern passes everything.
func (f filter) pass(doc map[string]any) bool {
	if len(f) == 0 {
		return true
	}
	for _, p := range f {
		if matches(p, doc) {
			return true
		}
	}
	return false
}

func matches(p, doc map[string]any) bool {
	for k, pv := range p {
		dv, present := doc[k]
		switch pv := pv.(type) {
		case map[string]any:
			sub, ok := dv.(map[string]any)
			if !ok || !matches(pv, sub) {
				return false
			}
		case []any:
			if !matchesAny(pv, dv, present) {
				return false
			}
		}
	}
	return true
}

func matchesAny(options []any, v any, present bool) bool {
	for _, o := range options {
		switch o := o.(type) {
		case map[string]any:
			if pre, ok := o["prefix"].(string); ok {
				if s, ok := v.(string); ok && present && strings.HasPrefix(s, pre) {
					return true
				}
			}
			if ex, ok := o["exists"].(bool); ok && ex == present {
				return true
			}
		default:
			if present && o == v {
				return true
			}
		}
	}
	return false
}
