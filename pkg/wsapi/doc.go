// Package wsapi holds the Lambda handlers of the realtime API (contract
// section 12), the WebSocket sibling of package httpapi: the WebSocket
// API's $default route (subscribe, ping) and the push fed by the table's
// stream. Both adapt API Gateway's and DynamoDB's events to package
// realtime. Client is the other direction, the Management API through
// which the service answers, pushes to and closes connections
// (realtime.Sender), which both functions use.
package wsapi
