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

// Subscriber is realtime.Subscriber's one method.
type Subscriber interface {
	Subscribe(ctx context.Context, connectionID string, req realtime.SubscribeRequest) (realtime.Subscribed, error)
}

// Route serves the WebSocket API's $default route. The template declares no
// $connect or $disconnect route (SAM CLI cannot start with one), so every
// message, subscribe included, arrives here; a token never travels in a
// URL.
type Route struct {
	Subscriber Subscriber
	Sender     realtime.Sender
}

// request is a client message.
type request struct {
	Action      string `json:"action"`
	Token       string `json:"token"`
	WorkspaceID string `json:"workspace_id"`
	ChannelID   string `json:"channel_id"`
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
// {"type":"subscribed",...}); {"action":"ping"} answers {"type":"pong"}
// (a client keeps its connection past API Gateway's idle timeout with it).
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
	if len(body) > realtime.MaxMessageBytes {
		h.refuse(ctx, id, chat.EPayloadTooLarge, "The message is too large.")
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
	case "subscribe":
		sub, err := h.Subscriber.Subscribe(ctx, id, realtime.SubscribeRequest{Token: req.Token, WorkspaceID: req.WorkspaceID, ChannelID: req.ChannelID})
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
		c := sub.Connection
		h.send(ctx, id, subscribed{Type: "subscribed", ChannelID: c.ChannelID, RoomID: c.RoomID, WorkspaceID: c.WorkspaceID,
			Language: c.Language, ExpiresAt: chat.FormatTime(c.ExpiresAt)})
	default:
		h.refuse(ctx, id, codeUnknownAction, `The action must be "subscribe" or "ping".`)
	}
	return ok, nil
}

func (h *Route) send(ctx context.Context, id string, v any) {
	b, err := json.Marshal(v)
	if err == nil {
		err = h.Sender.Send(ctx, id, b)
	}
	if err != nil && !errors.Is(err, realtime.ErrGone) {
		slog.WarnContext(ctx, "realtime: answer", "connection", id, "error", err.Error())
	}
}

// refuse answers an error frame, then closes the connection.
func (h *Route) refuse(ctx context.Context, id, code, message string) {
	h.send(ctx, id, errorFrame{Type: "error", Code: code, Message: message})
	if err := h.Sender.Close(ctx, id); err != nil {
		slog.WarnContext(ctx, "realtime: close", "connection", id, "error", err.Error())
	}
}
