package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/chat"
	"github.com/chatbridge/chat/pkg/realtime"
)

// Subscriber is realtime.Subscriber's two methods: Subscribe, then, after
// "subscribed" is sent, Ready (the pushes held while a backfill was read).
type Subscriber interface {
	Subscribe(ctx context.Context, connectionID string, req realtime.SubscribeRequest) (realtime.Subscribed, error)
	Ready(ctx context.Context, sub realtime.Subscribed) ([][]byte, error)
}

// Route serves the WebSocket API's $default route. The template declares no
// $connect or $disconnect route (SAM CLI cannot start with one), so every
// message, subscribe included, arrives here; a token never travels in a
// URL.
type Route struct {
	Subscriber Subscriber
	Sender     realtime.Sender
	// Typist relays {"action": "typing"}; nil ignores it.
	Typist Typist
}

// Typist is realtime.Typist's one method.
type Typist interface {
	Signal(ctx context.Context, connectionID string)
}

// request is a client message.
type request struct {
	Action      string `json:"action"`
	Token       string `json:"token"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
	// Since is kept raw to tell a wrong type from a missing field.
	Since json.RawMessage `json:"since"`
}

// Answer frames.
type subscribed struct {
	Type        string `json:"type"`
	ChannelID   string `json:"channel_id"`
	RoomID      string `json:"room_id,omitempty"`
	WorkspaceID string `json:"workspace_id"`
	Language    string `json:"language"`
	ExpiresAt   string `json:"expires_at"`
}

type errorFrame struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Codes of errors the realtime API answers besides the contract's three.
const (
	codeInvalidMessage = "invalid_message"
	codeUnknownAction  = "unknown_action"
)

// Handle answers one message. {"action":"subscribe",...} subscribes (then
// the backfill when it names "since", then {"type":"subscribed",...});
// {"action":"ping"} answers {"type":"pong"} (a client keeps its connection
// past API Gateway's idle timeout with it); {"action":"typing"} is relayed
// to the channel's other readers and never answered (a connection that has
// not subscribed is ignored, not closed: a page may type while it
// reconnects).
// Anything else, and every refused subscribe, is answered
// {"type":"error","code":...} and the connection is closed. It always
// returns 200 to API Gateway: answers go through the Management API.
func (h *Route) Handle(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	ok := events.APIGatewayProxyResponse{StatusCode: http.StatusOK}
	id := ev.RequestContext.ConnectionID
	if ev.RequestContext.EventType != "MESSAGE" {
		return ok, nil
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		h.refuse(ctx, id, codeInvalidMessage, "Messages are JSON text.")
		return ok, nil
	}
	if len(body) > MaxRequestBytes {
		h.refuse(ctx, id, chat.EPayloadTooLarge, "The message is too large: at most 32 KiB.")
		return ok, nil
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		h.refuse(ctx, id, codeInvalidMessage, "The message is not a JSON object.")
		return ok, nil
	}
	switch req.Action {
	case "ping":
		h.send(ctx, id, map[string]string{"type": "pong"})
	case "typing":
		if h.Typist != nil {
			h.Typist.Signal(ctx, id)
		}
	case "subscribe":
		since, valid := sinceOf(req.Since)
		if !valid {
			h.refuse(ctx, id, codeInvalidMessage, `"since" must be the id of a message.`)
			return ok, nil
		}
		sub, err := h.Subscriber.Subscribe(ctx, id, realtime.SubscribeRequest{Token: req.Token, WorkspaceID: req.WorkspaceID, ChannelID: req.ChannelID, Since: since})
		if err != nil {
			code := chat.ErrorCode(err)
			msg := "The subscription was refused."
			var ce *chat.Error
			if errors.As(err, &ce) && chat.Status(code) < 500 {
				msg = ce.Message
			} else {
				slog.ErrorContext(ctx, "realtime: subscribe failed", "code", code, "error", err.Error())
			}
			h.refuse(ctx, id, code, msg)
			return ok, nil
		}
		for _, b := range sub.Backfill {
			h.sendRaw(ctx, id, b)
		}
		c := sub.Connection
		h.send(ctx, id, subscribed{Type: "subscribed", ChannelID: c.ChannelID, RoomID: c.RoomID, WorkspaceID: c.WorkspaceID,
			Language: c.Language, ExpiresAt: chat.FormatTime(c.ExpiresAt)})
		held, err := h.Subscriber.Ready(ctx, sub)
		if err != nil {
			// The held pushes cannot be sent: the client must reconnect.
			slog.ErrorContext(ctx, "realtime: backfill ready failed", "error", err.Error())
			h.refuse(ctx, id, chat.ErrorCode(err), "The subscription failed; subscribe again.")
			return ok, nil
		}
		for _, b := range held {
			h.sendRaw(ctx, id, b)
		}
	default:
		h.refuse(ctx, id, codeUnknownAction, `The action must be "subscribe", "typing" or "ping".`)
	}
	return ok, nil
}

func (h *Route) send(ctx context.Context, id string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.WarnContext(ctx, "realtime: answer", "connection", id, "error", err.Error())
		return
	}
	h.sendRaw(ctx, id, b)
}

func (h *Route) sendRaw(ctx context.Context, id string, b []byte) {
	if err := h.Sender.Send(ctx, id, b); err != nil && !errors.Is(err, realtime.ErrGone) {
		slog.WarnContext(ctx, "realtime: answer", "connection", id, "error", err.Error())
	}
}

// sinceOf reads a subscribe's "since": absent or null is "", a message id
// (a ULID) is itself; anything else is not ok.
func sinceOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil || !chat.ValidID(s) {
		return "", false
	}
	return s, true
}

// refuse answers an error frame, then closes the connection.
func (h *Route) refuse(ctx context.Context, id, code, message string) {
	h.send(ctx, id, errorFrame{Type: "error", Code: code, Message: message})
	if err := h.Sender.Close(ctx, id); err != nil {
		slog.WarnContext(ctx, "realtime: close", "connection", id, "error", err.Error())
	}
}
