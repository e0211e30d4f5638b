package dynamo_test

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	chatbundle "github.com/chatbridge/chat"
	"github.com/chatbridge/chat/internal/stacktest"
	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
	"github.com/chatbridge/chat/pkg/rooms"
)

// Ids and tokens of fixtures/demo.json.
const (
	demoWorkspace = "01JD9N0V80G9T6DXN5EAY6K8H4"
	demoAna       = "01JD9N0W78H8Z7XT23BWPJKAFM"
	demoChloe     = "01JD9N0Y5RPCR0VT0EPE4VWVVH"
	demoGeneral   = "01JD9N0Z50BAKDWE0FBRMSFD5P"
	demoSupport   = "01JD9N1048PXK951NGC7NEMZX9"
	demoCall      = "01JD9N113GQYDPWDARF68MKWR7"
	demoCIBot     = "01JD9N1418BBS5R9EJ3SKBVPMA"
	demoAnaToken  = "wsk_demo_ana_token"
)

// demo returns fixtures/demo.json, parsed and completed.
func demo(t *testing.T) *fixture.Document {
	t.Helper()
	d, err := fixture.Parse(chatbundle.DemoFixture)
	if err != nil {
		t.Fatalf("parse demo fixture: %v", err)
	}
	if err := d.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatalf("complete demo fixture: %v", err)
	}
	return d
}

func newApplyStore(t *testing.T) (*stacktest.Stack, *storetest.Stores) {
	t.Helper()
	st := stacktest.New(t)
	return st, storetest.New(st.DB, st.Table)
}

func apply(t *testing.T, s *storetest.Stores, d *fixture.Document, now time.Time) {
	t.Helper()
	if err := s.Fixture.Apply(context.Background(), d, now); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

// scan returns every item of the table by "pk|sk", as plain Go values.
// Attributes named in drop are left out.
func scan(t *testing.T, st *stacktest.Stack, drop ...string) map[string]map[string]any {
	t.Helper()
	items := map[string]map[string]any{}
	p := dynamodb.NewScanPaginator(st.DB, &dynamodb.ScanInput{TableName: aws.String(st.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		for _, av := range page.Items {
			var it map[string]any
			if err := attributevalue.UnmarshalMap(av, &it); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			for _, name := range drop {
				delete(it, name)
			}
			items[it["pk"].(string)+"|"+it["sk"].(string)] = it
		}
	}
	return items
}

// item returns the item at pk, sk, or nil.
func item(t *testing.T, st *stacktest.Stack, pk, sk string) map[string]any {
	t.Helper()
	out, err := st.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.Table),
		Key:            map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}},
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("get %s %s: %v", pk, sk, err)
	}
	if out.Item == nil {
		return nil
	}
	var it map[string]any
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return it
}

