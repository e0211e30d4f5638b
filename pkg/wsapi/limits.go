package wsapi

// MaxRequestBytes is the largest client message the route takes: 32 KiB,
// one API Gateway WebSocket frame, far more than a subscribe needs. API
// Gateway itself takes messages of up to 128 KB (several frames) and
// closes the connection past that (1009) without invoking the route, so a
// message between the two reaches the route and gets
// {"type":"error","code":"payload_too_large"} before the close; the local
// gateway (internal/wsgateway) reads 128 KB likewise.
const MaxRequestBytes = 32 * 1024
