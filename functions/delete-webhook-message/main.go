// Command delete-webhook-message is DeleteWebhookMessageFunction:
// DELETE /webhooks/{webhook}/messages/{message_id} (an inbound webhook deletes a message it posted).
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "DeleteWebhookMessageFunction"
