// Package wsgateway emulates an API Gateway WebSocket API for local runs and
// tests: it accepts WebSocket connections, invokes the Lambda handlers of
// its routes with the events API Gateway sends
// (events.APIGatewayWebsocketProxyRequest: CONNECT, MESSAGE, DISCONNECT,
// with the route key chosen by "$request.body.action"), and serves the
// Management API's @connections REST paths, so the real SDK client
// (pkg/wsapi's Client) sends to and closes its connections. Handlers
// cannot tell it from API Gateway.
//
// It enforces API Gateway's message size (128 KB, both ways: a larger post
// is 413 PayloadTooLargeException, a larger client message closes the
// connection with 1009 without invoking a route; a route's own, smaller
// limit sees everything up to it and can answer), can add a latency to every post
// (PostLatency), and enforces API Gateway's idle timeout and the
// contract's rule that a connection that has not subscribed within 30
// seconds is closed: it sees a connection as subscribed once a
// {"type": "subscribed"} message has been posted to it.
package wsgateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/internal/iampolicy"
	"github.com/coder/websocket"
	"golang.org/x/time/rate"
)

// Handler is a WebSocket route's Lambda handler.
type Handler func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error)

// Limits of API Gateway's WebSocket APIs.
const (
	MaxMessageBytes = 128 * 1024
	IdleTimeout     = 10 * time.Minute
)

// Gateway is one WebSocket API stage.
type Gateway struct {
	// Routes by route key: "$default", and optionally "$connect",
	// "$disconnect" or custom keys (matched on the body's "action").
	Routes map[string]Handler
	// Stage names the stage in events (default "local").
	Stage string
	// SubscribeWithin closes a connection that has not been answered
	// {"type": "subscribed"} by then; zero disables the rule.
	SubscribeWithin time.Duration
	// IdleTimeout closes a connection that sent nothing for that long
	// (default IdleTimeout).
	IdleTimeout time.Duration
	// PostLatency delays every PostToConnection's answer by that much, as
	// the round trip to API Gateway would (tests measure pushes with it).
	// A caller that gives up first (its context ends) gets no answer, and
	// nothing is delivered.
	PostLatency time.Duration
	// PostLimit, when set, is the Management API's request rate: a call
	// past it is answered 429 LimitExceededException, as API Gateway
	// answers past the account's rate (10,000 requests a second by
	// default, shared with the HTTP APIs; tests scale it down).
	PostLimit *rate.Limiter
	// Policies, when set, holds each Management API call signed by a
	// function (access key id = its LogicalId) to that function's
	// execute-api:ManageConnections grants, as API Gateway does.
	Policies *iampolicy.Set
	// Allowed, when set, is told each call Policies allowed, with its
	// connection id as "*" and the sites its client named
	// (iampolicy.SitesHeader): the tests' IAM record.
	Allowed func(function string, req iampolicy.Request, sites []string)

	mu    sync.Mutex
	conns map[string]*conn
}

type conn struct {
	id          string
	ws          *websocket.Conn
	connectedAt time.Time
	sourceIP    string
	userAgent   string
	lastActive  atomic.Int64
	subscribed  atomic.Bool
	cancel      context.CancelFunc
}

// ServeHTTP accepts a WebSocket connection (same-origin browsers only, as
// coder/websocket checks by default) and serves it until it closes.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(MaxMessageBytes)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	c := &conn{id: newConnectionID(), ws: ws, connectedAt: time.Now().UTC(), sourceIP: host, userAgent: r.UserAgent(), cancel: cancel}
	c.lastActive.Store(time.Now().UnixNano())
	g.add(c)
	defer g.remove(c.id)
	domain := r.Host
	if h, ok := g.Routes["$connect"]; ok {
		resp, err := h(ctx, g.event(c, "CONNECT", "$connect", domain, ""))
		if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
			ws.Close(websocket.StatusPolicyViolation, "connection refused")
			return
		}
	}
	go g.watch(ctx, c)
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			break
		}
		c.lastActive.Store(time.Now().UnixNano())
		route := g.route(data)
		body := string(data)
		ev := g.event(c, "MESSAGE", route, domain, body)
		if typ == websocket.MessageBinary {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(data), true
		}
		if _, err := g.Routes[route](ctx, ev); err != nil {
			// API Gateway answers the client an internal server error.
			slog.WarnContext(ctx, "wsgateway: route handler failed", "route", route, "error", err.Error())
			_ = ws.Write(ctx, websocket.MessageText, []byte(`{"message": "Internal server error", "connectionId":"`+c.id+`"}`))
		}
	}
	ws.CloseNow()
	if h, ok := g.Routes["$disconnect"]; ok {
		_, _ = h(context.WithoutCancel(ctx), g.event(c, "DISCONNECT", "$disconnect", domain, ""))
	}
}

// route is the route key for a message: its "action" when a route has that
// key, else $default.
func (g *Gateway) route(body []byte) string {
	var sel struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(body, &sel) == nil && sel.Action != "" && !strings.HasPrefix(sel.Action, "$") {
		if _, ok := g.Routes[sel.Action]; ok {
			return sel.Action
		}
	}
	return "$default"
}

func (g *Gateway) event(c *conn, eventType, route, domain, body string) events.APIGatewayWebsocketProxyRequest {
	now := time.Now()
	stage := g.stage()
	return events.APIGatewayWebsocketProxyRequest{
		Body: body,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			APIID: "local", ConnectionID: c.id, ConnectedAt: c.connectedAt.UnixMilli(), DomainName: domain,
			EventType: eventType, RouteKey: route, Stage: stage, RequestID: newConnectionID(), MessageID: newConnectionID(),
			RequestTimeEpoch: now.UnixMilli(), RequestTime: now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			MessageDirection: "IN", ExtendedRequestID: newConnectionID(),
			Identity: events.APIGatewayRequestIdentity{SourceIP: c.sourceIP, UserAgent: c.userAgent},
		},
	}
}

