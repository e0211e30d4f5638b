package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
)

// applyStack returns a fresh table that runApply will write to.
func applyStack(t *testing.T) *stacktest.Stack {
	t.Helper()
	st := stacktest.New(t)
	t.Setenv(awsenv.EnvTable, st.Table)
	return st
}

func itemCount(t *testing.T, st *stacktest.Stack) int {
	t.Helper()
	out, err := st.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(st.Table), Select: types.SelectCount})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return int(out.Count)
}

func TestRunApplyPrintsTheAppliedDemo(t *testing.T) {
	st := applyStack(t)
	file := filepath.Join("..", "..", "fixtures", "demo.json")
	for range 2 {
		var stdout, stderr bytes.Buffer
		if err := runApply(context.Background(), []string{file}, nil, &stdout, &stderr); err != nil {
			t.Fatalf("apply: %v (stderr %s)", err, stderr.String())
		}
		printed, err := fixture.Parse(stdout.Bytes())
		if err != nil {
			t.Fatalf("parse printed document: %v\n%s", err, stdout.String())
		}
		want, _ := fixture.Parse(chatbundle.DemoFixture)
		if !reflect.DeepEqual(printed, want) {
			t.Fatalf("printed document differs from fixtures/demo.json:\n%s", stdout.String())
		}
		if got, want := itemCount(t, st), 44; got != want { // members' index items; webhooks stored as twins; the glossary and its version
			t.Fatalf("got %d items, want %d", got, want)
		}
	}
}

func TestRunApplyFromStdinFillsGeneratedValues(t *testing.T) {
	st := applyStack(t)
	in := strings.NewReader(`{"workspaces": [{"name": "Acme", "users": [{"name": "Ana", "preferred_language": "es-ES"}],
		"channels": [{"name": "general"}], "inbound_webhooks": [{"bot_name": "CI Bot"}]}]}`)
	var stdout, stderr bytes.Buffer
	if err := runApply(context.Background(), []string{"-"}, in, &stdout, &stderr); err != nil {
		t.Fatalf("apply: %v", err)
	}
	d, err := fixture.Parse(stdout.Bytes())
	if err != nil {
		t.Fatalf("parse printed document: %v\n%s", err, stdout.String())
	}
	w := d.Workspaces[0]
	if !chat.ValidID(w.ID) || !strings.HasPrefix(w.Users[0].APIToken, fixture.APITokenPrefix) ||
		!strings.HasPrefix(w.InboundWebhooks[0].Secret, fixture.SecretPrefix) || w.InboundWebhooks[0].ChannelID != w.Channels[0].ID {
		t.Fatalf("printed document lacks generated values:\n%s", stdout.String())
	}
	out, err := st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.Table), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "APITOKEN#" + chat.HashToken(w.Users[0].APIToken)},
		"sk": &types.AttributeValueMemberS{Value: "#META"},
	}})
	if err != nil || out.Item == nil {
		t.Fatalf("got item %v, error %v; want the printed token's API token item", out, err)
	}
}

func TestRunApplyInvalidDocumentWritesNothing(t *testing.T) {
	st := applyStack(t)
	file := filepath.Join(t.TempDir(), "bad.json")
	doc := `{"workspaces": [{"name": "", "users": [{"id": "nope", "name": "Ana", "preferred_language": "es-ES"}],
		"channels": [{"name": "general", "members": ["01JD9N0W78H8Z7XT23BWPJKAFM"]}]}]}`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := runApply(context.Background(), []string{file}, nil, &stdout, &stderr)
	if err == nil {
		t.Fatalf("got no error, want the document's problems")
	}
	for _, want := range []string{"workspaces[0].name: is required", "workspaces[0].users[0].id: must be a ULID",
		"workspaces[0].channels[0].members[0]: must name a user of this workspace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got error %q, want it to contain %q", err, want)
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("got stdout %q, want nothing printed", stdout.String())
	}
	if got := itemCount(t, st); got != 0 {
		t.Fatalf("got %d items, want an empty table", got)
	}
}

func TestRunApplyUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"a.json", "b.json"}, {""}} {
		var stdout, stderr bytes.Buffer
		if err := runApply(context.Background(), args, nil, &stdout, &stderr); err == nil {
			t.Errorf("args %q: got no error, want a usage error", args)
		}
	}
	var stdout, stderr bytes.Buffer
	err := runApply(context.Background(), []string{filepath.Join(t.TempDir(), "missing.json")}, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: got %v, want a no such file error", err)
	}
}

