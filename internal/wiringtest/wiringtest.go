// Package wiringtest runs a function's events/ sample through its real
// Lambda handler against a local stack seeded with the demo fixture.
package wiringtest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/pkg/app"
	"github.com/chatbridge/chat/pkg/awsenv"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/dynamo/fixturestore"
	"github.com/chatbridge/chat/pkg/dynamo/roomstore"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/rooms"
)

// CursorKey is the CURSOR_KEY Demo sets.
const CursorKey = "wiring-test-cursor-key-0123456789"

// Demo gives t a fresh stack seeded with fixtures/demo.json (DemoStack),
// and points the function's environment at it. DemoAs also runs the test
// as a function: its handler's calls are held to the function's policy in
// template.yaml, as in AWS.
func Demo(t *testing.T) (*stacktest.Stack, *fixture.Document) {
	t.Helper()
	st, d := DemoStack(t)
	t.Setenv(awsenv.EnvTable, st.Table)
	t.Setenv(awsenv.EnvCursorKey, CursorKey)
	t.Setenv(awsenv.EnvQueueURL, st.Resources.Queues["TranslationQueue"])
	t.Setenv(awsenv.EnvDeliveryQueueURL, st.Resources.Queues["DeliveryQueue"])
	t.Setenv(awsenv.EnvSlowDeliveryQueueURL, st.Resources.Queues["SlowDeliveryQueue"])
	t.Setenv(awsenv.EnvWaitDeliveryQueueURL, st.Resources.Queues["DeliveryWaitQueue"])
	t.Setenv(awsenv.EnvBucket, st.Bucket)
	return st, d
}

// DemoStack gives t a fresh stack seeded with fixtures/demo.json and
// leaves the process's environment alone, so that parallel tests may each
// have one (a test that starts a function's process passes it its own).
func DemoStack(t *testing.T) (*stacktest.Stack, *fixture.Document) {
	t.Helper()
	st := stacktest.New(t)
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		t.Fatalf("demo fixture: %v", err)
	}
	now := time.Now()
	if err := d.Complete(chat.NewIDs(), now); err != nil {
		t.Fatalf("demo fixture: %v", err)
	}
	if err := fixturestore.New(dynamodb.NewFromConfig(st.AWS), st.Table).Apply(context.Background(), d, now); err != nil {
		t.Fatalf("apply demo fixture: %v", err)
	}
	st.Calls.Reset()
	return st, d
}

// As makes the configuration that awsenv.Load gives from now on, until t
// ends, sign as function (a template LogicalId), as e2e gives each real
// bootstrap AWS_ACCESS_KEY_ID=<LogicalId>. Configurations loaded before
// (the stack's, the seeding's) stay an administrator's.
func As(t *testing.T, function string) {
	t.Helper()
	if check := stacktest.IAM(); check != nil {
		if _, ok := check.Policies().Functions[function]; !ok {
			t.Fatalf("wiringtest: As(%q): no such function in template.yaml", function)
		}
	}
	t.Setenv("AWS_ACCESS_KEY_ID", function)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
}

// Event reads events/<name> (relative to the repository root) into T.
func Event[T any](t *testing.T, name string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "events", name))
	if err != nil {
		t.Fatalf("read sample event: %v", err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("sample event %s: %v", name, err)
	}
	return v
}

// repoRoot is the repository's root: the nearest directory above the
// test's own that holds go.mod (tests run in their package's directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("wiringtest: no go.mod above %s", dir)
		}
		dir = parent
	}
}

// Body decodes an HTTP response body.
func Body(t *testing.T, resp events.APIGatewayV2HTTPResponse) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(resp.Body), &v); err != nil {
		t.Fatalf("response body %q: %v", resp.Body, err)
	}
	return v
}

// Join joins a guest to roomID with the real join service, for samples whose
// guest token is a placeholder that only a join can make real.
func Join(t *testing.T, st *stacktest.Stack, roomID, language string) (*app.App, rooms.JoinResult) {
	t.Helper()
	a := app.New(st.AWS, st.Table)
	joined, err := (&rooms.Service{Store: roomstore.New(a.DB, a.Table), IDs: a.IDs, Now: time.Now}).Join(context.Background(),
		rooms.JoinRequest{RoomID: roomID, Nickname: "Ana", PreferredLanguage: language})
	if err != nil {
		t.Fatalf("join room %s: %v", roomID, err)
	}
	return a, joined
}

// ChannelMember returns a member of channel in the fixture d and the reader
// token its realtime connections carry (the hash of its API token, as a
// subscribe stores it).
func ChannelMember(t *testing.T, d *fixture.Document, channel string) (userID, token string) {
	t.Helper()
	for _, w := range d.Workspaces {
		for _, c := range w.Channels {
			if c.ID != channel || len(c.Members) == 0 {
				continue
			}
			for _, u := range w.Users {
				if u.ID == c.Members[0] {
					return u.ID, chat.SeatToken(chat.HashToken(u.APIToken))
				}
			}
		}
	}
	t.Fatalf("the fixture has no member of channel %s", channel)
	return "", ""
}

// DemoAs is Demo for a test of function outside its directory: the
// configuration loaded afterwards signs as function.
func DemoAs(t *testing.T, function string) (*stacktest.Stack, *fixture.Document) {
	t.Helper()
	st, d := Demo(t)
	As(t, function)
	return st, d
}
