// Command edit-guest-message is EditGuestMessageFunction:
// PATCH /api/v1/external/rooms/{room_id}/messages/{message_id} (a guest's edit).
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "EditGuestMessageFunction"
