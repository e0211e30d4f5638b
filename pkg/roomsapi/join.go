package roomsapi

import (
	"context"
	"net/http"

	"github.com/chatbridge/chat/pkg/awsenv"

	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/httpapi"
	"github.com/chatbridge/chat/pkg/rooms"
)

// Joiner joins a guest to a room.
type Joiner interface {
	Join(ctx context.Context, req rooms.JoinRequest) (rooms.JoinResult, error)
}

type guestView struct {
	ID                string `json:"id"`
	Nickname          string `json:"nickname"`
	PreferredLanguage string `json:"preferred_language"`
}

type sessionView struct {
	Token     string `json:"token"`
	TokenType string `json:"token_type"`
	Header    string `json:"header"`
	ExpiresAt string `json:"expires_at"`
}

type roomView struct {
	RoomID      string `json:"room_id"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	ExpiresAt   string `json:"expires_at"`
}

type joinResponse struct {
	Data struct {
		Guest   guestView   `json:"guest"`
		Session sessionView `json:"session"`
		Room    roomView    `json:"room"`
	} `json:"data"`
}

// JoinHandler serves POST /api/v1/external/rooms/{room_id}/guests
// (contract section 2): 201 for a new guest, 200 for a re-join with the
// same client_id.
func JoinHandler(j Joiner, m awsenv.MetricRecorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		obj, _, err := httpapi.ReadObject(r)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req, err := decodeJoin(obj)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		req.RoomID = r.PathValue("room_id")
		res, err := j.Join(r.Context(), req)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var out joinResponse
		out.Data.Guest = guestView{ID: res.Guest.ID, Nickname: res.Guest.Nickname, PreferredLanguage: res.Guest.PreferredLanguage}
		out.Data.Session = sessionView{Token: res.Token, TokenType: "guest", Header: httpapi.GuestTokenHeader, ExpiresAt: chat.FormatTime(res.SessionExpires)}
		rm := res.Room
		out.Data.Room = roomView{RoomID: rm.ID, WorkspaceID: rm.WorkspaceID, ChannelID: rm.ChannelID, Name: rm.Name, Status: rm.Status, ExpiresAt: chat.FormatTime(rm.ExpiresAt)}
		status := http.StatusCreated
		if res.Rejoined {
			status = http.StatusOK
		}
		awsenv.RecordMetrics(r.Context(), m, awsenv.Metric{Name: "GuestJoins", Unit: awsenv.UnitCount, Value: 1})
		w.Header().Set("Cache-Control", "no-store")
		httpapi.JSON(w, status, out)
	})
}

func decodeJoin(obj httpapi.Object) (rooms.JoinRequest, error) {
	var v chat.Validation
	var req rooms.JoinRequest
	nick, ok := obj.String(&v, "nickname", "nickname")
	if !ok && !v.Has("nickname") {
		v.Add("nickname", "The nickname field is required.")
	} else if ok {
		n, problem := rooms.NormalizeNickname(nick)
		if problem != "" {
			v.Add("nickname", problem)
		}
		req.Nickname = n
	}
	lang, ok := obj.String(&v, "preferred_language", "preferred language")
	switch {
	case !ok && !v.Has("preferred_language"):
		v.Add("preferred_language", "The preferred language field is required.")
	case ok && lang == "":
		v.Add("preferred_language", "The preferred language field is required.")
	case ok && !chat.ValidLanguageTag(lang):
		v.Add("preferred_language", "The preferred language field must be a valid language tag.")
	}
	req.PreferredLanguage = lang
	if cid, ok := obj.String(&v, "client_id", "client id"); ok {
		if !rooms.ValidClientID(cid) {
			v.Add("client_id", "The client id field must be a valid UUID.")
		}
		req.ClientID = cid
	}
	return req, v.Err()
}