func keysWithPrefix(items map[string]map[string]any, prefix string) []string {
	var keys []string
	for k := range items {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func TestApplyWritesTheDataModel(t *testing.T) {
	st, s := newApplyStore(t)
	apply(t, s, demo(t), time.Now())
	items := scan(t, st)

	// 1 workspace, 3 users, 3 API tokens, 2 channels, 5 user readers,
	// 3 rooms and 3 room entries in their channels, 2 inbound, 3 outbound
	// and 2 support webhooks, each stored as twins (by id and listed); 5
	// channel entries in their members' lists and 3 room entries in the
	// workspace's list; the glossary and its version.
	if got, want := len(items), 44; got != want {
		t.Fatalf("got %d items, want %d: %v", got, want, keysWithPrefix(items, ""))
	}
	for _, tc := range []struct {
		key, attr string
		want      any
	}{
		{"WS#" + demoWorkspace + "|#META", "webhook_quota_per_minute", 600.0},
		{"WS#" + demoWorkspace + "|#META", "translation_chars_per_day", float64(chat.DefaultTranslationCharsPerDay)},
		{"WS#" + demoWorkspace + "|USER#" + demoAna, "token_hash", chat.HashToken(demoAnaToken)},
		{"APITOKEN#" + chat.HashToken(demoAnaToken) + "|#META", "user_id", demoAna},
		{"APITOKEN#" + chat.HashToken(demoAnaToken) + "|#META", "revoked", false},
		{"APITOKEN#" + chat.HashToken(demoAnaToken) + "|#META", "role", "admin"},
		{"APITOKEN#" + chat.HashToken(demoAnaToken) + "|#META", "preferred_language", "es-ES"},
		{"WS#" + demoWorkspace + "|USER#" + demoAna, "role", "admin"},
		{"CHAN#" + demoGeneral + "|READER#USER#" + demoChloe, "language", "fr-FR"},
		{"CHAN#" + demoGeneral + "|READER#USER#" + demoChloe, "kind", "user"},
		{"ROOM#" + demoCall + "|#META", "channel_id", demoSupport},
		{"ROOM#" + demoCall + "|#META", "expires_epoch", float64(time.Date(2099, 12, 31, 23, 59, 59, 0, time.UTC).Unix())},
		{"CHAN#" + demoSupport + "|ROOM#" + demoCall, "status", "active"},
		{"CHAN#" + demoSupport + "|ROOM#" + demoCall, "kind", "room"},
		{"IWH#" + demoCIBot + "|#META", "secret_hash", chat.HashToken("whsec_demo_ci_bot_secret")},
		{"IWH#" + demoCIBot + "|#META", "signing_secret", "whsig_demo_ci_bot_signing"},
		{"WS#" + demoWorkspace + "|OWH#2024-11-22T10:05:00.000000000Z#01JD9N16Z0PJ2VVEYQE79NT2QV", "name", "Analytics"},
		{"WS#" + demoWorkspace + "|SWH#2024-11-22T10:00:00.000000000Z#01JD9N18XGGQFDKDZKXMRRSFE1", "name", "Helpdesk"},
	} {
		it, ok := items[tc.key]
		if !ok {
			t.Errorf("missing item %s", tc.key)
			continue
		}
		if got := it[tc.attr]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: got %v, want %v", tc.key, tc.attr, got, tc.want)
		}
	}
	for key, it := range items {
		for attr, v := range it {
			if s, ok := v.(string); ok && (strings.Contains(s, "wsk_demo") || strings.Contains(s, "whsec_demo")) {
				t.Errorf("%s %s holds a token or static secret in clear", key, attr)
			}
		}
	}
}

func TestApplyIsIdempotent(t *testing.T) {
	st, s := newApplyStore(t)
	d := demo(t)
	// One outbound webhook without created_at: the second apply must keep
	// the first one's.
	d.Workspaces[0].OutboundWebhooks[0].CreatedAt = ""
	t1 := time.Now().Add(-time.Hour)
	apply(t, s, d, t1)
	first := scan(t, st, "updated_at")
	apply(t, s, d, t1.Add(time.Hour))
	second := scan(t, st, "updated_at")
	if !reflect.DeepEqual(first, second) {
		for k := range second {
			if !reflect.DeepEqual(first[k], second[k]) {
				t.Errorf("%s: got %v after the second apply, want %v", k, second[k], first[k])
			}
		}
		t.Fatalf("got %d items after the second apply, want the same %d", len(second), len(first))
	}
	updated := scan(t, st)["IWH#"+demoCIBot+"|#META"]["updated_at"]
	if want := t1.Add(time.Hour).UTC().Format(time.RFC3339Nano); updated != want {
		t.Errorf("updated_at: got %v, want %v", updated, want)
	}
}

func TestApplyRotatesAPIToken(t *testing.T) {
	st, s := newApplyStore(t)
	d := demo(t)
	apply(t, s, d, time.Now())
	const newToken = "wsk_demo_ana_rotated_token"
	d.Workspaces[0].Users[0].APIToken = newToken
	apply(t, s, d, time.Now())

	old := item(t, st, "APITOKEN#"+chat.HashToken(demoAnaToken), "#META")
	if old == nil || old["revoked"] != true || old["user_id"] != demoAna {
		t.Errorf("old token: got %v, want revoked=true for user %s", old, demoAna)
	}
	fresh := item(t, st, "APITOKEN#"+chat.HashToken(newToken), "#META")
	if fresh == nil || fresh["revoked"] != false || fresh["user_id"] != demoAna {
		t.Errorf("new token: got %v, want revoked=false for user %s", fresh, demoAna)
	}
	user := item(t, st, "WS#"+demoWorkspace, "USER#"+demoAna)
	if got, want := user["token_hash"], chat.HashToken(newToken); got != want {
		t.Errorf("user token_hash: got %v, want %v", got, want)
	}
}

func TestApplyTokenSwapRevokesNothing(t *testing.T) {
	st, s := newApplyStore(t)
	d := demo(t)
	apply(t, s, d, time.Now())
	users := d.Workspaces[0].Users
	users[0].APIToken, users[1].APIToken = users[1].APIToken, users[0].APIToken
	apply(t, s, d, time.Now())
	for _, u := range users {
		it := item(t, st, "APITOKEN#"+chat.HashToken(u.APIToken), "#META")
		if it == nil || it["revoked"] != false || it["user_id"] != u.ID {
			t.Errorf("token of %s: got %v, want revoked=false for user %s", u.Name, it, u.ID)
		}
	}
}

func TestApplyRemovesDroppedMembers(t *testing.T) {
	st, s := newApplyStore(t)
	d := demo(t)
	apply(t, s, d, time.Now())
	general := &d.Workspaces[0].Channels[0]
	general.Members = general.Members[:2] // Chloé leaves general
	d.Workspaces[0].Users[0].PreferredLanguage = "es-MX"
	apply(t, s, d, time.Now())

	readers := keysWithPrefix(scan(t, st), "CHAN#"+demoGeneral+"|READER#")
	if got, want := len(readers), 2; got != want {
		t.Fatalf("got readers %v, want %d", readers, want)
	}
	if it := item(t, st, "CHAN#"+demoGeneral, "READER#USER#"+demoChloe); it != nil {
		t.Errorf("Chloé's reader item: got %v, want deleted", it)
	}
	if it := item(t, st, "WS#"+demoWorkspace, "USER#"+demoChloe); it == nil {
		t.Errorf("Chloé's user item: got deleted, want kept")
	}
	if it := item(t, st, "CHAN#"+demoSupport, "READER#USER#"+demoAna); it["language"] != "es-MX" {
		t.Errorf("Ana's reader language: got %v, want es-MX", it["language"])
	}
}

func TestApplyKeepsCreatedAt(t *testing.T) {
	st, s := newApplyStore(t)
	ids := chat.NewIDs()
	hook, support := ids.New(time.Now()), ids.New(time.Now())
	doc := func(createdAt string) *fixture.Document {
		t.Helper()
		d, err := fixture.Parse([]byte(`{"workspaces": [{"id": "` + demoWorkspace + `", "name": "Acme",
			"outbound_webhooks": [{"id": "` + hook + `", "name": "Audit", "url": "https://example.com/a", "created_at": "` + createdAt + `"}],
			"support_webhooks": [{"id": "` + support + `", "name": "Help", "url": "https://example.com/h", "created_at": "` + createdAt + `"}]}]}`))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		if err := d.Complete(ids, time.Now()); err != nil {
			t.Fatalf("complete: %v", err)
		}
		return d
	}
	hooks := func() []string {
		t.Helper()
		items := scan(t, st)
		return append(keysWithPrefix(items, "WS#"+demoWorkspace+"|OWH#"), keysWithPrefix(items, "WS#"+demoWorkspace+"|SWH#")...)
	}
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	apply(t, s, doc(""), t1)
	want := []string{
		"WS#" + demoWorkspace + "|OWH#2026-01-02T03:04:05.600000000Z#" + hook,
		"WS#" + demoWorkspace + "|SWH#2026-01-02T03:04:05.600000000Z#" + support,
	}
	if got := hooks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the first apply: got %v, want %v", got, want)
	}
	apply(t, s, doc(""), t1.Add(time.Hour))
	if got := hooks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after re-applying without created_at: got %v, want %v", got, want)
	}
	apply(t, s, doc("2025-06-01T12:00:00+02:00"), t1.Add(2*time.Hour))
	want = []string{
		"WS#" + demoWorkspace + "|OWH#2025-06-01T10:00:00.000000000Z#" + hook,
		"WS#" + demoWorkspace + "|SWH#2025-06-01T10:00:00.000000000Z#" + support,
	}
	if got := hooks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after applying a created_at: got %v, want %v", got, want)
	}
	apply(t, s, doc(""), t1.Add(3*time.Hour))
	if got := hooks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after re-applying without created_at: got %v, want %v", got, want)
	}
}