// watch closes c when it has not subscribed in time or has been idle too
// long.
func (g *Gateway) watch(ctx context.Context, c *conn) {
	idle := g.IdleTimeout
	if idle == 0 {
		idle = IdleTimeout
	}
	tick := time.NewTicker(min(time.Second, idle/4+1))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if g.SubscribeWithin > 0 && !c.subscribed.Load() && time.Since(c.connectedAt) >= g.SubscribeWithin {
			c.ws.Close(websocket.StatusPolicyViolation, "not subscribed within "+g.SubscribeWithin.String())
			return
		}
		if time.Since(time.Unix(0, c.lastActive.Load())) >= idle {
			c.ws.Close(websocket.StatusGoingAway, "idle timeout")
			return
		}
	}
}

func (g *Gateway) stage() string {
	if g.Stage == "" {
		return "local"
	}
	return g.Stage
}

func (g *Gateway) add(c *conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conns == nil {
		g.conns = map[string]*conn{}
	}
	g.conns[c.id] = c
}

func (g *Gateway) remove(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, id)
}

func (g *Gateway) lookup(id string) *conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.conns[id]
}

// Count is the number of open connections.
func (g *Gateway) Count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns)
}

// Management serves the Management API: POST, GET and DELETE
// /<stage>/@connections/{connection_id}, answering a gone connection 410
// with X-Amzn-ErrorType GoneException, a post past 128 KB 413
// PayloadTooLargeException and a call past PostLimit 429
// LimitExceededException, as API Gateway does.
func (g *Gateway) Management() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, rest, ok := strings.Cut(r.URL.EscapedPath(), "/@connections/")
		id, err := url.PathUnescape(rest)
		if !ok || err != nil || id == "" {
			apiError(w, http.StatusNotFound, "NotFoundException", "no such resource")
			return
		}
		if !g.authorized(w, r, id) {
			return
		}
		if g.PostLimit != nil && !g.PostLimit.Allow() {
			apiError(w, http.StatusTooManyRequests, "LimitExceededException", "Rate exceeded")
			return
		}
		c := g.lookup(id)
		if c == nil {
			apiError(w, http.StatusGone, "GoneException", "")
			return
		}
		switch r.Method {
		case http.MethodPost:
			body, err := io.ReadAll(io.LimitReader(r.Body, MaxMessageBytes+1))
			if err != nil {
				apiError(w, http.StatusBadRequest, "BadRequestException", err.Error())
				return
			}
			if g.PostLatency > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(g.PostLatency):
				}
			}
			if len(body) > MaxMessageBytes {
				// API Gateway's answer to a post past its 128 KB message.
				apiError(w, http.StatusRequestEntityTooLarge, "PayloadTooLargeException", "Message too long")
				return
			}
			if bytes.Contains(body, []byte(`"type":"subscribed"`)) {
				c.subscribed.Store(true)
			}
			ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
			defer cancel()
			if err := c.ws.Write(ctx, websocket.MessageText, body); err != nil {
				apiError(w, http.StatusGone, "GoneException", "")
				return
			}
			w.WriteHeader(http.StatusOK)
		case http.MethodDelete:
			// As API Gateway does, answer at once; the closing handshake
			// waits for the client.
			go func() {
				c.ws.Close(websocket.StatusNormalClosure, "")
				c.cancel()
			}()
			g.remove(c.id)
			w.WriteHeader(http.StatusNoContent)
		case http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"connectedAt":  c.connectedAt.Format(time.RFC3339),
				"lastActiveAt": time.Unix(0, c.lastActive.Load()).UTC().Format(time.RFC3339),
				"identity":     map[string]string{"sourceIp": c.sourceIP, "userAgent": c.userAgent},
			})
		default:
			apiError(w, http.StatusMethodNotAllowed, "BadRequestException", "method not allowed")
		}
	})
}

// authorized answers 403 AccessDeniedException, as API Gateway does, and
// returns false when r is a function's call on connection id that its
// policy does not allow.
func (g *Gateway) authorized(w http.ResponseWriter, r *http.Request, id string) bool {
	if g.Policies == nil {
		return true
	}
	function, region, ok := iampolicy.Principal(r.Header.Get("Authorization"))
	if _, known := g.Policies.Functions[function]; !ok || !known {
		return true // an administrator's call
	}
	l := g.Policies.Local
	resource := fmt.Sprintf("arn:%s:execute-api:%s:%s:local/%s/%s/@connections/%s", l.Partition, region, l.Account, g.stage(), r.Method, id)
	if g.Policies.Evaluate(function, iampolicy.Request{Action: "execute-api:ManageConnections", Resource: resource}) == iampolicy.Allow {
		if g.Allowed != nil {
			var sites []string
			if h := r.Header.Get(iampolicy.SitesHeader); h != "" {
				sites = strings.Split(h, ",")
			}
			g.Allowed(function, iampolicy.Request{Action: "execute-api:ManageConnections",
				Resource: strings.TrimSuffix(resource, id) + "*"}, sites)
		}
		return true
	}
	apiError(w, http.StatusForbidden, "AccessDeniedException", fmt.Sprintf("User: arn:%s:sts::%s:assumed-role/%sRole/%s is not authorized to perform: execute-api:ManageConnections on resource: %s",
		l.Partition, l.Account, function, function, resource))
	return false
}

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// newConnectionID is an id shaped like API Gateway's ("L0SM9cOFvHcCIhw="):
// base64 of 10 random bytes.
func newConnectionID() string {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("wsgateway: random: %v", err))
	}
	return base64.StdEncoding.EncodeToString(b)
}
