package amazontranslate

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/translate"
)

// ReadOnlyBodies is a translate.Options function (translate.NewFromConfig(cfg,
// amazontranslate.ReadOnlyBodies)) that keeps a finished call from breaking
// the connection its answer is still being read from.
//
// The SDK wraps each request body in a reader that it closes as soon as the
// response's headers arrive, and whose WriteTo answers io.EOF once closed.
// net/http, after sending a body of known length straight to the socket,
// drains the body once more to check its length; when that drain reaches
// the closed reader's WriteTo, the io.EOF counts as a write error and the
// transport closes the connection under the SDK's deserializer ("read tcp
// ...: use of closed network connection"). Every request over the
// transport's 4 KiB buffer (a translation piece is up to 10,000 bytes) is
// exposed. Hiding WriteTo makes the drain use Read, which a closed reader
// answers with a plain end of body.
func ReadOnlyBodies(o *translate.Options) {
	if o.HTTPClient != nil {
		o.HTTPClient = readOnlyBodies{o.HTTPClient}
	}
}

type readOnlyBodies struct{ client translate.HTTPClient }

func (c readOnlyBodies) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r = r.WithContext(r.Context()) // a shallow copy: the caller's request stays as it was
		r.Body = readCloser{r.Body}
	}
	return c.client.Do(r)
}

// readCloser exposes only Read and Close of its body.
type readCloser struct{ body io.ReadCloser }

func (b readCloser) Read(p []byte) (int, error) { return b.body.Read(p) }
func (b readCloser) Close() error               { return b.body.Close() }