// TestRunApplyRateLimit: rate_limit on an outbound and a support webhook
// is written to both items of each webhook (the listed one and its by-id
// twin, which the delivery function and webhook management read), printed
// back, and removed by a document that no longer gives it; an invalid one
// is refused with the API's words and writes nothing.
func TestRunApplyRateLimit(t *testing.T) {
	st := applyStack(t)
	const outID, supID = "01JD9N15ZR836GD73VZ533YQJJ", "01JD9N18XGGQFDKDZKXMRRSFE1"
	doc := func(outbound, support string) string {
		return `{"workspaces": [{"id": "01JD9N0V80G9T6DXN5EAY6K8H4", "name": "Acme",
			"outbound_webhooks": [{"id": "` + outID + `", "name": "Audit", "url": "https://audit.example.invalid/h"` + outbound + `}],
			"support_webhooks": [{"id": "` + supID + `", "name": "Desk", "url": "https://desk.example.invalid/h"` + support + `}]}]}`
	}
	apply := func(in string) (*fixture.Document, error) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := runApply(context.Background(), []string{"-"}, strings.NewReader(in), &stdout, &stderr); err != nil {
			return nil, err
		}
		if !strings.Contains(stdout.String(), `"rate_limit"`) {
			t.Fatalf("printed document does not show rate_limit:\n%s", stdout.String())
		}
		d, err := fixture.Parse(stdout.Bytes())
		if err != nil {
			t.Fatalf("parse printed document: %v\n%s", err, stdout.String())
		}
		return d, nil
	}
	// stored returns the rate_limit attribute of every item of the webhook
	// whose id is id ("" when absent).
	stored := func(id string) []string {
		t.Helper()
		out, err := st.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(st.Table)})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		var got []string
		for _, it := range out.Items {
			if v, ok := it["id"].(*types.AttributeValueMemberS); !ok || v.Value != id {
				continue
			}
			n, _ := it["rate_limit"].(*types.AttributeValueMemberN)
			if n == nil {
				got = append(got, "")
			} else {
				got = append(got, n.Value)
			}
		}
		return got
	}
	d, err := apply(doc(`, "rate_limit": 25`, `, "rate_limit": null`))
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if r := d.Workspaces[0].OutboundWebhooks[0].RateLimit; r == nil || *r != 25 {
		t.Fatalf("printed outbound rate_limit %v, want 25", r)
	}
	if r := d.Workspaces[0].SupportWebhooks[0].RateLimit; r != nil {
		t.Fatalf("printed support rate_limit %v, want null", *r)
	}
	if got := stored(outID); !reflect.DeepEqual(got, []string{"25", "25"}) {
		t.Fatalf("outbound items' rate_limit %q, want 25 on both twins", got)
	}
	if got := stored(supID); !reflect.DeepEqual(got, []string{"", ""}) {
		t.Fatalf("support items' rate_limit %q, want none on both twins", got)
	}
	if _, err := apply(doc("", `, "rate_limit": 1000`)); err != nil {
		t.Fatalf("apply again: %v", err)
	}
	if got := stored(outID); !reflect.DeepEqual(got, []string{"", ""}) {
		t.Fatalf("outbound items' rate_limit %q after a document without it, want none", got)
	}
	if got := stored(supID); !reflect.DeepEqual(got, []string{"1000", "1000"}) {
		t.Fatalf("support items' rate_limit %q, want 1000 on both twins", got)
	}
	before := itemCount(t, st)
	_, err = apply(doc(`, "rate_limit": 0`, `, "rate_limit": "5"`))
	if err == nil {
		t.Fatalf("rate_limit 0 and \"5\": got no error")
	}
	for _, want := range []string{"workspaces[0].outbound_webhooks[0].rate_limit: " + fixture.RateLimitMessage,
		"workspaces[0].support_webhooks[0].rate_limit: " + fixture.RateLimitMessage} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got error %q, want it to contain %q", err, want)
		}
	}
	if got := stored(supID); !reflect.DeepEqual(got, []string{"1000", "1000"}) || itemCount(t, st) != before {
		t.Fatalf("the refused document wrote: support rate_limit %q", got)
	}
}
