package attempt

import (
	"net/http"
	"strconv"

	"github.com/chatbridge/chat/pkg/signature"
)

// standard is a delivery's Standard Webhooks headers (contract section
// 14): the delivery id, the same timestamp as X-Service-Signature's t, and
// one v1 signature per signing secret.
type standard struct{ id, ts, sig string }

func standardHeaders(secrets [][]byte, id string, t int64, body []byte) standard {
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		sigs = append(sigs, signature.SignStandard(s, id, t, body))
	}
	return standard{id: id, ts: strconv.FormatInt(t, 10), sig: signature.FormatStandard(sigs...)}
}

func (s standard) set(h http.Header) {
	h.Set(signature.StandardHeaderID, s.id)
	h.Set(signature.StandardHeaderTimestamp, s.ts)
	h.Set(signature.StandardHeaderSignature, s.sig)
}
