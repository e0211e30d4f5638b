// Package realtime is the realtime capability (contract section 12): who may
// subscribe a WebSocket connection to a channel, and what each subscribed
// connection is pushed when a message is stored, when its reader's
// translation lands and when a room closes.
//
// It imports no AWS package. It declares what it consumes as small
// interfaces: package dynamo stores connections (connections.go), and
// package wsapi adapts API Gateway's WebSocket and stream events to it and
// sends to the connections through API Gateway's Management API.
package realtime
