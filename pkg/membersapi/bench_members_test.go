package membersapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/cursor"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/members"
	"github.com/chatbridge/chat/pkg/membersapi"
	"github.com/chatbridge/chat/pkg/membersapi/channelmessages"
	"github.com/chatbridge/chat/pkg/messageview"
	"github.com/chatbridge/chat/pkg/rooms"
	"github.com/chatbridge/chat/pkg/roomsapi"
	"github.com/chatbridge/chat/pkg/workspaces"
)

// The members' and rooms' hot paths, on hand-written in-memory fakes.

const (
	benchWS      = "01JD9N0V80G9T6DXN5EAY6K8H4"
	benchChannel = "01JD9N1048PXK951NGC7NEMZX9"
	benchToken   = "wsk_bench_member_token_0123"
)

type benchTokens struct{}

func (benchTokens) APIToken(_ context.Context, hash string) (workspaces.APIToken, error) {
	return workspaces.APIToken{Hash: hash, WorkspaceID: benchWS, UserID: "01JD9N0X6GD9MV02DG9EVV9WM2", Name: "Ben",
		Role: chat.RoleMember, PreferredLanguage: "en-US", Channels: []string{"01JD9N0Z50BAKDWE0FBRMSFD5P", benchChannel}}, nil
}

// benchStore keeps messages, key records and rooms in maps.
type benchStore struct {
	mu    sync.Mutex
	msgs  []chat.Message
	keys  map[string]*members.KeyRecord
	rooms map[string]rooms.ManagedRoom
}

func (s *benchStore) PostMemberMessage(_ context.Context, m chat.Message, key *members.KeyRecord, now time.Time) (*members.KeyRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if key != nil {
		if held, ok := s.keys[key.UserID+key.KeyHash]; ok && held.ExpiresAt.After(now) {
			return held, nil
		}
		s.keys[key.UserID+key.KeyHash] = key
	}
	s.msgs = append(s.msgs, m)
	return nil, nil
}

// ListMessages returns the first limit messages, each with its position,
// as the store's page does: the list writes the cursor after the last item
// it shows.
func (s *benchStore) ListMessages(_ context.Context, _, _ string, limit int) (chat.Page[chat.Message], error) {
	items := s.msgs[:min(limit, len(s.msgs))]
	after := make([]string, len(items))
	for i, m := range items {
		after[i] = "MSG#" + m.ID
	}
	return chat.Page[chat.Message]{Items: items, After: after, Next: "MSG#x"}, nil
}

func (s *benchStore) Translations(_ context.Context, ids, langs []string) (map[string]map[string]chat.Translation, error) {
	out := make(map[string]map[string]chat.Translation, len(ids))
	for i, id := range ids {
		out[id] = map[string]chat.Translation{langs[i]: {MessageID: id, Language: langs[i], Content: "Translated text of the message"}}
	}
	return out, nil
}

func (s *benchStore) MemberChannels(context.Context, string, string, string, int) (chat.Page[members.Channel], error) {
	return chat.Page[members.Channel]{}, nil
}

func (s *benchStore) CreateRoom(_ context.Context, r rooms.ManagedRoom) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rooms[r.ID] = r
	return nil
}

func (s *benchStore) Rooms(context.Context, string, string, int) (chat.Page[rooms.ManagedRoom], error) {
	return chat.Page[rooms.ManagedRoom]{}, nil
}

func (s *benchStore) ManagedRoom(_ context.Context, id string) (rooms.ManagedRoom, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rooms[id], nil
}

func (s *benchStore) CloseRoom(context.Context, rooms.ManagedRoom) error { return nil }

func membersBench() (http.Handler, *benchStore) {
	st := &benchStore{keys: map[string]*members.KeyRecord{}, rooms: map[string]rooms.ManagedRoom{}}
	auth := &workspaces.Authenticator{Tokens: benchTokens{}}
	svc := &members.Service{Channels: st, Messages: st, Posts: st, IDs: chat.NewIDs(), Now: time.Now}
	mgr := &rooms.Manager{Store: st, IDs: chat.NewIDs(), Now: time.Now}
	codec, _ := cursor.New([]byte("bench-cursor-key-0123456789abcdef"))
	return httpapi.Mux(map[string]http.Handler{
		"ListChannelMessagesFunction": channelmessages.ChannelMessagesHandler(auth, svc, codec, messageview.Renderer{}),
		"PostChannelMessageFunction":  membersapi.PostChannelMessageHandler(auth, svc, messageview.Renderer{}),
		"CreateRoomFunction":          roomsapi.CreateRoomHandler(auth, mgr, time.Now),
		"CloseRoomFunction":           roomsapi.CloseRoomHandler(auth, mgr, time.Now),
	}), st
}

func serveBench(b *testing.B, h http.Handler, method, path string, body []byte, key string, want int) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+benchToken)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: status %d, want %d: %s", method, path, rec.Code, want, rec.Body)
	}
	return rec
}

// BenchmarkMemberPostWithKey is a member's keyed post: auth, membership,
// body, fingerprint, store, view.
func BenchmarkMemberPostWithKey(b *testing.B) {
	h, _ := membersBench()
	body := []byte(`{"content":"Hi Ana, let me check your order.","skip_translation":false}`)
	path := "/api/v1/workspaces/" + benchWS + "/channels/" + benchChannel + "/messages"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		serveBench(b, h, http.MethodPost, path, body, "reply-"+strconv.Itoa(i), http.StatusCreated)
	}
}

// BenchmarkMemberMessagesPage is a page of 25 messages, each translated for
// the member.
func BenchmarkMemberMessagesPage(b *testing.B) {
	h, st := membersBench()
	now := time.Now()
	ids := chat.NewIDs()
	for i := 0; i < 25; i++ {
		st.msgs = append(st.msgs, chat.Message{ID: ids.New(now), WorkspaceID: benchWS, ChannelID: benchChannel,
			Author: chat.Author{Type: chat.AuthorGuest, ID: ids.New(now), Name: "Ana"}, Content: "Hola, necesito ayuda con mi pedido",
			SourceLanguage: "es-ES", CreatedAt: now, TranslatedLanguages: []string{"en", "fr"}})
	}
	path := "/api/v1/workspaces/" + benchWS + "/channels/" + benchChannel + "/messages?limit=25"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		serveBench(b, h, http.MethodGet, path, nil, "", http.StatusOK)
	}
}

// BenchmarkCreateAndCloseRoom opens a room and closes it.
func BenchmarkCreateAndCloseRoom(b *testing.B) {
	h, st := membersBench()
	body := []byte(`{"channel_id":"` + benchChannel + `","name":"Order help","expires_at":"` + chat.FormatTime(time.Now().Add(time.Hour)) + `"}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		serveBench(b, h, http.MethodPost, "/api/v1/workspaces/"+benchWS+"/rooms", body, "", http.StatusCreated)
		var id string
		st.mu.Lock()
		for k := range st.rooms {
			id = k
		}
		clear(st.rooms)
		st.mu.Unlock()
		st.rooms[id] = rooms.ManagedRoom{Room: chat.Room{ID: id, WorkspaceID: benchWS, ChannelID: benchChannel, Status: chat.RoomActive, ExpiresAt: time.Now().Add(time.Hour)}}
		serveBench(b, h, http.MethodPost, "/api/v1/workspaces/"+benchWS+"/rooms/"+id+"/close", nil, "", http.StatusOK)
	}
}

// ThreadRoot finds no thread: the tests of this file post roots.
func (s *benchStore) ThreadRoot(context.Context, string, string) (string, error) {
	return "", chat.FieldError("thread_id", "unknown thread")
}