func TestApplyInvalidDocumentWritesNothing(t *testing.T) {
	st, s := newApplyStore(t)
	for name, d := range map[string]*fixture.Document{
		"not completed": {Workspaces: []fixture.Workspace{{Name: "Acme"}}},
		"invalid": func() *fixture.Document {
			d := demo(t)
			d.Workspaces[0].TemporaryRooms[2].ChannelID = demoAna
			return d
		}(),
	} {
		err := s.Fixture.Apply(context.Background(), d, time.Now())
		if !chat.IsCode(err, chat.EValidation) {
			t.Errorf("%s: got %v, want %s", name, err, chat.EValidation)
		}
	}
	if got := scan(t, st); len(got) != 0 {
		t.Fatalf("got %d items, want an empty table: %v", len(got), keysWithPrefix(got, ""))
	}
}

func TestApplyRefusesToMoveARoom(t *testing.T) {
	st, s := newApplyStore(t)
	d := demo(t)
	apply(t, s, d, time.Now())
	before := scan(t, st, "updated_at")
	d.Workspaces[0].TemporaryRooms[0].ChannelID = demoGeneral
	d.Workspaces[0].Name = "Acme renamed"
	err := s.Fixture.Apply(context.Background(), d, time.Now())
	var fields map[string][]string
	if ce, ok := err.(*chat.Error); ok && ce.Code == chat.EValidation {
		fields = ce.Fields
	}
	if got := fields["workspaces[0].temporary_rooms[0].channel_id"]; len(got) != 1 {
		t.Fatalf("got %v, want a validation error on workspaces[0].temporary_rooms[0].channel_id", err)
	}
	if after := scan(t, st, "updated_at"); !reflect.DeepEqual(after, before) {
		t.Fatalf("a refused apply changed the table")
	}
}

