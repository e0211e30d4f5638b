// Package apigwmanagement adapts API Gateway's Management API (the
// @connections REST paths of a WebSocket API's stage) to realtime.Sender.
// In AWS its endpoint is https://{api-id}.execute-api.{region}.amazonaws.com/{stage};
// under `chatctl serve` it is the local gateway's (internal/wsgateway),
// which serves the same paths, so the SDK client is the real one.
package apigwmanagement
