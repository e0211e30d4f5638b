package guestpage

import (
	"net/http"
	"os"
)

// EnvRealtimeURL names the realtime API's URL (wss://...) in the guest
// page function's environment; unset, the page connects to its own
// origin's /realtime (chatctl serve).
const EnvRealtimeURL = "REALTIME_URL"

// Handler is GuestPageFunction's handler, on the environment's
// REALTIME_URL. The page needs no table and no AWS client.
func Handler() http.Handler {
	return GuestPageHandler(os.Getenv(EnvRealtimeURL))
}