func TestReapplyLeavesGuestsAlone(t *testing.T) {
	st, s := newApplyStore(t)
	d := demo(t)
	apply(t, s, d, time.Now())
	svc := &rooms.Service{Store: s.Rooms, IDs: chat.NewIDs(), Now: time.Now}
	res, err := svc.Join(context.Background(), rooms.JoinRequest{RoomID: demoCall, Nickname: "Guest", PreferredLanguage: "de",
		ClientID: "6f9619ff-8b86-d011-b42d-00cf4fc964ff"})
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	guestItems := func() map[string]map[string]any {
		t.Helper()
		out := map[string]map[string]any{}
		for k, it := range scan(t, st) {
			if strings.Contains(k, "GUEST#") || strings.Contains(k, "CLIENT#") || strings.HasPrefix(k, "GSESSION#") {
				out[k] = it
			}
		}
		return out
	}
	before := guestItems()
	// guest, client id, session and guest reader.
	if got, want := len(before), 4; got != want {
		t.Fatalf("got %d guest items after the join, want %d", got, want)
	}
	apply(t, s, d, time.Now())
	if after := guestItems(); !reflect.DeepEqual(after, before) {
		t.Fatalf("re-applying changed the guest's items:\ngot  %v\nwant %v", after, before)
	}
	if _, ok := before["CHAN#"+demoSupport+"|READER#GUEST#"+res.Guest.ID]; !ok {
		t.Fatalf("missing the guest's reader item in the support channel")
	}
}
