package samtemplate

import (
	"fmt"
	"sort"
	"strconv"
	"time"
)

// DefaultTimeout is Lambda's timeout for a function that sets none.
const DefaultTimeout = 3 * time.Second

// Timeout is function's Timeout: its own, else Globals.Function.Timeout,
// else Lambda's default.
func (t *Template) Timeout(function string) time.Duration {
	if r, ok := t.Resources[function]; ok {
		if s, ok := seconds(r.Properties["Timeout"]); ok {
			return s
		}
	}
	fn, _ := t.Globals["Function"].(map[string]any)
	if s, ok := seconds(fn["Timeout"]); ok {
		return s
	}
	return DefaultTimeout
}

// EventSource is one SQS or DynamoDB event of a function: the settings of
// its event source mapping, with Lambda's defaults for those the template
// leaves out.
type EventSource struct {
	Function string
	// Name is the event's key under the function's Events.
	Name string
	// Type is "SQS" or "DynamoDB".
	Type string
	// Source is the queue's or table's logical id (from !GetAtt X.Arn or
	// X.StreamArn).
	Source string
	// BatchSize defaults to 10 (SQS) or 100 (DynamoDB).
	BatchSize int
	// BatchingWindow is MaximumBatchingWindowInSeconds (default 0).
	BatchingWindow time.Duration
	// ReportBatchItemFailures: FunctionResponseTypes names it.
	ReportBatchItemFailures bool
	// Filters are FilterCriteria's patterns, as written.
	Filters []string
	// MaximumConcurrency is ScalingConfig.MaximumConcurrency (SQS only); 0
	// when unset (the function's own concurrency bounds it).
	MaximumConcurrency int

	// Stream sources only.
	StartingPosition string
	// MaximumRetryAttempts is -1 (the default) for infinite.
	MaximumRetryAttempts int
	// MaximumRecordAge is MaximumRecordAgeInSeconds; 0 (the default, -1 in
	// the template) for infinite.
	MaximumRecordAge time.Duration
	Bisect           bool
	// ParallelizationFactor defaults to 1.
	ParallelizationFactor int
	// OnFailure is the logical id of DestinationConfig.OnFailure's queue;
	// "" for none.
	OnFailure string
}

// EventSources returns function's SQS and DynamoDB events, sorted by name.
// Errors: a setting of the wrong type, or a source that is not a !GetAtt.
func (t *Template) EventSources(function string) ([]EventSource, error) {
	r, ok := t.Resources[function]
	if !ok {
		return nil, fmt.Errorf("samtemplate: no function %s", function)
	}
	evs, _ := r.Properties["Events"].(map[string]any)
	var out []EventSource
	for name, e := range evs {
		ev, _ := e.(map[string]any)
		typ, _ := ev["Type"].(string)
		if typ != "SQS" && typ != "DynamoDB" {
			continue
		}
		p, _ := ev["Properties"].(map[string]any)
		es, err := eventSource(function, name, typ, p)
		if err != nil {
			return nil, err
		}
		out = append(out, es)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// EventSource is function's one event of type typ ("SQS" or "DynamoDB").
func (t *Template) EventSource(function, typ string) (EventSource, error) {
	all, err := t.EventSources(function)
	if err != nil {
		return EventSource{}, err
	}
	var found []EventSource
	for _, es := range all {
		if es.Type == typ {
			found = append(found, es)
		}
	}
	if len(found) != 1 {
		return EventSource{}, fmt.Errorf("samtemplate: %s has %d %s events, want 1", function, len(found), typ)
	}
	return found[0], nil
}

func eventSource(function, name, typ string, p map[string]any) (EventSource, error) {
	es := EventSource{Function: function, Name: name, Type: typ, BatchSize: 10, MaximumRetryAttempts: -1, ParallelizationFactor: 1}
	fail := func(key string) (EventSource, error) {
		return EventSource{}, fmt.Errorf("samtemplate: %s event %s: %s %v is not what Lambda accepts", function, name, key, p[key])
	}
	src := "Queue"
	if typ == "DynamoDB" {
		es.BatchSize, src = 100, "Stream"
		es.StartingPosition, _ = p["StartingPosition"].(string)
	}
	logical, ok := getAtt(p[src])
	if !ok {
		return fail(src)
	}
	es.Source = logical
	ints := map[string]*int{"BatchSize": &es.BatchSize, "MaximumRetryAttempts": &es.MaximumRetryAttempts, "ParallelizationFactor": &es.ParallelizationFactor}
	for key, dst := range ints {
		if v, ok := p[key]; ok {
			n, ok := integer(v)
			if !ok {
				return fail(key)
			}
			*dst = n
		}
	}
	if v, ok := p["MaximumBatchingWindowInSeconds"]; ok {
		s, ok := seconds(v)
		if !ok {
			return fail("MaximumBatchingWindowInSeconds")
		}
		es.BatchingWindow = s
	}
	if v, ok := p["MaximumRecordAgeInSeconds"]; ok {
		n, ok := integer(v)
		if !ok {
			return fail("MaximumRecordAgeInSeconds")
		}
		if n > 0 {
			es.MaximumRecordAge = time.Duration(n) * time.Second
		}
	}
	if sc, ok := p["ScalingConfig"].(map[string]any); ok {
		n, ok := integer(sc["MaximumConcurrency"])
		if !ok || n < 2 || n > 1000 {
			return fail("ScalingConfig")
		}
		es.MaximumConcurrency = n
	}
	es.Bisect, _ = p["BisectBatchOnFunctionError"].(bool)
	types, _ := p["FunctionResponseTypes"].([]any)
	for _, rt := range types {
		if rt == "ReportBatchItemFailures" {
			es.ReportBatchItemFailures = true
		}
	}
	fc, _ := p["FilterCriteria"].(map[string]any)
	filters, _ := fc["Filters"].([]any)
	for _, f := range filters {
		fm, _ := f.(map[string]any)
		pattern, ok := fm["Pattern"].(string)
		if !ok {
			return fail("FilterCriteria")
		}
		es.Filters = append(es.Filters, pattern)
	}
	if dc, ok := p["DestinationConfig"].(map[string]any); ok {
		of, _ := dc["OnFailure"].(map[string]any)
		logical, ok := getAtt(of["Destination"])
		if !ok {
			return fail("DestinationConfig")
		}
		es.OnFailure = logical
	}
	return es, nil
}

// getAtt is X of "!GetAtt X.Arn" or "!GetAtt X.StreamArn".
func getAtt(v any) (string, bool) {
	m, _ := v.(map[string]any)
	ref, ok := m["!GetAtt"].(string)
	if !ok {
		return "", false
	}
	for i := range len(ref) {
		if ref[i] == '.' {
			return ref[:i], i > 0
		}
	}
	return "", false
}

func integer(v any) (int, bool) {
	switch v := v.(type) {
	case int:
		return v, true
	case string:
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	return 0, false
}

func seconds(v any) (time.Duration, bool) {
	n, ok := integer(v)
	if !ok || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}
