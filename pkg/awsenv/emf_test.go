package awsenv

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestRecordWritesOneEMFLine(t *testing.T) {
	var buf bytes.Buffer
	l := NewMetricLogger(&buf, "ChatService", map[string]string{"Function": "InboundWebhookFunction"})
	l.now = func() time.Time { return time.UnixMilli(1795341600123) }
	l.Record(context.Background(), Metric{"InboundAccepted", UnitCount, 1}, Metric{"TranslationLatency", UnitMilliseconds, 12.5})
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not one JSON object: %q", buf.String())
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Fatalf("want exactly one line, got %q", buf.String())
	}
	aws := doc["_aws"].(map[string]any)
	if aws["Timestamp"].(float64) != 1795341600123 {
		t.Fatalf("Timestamp %v", aws["Timestamp"])
	}
	d := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if d["Namespace"] != "ChatService" || d["Dimensions"].([]any)[0].([]any)[0] != "Function" {
		t.Fatalf("directive %v", d)
	}
	if len(d["Metrics"].([]any)) != 2 || doc["InboundAccepted"].(float64) != 1 || doc["TranslationLatency"].(float64) != 12.5 {
		t.Fatalf("values %v", doc)
	}
	if doc["Function"] != "InboundWebhookFunction" {
		t.Fatalf("dimension value %v", doc["Function"])
	}
}

func TestNilLoggerRecordsNothing(t *testing.T) {
	var l *MetricLogger
	l.Record(context.Background(), Metric{"X", UnitCount, 1})
}
