package webhooks_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/jsonbody"
	"github.com/chatbridge/chat/pkg/netguard"
	"github.com/chatbridge/chat/pkg/webhooks"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// fakeStore is a webhooks.Store of function fields; nil ones fail the test
// by panicking.
type fakeStore struct {
	webhooks.Store
	create func(w webhooks.Webhook, ev webhooks.AuditEvent) error
	update func(old, next webhooks.Webhook, ev webhooks.AuditEvent) error
}

func (f fakeStore) Create(_ context.Context, w webhooks.Webhook, ev webhooks.AuditEvent) error {
	return f.create(w, ev)
}

func (f fakeStore) Update(_ context.Context, old, next webhooks.Webhook, ev webhooks.AuditEvent) error {
	return f.update(old, next, ev)
}

const chanID = "01JD9N0Z50BAKDWE0FBRMSFD5P"

var admin = workspaces.Principal{WorkspaceID: "01JD9N0V80G9T6DXN5EAY6K8H4", UserID: "01JD9N0W78H8Z7XT23BWPJKAFM", Role: workspaces.RoleAdmin}

func TestCreateValidation(t *testing.T) {
	local, _ := netguard.ParseAllow("127.0.0.0/8")
	long := func(n int) string { return strings.Repeat("é", n) }
	for _, tc := range []struct {
		name  string
		kind  webhooks.Kind
		body  string
		field string // "" = valid
	}{
		{"inbound minimal", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"CI"}`, ""},
		{"inbound 80 chars", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"` + long(80) + `"}`, ""},
		{"inbound emoji", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"🤖 bot"}`, ""},
		{"inbound 81 chars", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"` + long(81) + `"}`, "bot_name"},
		{"inbound 40000 chars", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"` + strings.Repeat("<", 40000) + `"}`, "bot_name"},
		{"inbound U+2028", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"a\u2028b"}`, "bot_name"},
		{"inbound U+FFFF", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"a\uffffb"}`, "bot_name"},
		{"inbound blank name", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"   "}`, "bot_name"},
		{"inbound name number", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":5}`, "bot_name"},
		{"inbound no channel", webhooks.Inbound, `{"bot_name":"CI"}`, "channel_id"},
		{"inbound bad channel", webhooks.Inbound, `{"channel_id":"CHAN#x","bot_name":"CI"}`, "channel_id"},
		{"inbound http avatar", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"CI","bot_avatar_url":"http://a.example.invalid/a.png"}`, "bot_avatar_url"},
		{"inbound null avatar", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"CI","bot_avatar_url":null}`, ""},
		{"inbound string bool", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"CI","signature_required":"true"}`, "signature_required"},
		{"inbound enabled number", webhooks.Inbound, `{"channel_id":"` + chanID + `","bot_name":"CI","enabled":1}`, "enabled"},
		{"outbound minimal", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/","events":["message.created"]}`, ""},
		{"outbound every event", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/","events":["message.created","message.translated","room.created","room.guest_joined","room.closed"]}`, ""},
		{"outbound room.message_created (support only)", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/","events":["message.created","room.message_created"]}`, "events"},
		{"outbound no events", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/"}`, "events"},
		{"outbound empty events", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/","events":[]}`, "events"},
		{"outbound unknown event", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/","events":["message.exploded"]}`, "events"},
		{"outbound duplicate event", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/","events":["room.closed","room.closed"]}`, "events"},
		{"outbound events string", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/","events":"room.closed"}`, "events"},
		{"outbound 101 name", webhooks.Outbound, `{"name":"` + long(101) + `","url":"https://a.example.invalid/","events":["room.closed"]}`, "name"},
		{"outbound metadata ip", webhooks.Outbound, `{"name":"a","url":"https://169.254.169.254/","events":["room.closed"]}`, "url"},
		{"outbound hex metadata ip", webhooks.Outbound, `{"name":"a","url":"https://0xa9fea9fe/","events":["room.closed"]}`, "url"},
		{"outbound private ip", webhooks.Outbound, `{"name":"a","url":"https://[::ffff:10.0.0.1]/","events":["room.closed"]}`, "url"},
		{"outbound unicode url", webhooks.Outbound, `{"name":"a","url":"https://a.example.invalid/\u2028","events":["room.closed"]}`, "url"},
		{"support minimal", webhooks.Support, `{"name":"a","url":"https://a.example.invalid/"}`, ""},
		{"support http", webhooks.Support, `{"name":"a","url":"http://a.example.invalid/"}`, "url"},
		{"support http allowed", webhooks.Support, `{"name":"a","url":"http://127.0.0.1:9000/"}`, ""},
		{"support userinfo", webhooks.Support, `{"name":"a","url":"https://u:p@a.example.invalid/"}`, "url"},
		{"support active string", webhooks.Support, `{"name":"a","url":"https://a.example.invalid/","active":"yes"}`, "active"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stored *webhooks.Webhook
			s := &webhooks.Service{IDs: chat.NewIDs(), Now: time.Now, Allow: local, Store: fakeStore{create: func(w webhooks.Webhook, ev webhooks.AuditEvent) error {
				stored = &w
				if ev.Action != webhooks.ActionCreated || ev.TargetID != w.ID || ev.ActorID != admin.UserID {
					t.Fatalf("audit event %+v", ev)
				}
				return nil
			}}}
			obj, err := jsonbody.ParseObject([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_, sec, err := s.Create(context.Background(), admin, tc.kind, obj)
			if tc.field == "" {
				if err != nil || stored == nil || sec.SigningSecret == "" || (tc.kind == webhooks.Inbound) != (sec.Secret != "") {
					t.Fatalf("got %v, want a stored webhook and its secrets", err)
				}
				if stored.Kind == webhooks.Inbound && (stored.SecretHash == sec.Secret || stored.SecretHash != chat.HashToken(sec.Secret)) {
					t.Fatal("the static secret is not stored as its hash")
				}
				return
			}
			var ce *chat.Error
			if e, ok := err.(*chat.Error); ok {
				ce = e
			}
			if ce == nil || ce.Code != chat.EValidation || len(ce.Fields[tc.field]) == 0 || ce.Message != ce.Fields[ce.FieldOrder[0]][0] {
				t.Fatalf("got %v, want a 422 on %s", err, tc.field)
			}
			if stored != nil {
				t.Fatal("an invalid webhook was stored")
			}
		})
	}
	member := admin
	member.Role = workspaces.RoleMember
	obj, _ := jsonbody.ParseObject([]byte(`{}`))
	if _, _, err := (&webhooks.Service{Now: time.Now}).Create(context.Background(), member, webhooks.Support, obj); !chat.IsCode(err, chat.EForbidden) {
		t.Fatalf("member create: %v, want forbidden", err)
	}
}

func TestPatchSemantics(t *testing.T) {
	old := webhooks.Webhook{Kind: webhooks.Inbound, ID: "01JD9N1418BBS5R9EJ3SKBVPMA", WorkspaceID: admin.WorkspaceID, ChannelID: chanID,
		BotName: "CI", BotAvatarURL: "https://a.example.invalid/a.png", Enabled: true}
	for _, tc := range []struct {
		body    string
		changes string // "" = no write
		field   string
	}{
		{`{}`, "", ""},
		{`{"bot_name":"CI","unknown":[1]}`, "", ""},
		{`{"bot_name":"CD"}`, "bot_name", ""},
		{`{"bot_avatar_url":null,"enabled":false}`, "bot_avatar_url,enabled", ""},
		{`{"bot_name":null}`, "", "bot_name"},
		{`{"enabled":null}`, "", "enabled"},
		{`{"channel_id":null}`, "", "channel_id"},
		{`{"signature_required":"false"}`, "", "signature_required"},
	} {
		var got *webhooks.AuditEvent
		s := &webhooks.Service{IDs: chat.NewIDs(), Now: time.Now, Store: fakeStore{update: func(_, _ webhooks.Webhook, ev webhooks.AuditEvent) error {
			got = &ev
			return nil
		}}}
		obj, _ := jsonbody.ParseObject([]byte(tc.body))
		_, err := s.Change(context.Background(), admin, old, obj)
		switch {
		case tc.field != "":
			if e, ok := err.(*chat.Error); !ok || len(e.Fields[tc.field]) == 0 || got != nil {
				t.Errorf("%s: %v, want a 422 on %s and no write", tc.body, err, tc.field)
			}
		case tc.changes == "":
			if err != nil || got != nil {
				t.Errorf("%s: %v %+v, want no write", tc.body, err, got)
			}
		default:
			if err != nil || got == nil || strings.Join(got.Changes, ",") != tc.changes {
				t.Errorf("%s: %v %+v, want changes %s", tc.body, err, got, tc.changes)
			}
		}
	}
}
