// Command delete-guest-message is DeleteGuestMessageFunction:
// DELETE /api/v1/external/rooms/{room_id}/messages/{message_id} (a guest's deletion).
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "DeleteGuestMessageFunction"
