package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chatbridge/chat/internal/storetest"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/fixture"
)

// TestListsPaginateAgainstDynamo pages 27 outbound webhooks by 10 through
// the real handler and store: three pages, every item once, oldest first,
// each page within the two-call budget, no secret in any response.
func TestListsPaginateAgainstDynamo(t *testing.T) {
	w := newWorld(t, 600)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	doc := &fixture.Document{Workspaces: []fixture.Workspace{w.ws}}
	// Created in reverse id order, so that id order and creation order differ.
	for i := 26; i >= 0; i-- {
		doc.Workspaces[0].OutboundWebhooks = append(doc.Workspaces[0].OutboundWebhooks, fixture.OutboundWebhook{
			Name: fmt.Sprintf("hook %02d", i), URL: fmt.Sprintf("https://example.com/hooks/%d", i), Events: []string{"message.created"},
			SigningSecret: fmt.Sprintf("whsig_list_test_secret_%02d", i), CreatedAt: base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	if err := doc.Complete(chat.NewIDs(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := storetest.New(w.app.DB, w.app.Table).Fixture.Apply(context.Background(), doc, time.Now()); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/workspaces/" + w.ws.ID + "/outbound-webhooks"
	auth := map[string]string{"Authorization": "Bearer " + w.token}
	var names []string
	var sizes []int
	next := ""
	for page := 0; page < 5; page++ {
		q := "?limit=10"
		if next != "" {
			q += "&cursor=" + url.QueryEscape(next)
		}
		w.st.Calls.Reset()
		rec := w.do(t, "GET", path+q, "", auth)
		if rec.Code != 200 {
			t.Fatalf("page %d: %d %s", page, rec.Code, rec.Body)
		}
		if n := w.st.Calls.Total(); n > 2 {
			t.Fatalf("page %d made %d AWS calls %v, want at most 2", page, n, w.st.Calls.Calls())
		}
		if strings.Contains(rec.Body.String(), "whsig_") || strings.Contains(rec.Body.String(), "secret") {
			t.Fatalf("page %d leaks a secret: %s", page, rec.Body)
		}
		var body struct {
			Data []struct {
				Name      string `json:"name"`
				CreatedAt string `json:"created_at"`
			} `json:"data"`
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"meta"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(body.Data))
		for _, d := range body.Data {
			names = append(names, d.Name)
		}
		if body.Meta.NextCursor == nil {
			break
		}
		next = *body.Meta.NextCursor
	}
	if fmt.Sprint(sizes) != "[10 10 7]" {
		t.Fatalf("page sizes %v, want [10 10 7]", sizes)
	}
	for i, n := range names {
		if want := fmt.Sprintf("hook %02d", i); n != want {
			t.Fatalf("item %d is %q, want %q: oldest first, each once", i, n, want)
		}
	}
	// The default page is 25, and a cursor of this list does not open the
	// support list.
	rec := w.do(t, "GET", path, "", auth)
	var def struct {
		Data []any `json:"data"`
		Meta struct {
			Limit      int     `json:"limit"`
			NextCursor *string `json:"next_cursor"`
		} `json:"meta"`
	}
	json.Unmarshal(rec.Body.Bytes(), &def)
	if len(def.Data) != 25 || def.Meta.Limit != 25 || def.Meta.NextCursor == nil {
		t.Fatalf("default page: %d items, limit %d, next %v", len(def.Data), def.Meta.Limit, def.Meta.NextCursor)
	}
	foreign := w.do(t, "GET", "/api/v1/workspaces/"+w.ws.ID+"/support-webhooks?cursor="+url.QueryEscape(*def.Meta.NextCursor), "", auth)
	if foreign.Code != 422 {
		t.Fatalf("another list's cursor: %d, want 422", foreign.Code)
	}
}
