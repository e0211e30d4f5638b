// Command post-guest-message is PostGuestMessageFunction:
// POST /api/v1/external/rooms/{room_id}/messages.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP(function) }

const function = "PostGuestMessageFunction"
