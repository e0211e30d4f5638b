package awsenv

// CloudWatch Embedded Metric Format: JSON objects on stdout that CloudWatch
// Logs turns into metrics without an API call from the function
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Units used by the service.
const (
	UnitCount        = "Count"
	UnitMilliseconds = "Milliseconds"
)

// Metric is one value.
type Metric struct {
	Name  string
	Unit  string
	Value float64
}

// MetricRecorder records metrics. A nil *MetricLogger records nothing.
type MetricRecorder interface {
	Record(ctx context.Context, metrics ...Metric)
}

// MetricLogger writes one EMF line per Record call.
type MetricLogger struct {
	mu        sync.Mutex
	w         io.Writer
	namespace string
	dims      map[string]string
	now       func() time.Time
}

// NewMetricLogger returns a MetricLogger writing to w, in namespace, with
// dims as the dimension set of every metric.
func NewMetricLogger(w io.Writer, namespace string, dims map[string]string) *MetricLogger {
	return &MetricLogger{w: w, namespace: namespace, dims: dims, now: time.Now}
}

type metricDef struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type directive struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []metricDef `json:"Metrics"`
}

// Record writes metrics as one EMF object.
func (l *MetricLogger) Record(_ context.Context, metrics ...Metric) {
	if l == nil || len(metrics) == 0 {
		return
	}
	doc := make(map[string]any, len(l.dims)+len(metrics)+1)
	dimNames := make([]string, 0, len(l.dims))
	for k, v := range l.dims {
		doc[k] = v
		dimNames = append(dimNames, k)
	}
	d := directive{Namespace: l.namespace, Dimensions: [][]string{dimNames}}
	for _, m := range metrics {
		d.Metrics = append(d.Metrics, metricDef{Name: m.Name, Unit: m.Unit})
		doc[m.Name] = m.Value
	}
	doc["_aws"] = map[string]any{"Timestamp": l.now().UnixMilli(), "CloudWatchMetrics": []directive{d}}
	b, err := json.Marshal(doc)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(b, '\n'))
}

// RecordMetrics is m.Record for an m that may be nil (a handler built
// without metrics).
func RecordMetrics(ctx context.Context, m MetricRecorder, metrics ...Metric) {
	if m != nil {
		m.Record(ctx, metrics...)
	}
}
