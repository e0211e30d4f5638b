package wsapi

// The Management API's side of the realtime API: API Gateway's @connections
// REST paths of a WebSocket API's stage, as realtime.Sender. In AWS its
// endpoint is https://{api-id}.execute-api.{region}.amazonaws.com/{stage};
// under `chatctl serve` it is the local gateway's (internal/wsgateway),
// which serves the same paths, so the SDK client is the real one.

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"
	"github.com/chatbridge/chat/pkg/realtime"
)

var _ realtime.Sender = (*Client)(nil)

// EnvManagementEndpoint names the Management API endpoint in a function's
// environment.
const EnvManagementEndpoint = "WEBSOCKET_MANAGEMENT_ENDPOINT"

// ManagementEndpoint is the Management API endpoint of stage of WebSocket API apiID.
func ManagementEndpoint(apiID, region, stage string) string {
	return fmt.Sprintf("https://%s.execute-api.%s.amazonaws.com/%s", apiID, region, stage)
}

// Client sends to WebSocket connections.
type Client struct {
	api *apigatewaymanagementapi.Client
}

// NewClient returns a Client on api.
func NewClient(api *apigatewaymanagementapi.Client) *Client { return &Client{api: api} }

// NewClientFromConfig returns a Client for the Management API at endpoint.
func NewClientFromConfig(cfg aws.Config, endpoint string) *Client {
	return NewClient(apigatewaymanagementapi.NewFromConfig(cfg, func(o *apigatewaymanagementapi.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	}))
}

// Send implements realtime.Sender with one PostToConnection. Errors:
// realtime.ErrGone for a gone connection (410 GoneException);
// realtime.ErrThrottled when API Gateway throttled it (429
// LimitExceededException) past the SDK's retries; the SDK's error,
// wrapped, otherwise.
func (c *Client) Send(ctx context.Context, connectionID string, data []byte) error {
	_, err := c.api.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: &connectionID, Data: data})
	return wrap("post to connection "+connectionID, err)
}

// Close implements realtime.Sender with one DeleteConnection; a gone
// connection is not an error.
func (c *Client) Close(ctx context.Context, connectionID string) error {
	_, err := c.api.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: &connectionID})
	if err = wrap("delete connection "+connectionID, err); errors.Is(err, realtime.ErrGone) {
		return nil
	}
	return err
}

// Alive reports whether the connection exists (GetConnection). Errors: the
// SDK's, wrapped, except GoneException, which is false.
func (c *Client) Alive(ctx context.Context, connectionID string) (bool, error) {
	_, err := c.api.GetConnection(ctx, &apigatewaymanagementapi.GetConnectionInput{ConnectionId: &connectionID})
	if err = wrap("get connection "+connectionID, err); errors.Is(err, realtime.ErrGone) {
		return false, nil
	}
	return err == nil, err
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var gone *types.GoneException
	if errors.As(err, &gone) {
		return fmt.Errorf("wsapi: %s: %w", op, realtime.ErrGone)
	}
	var throttled *types.LimitExceededException
	if errors.As(err, &throttled) {
		return fmt.Errorf("wsapi: %s: %w: %w", op, realtime.ErrThrottled, err)
	}
	return fmt.Errorf("wsapi: %s: %w", op, err)
}
