// Command guest-page is GuestPageFunction: GET /rooms/{room_id}, the guest
// page, and GET /assets/{file}, its script and stylesheet. It needs no
// table and links no AWS SDK client.
package main

import (
	"github.com/chatbridge/chat/pkg/guestpage"
	"github.com/chatbridge/chat/pkg/httpapi"
)

func main() { httpapi.RunPlain(httpapi.GuestPageFunction, guestpage.Handler()) }
