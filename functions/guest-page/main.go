// Command guest-page is GuestPageFunction: GET /rooms/{room_id}, the guest
// page, and GET /assets/{file}, its script and stylesheet.
package main

import "github.com/chatbridge/chat/pkg/app"

func main() { app.RunHTTP("GuestPageFunction") }
