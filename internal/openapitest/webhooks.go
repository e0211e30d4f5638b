package openapitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// ValidateDelivery returns why a delivery the service sent (its request
// headers and raw body) does not match the event catalog, the document's
// webhooks entry named by its X-Service-Event: every required header
// present and matching its schema, and the body matching the event's
// schema. nil when it matches.
func (v *Validator) ValidateDelivery(h http.Header, body []byte) error {
	typ := h.Get("X-Service-Event")
	item := v.doc.Webhooks[typ]
	if item == nil || item.Post == nil {
		return fmt.Errorf("openapitest: event %q is not in the catalog (webhooks)", typ)
	}
	op := item.Post
	for _, ref := range op.Parameters {
		p := ref.Value
		if p.In != openapi3.ParameterInHeader {
			continue
		}
		got := h.Get(p.Name)
		if got == "" {
			if p.Required {
				return fmt.Errorf("openapitest: %s delivery without header %s", typ, p.Name)
			}
			continue
		}
		if p.Schema != nil {
			if err := p.Schema.Value.VisitJSON(got); err != nil {
				return fmt.Errorf("openapitest: %s delivery header %s %q: %w", typ, p.Name, got, err)
			}
		}
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return fmt.Errorf("openapitest: event %q has no JSON body schema", typ)
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("openapitest: %s delivery body is not JSON: %w", typ, err)
	}
	if err := mt.Schema.Value.VisitJSON(doc); err != nil {
		return fmt.Errorf("openapitest: %s delivery body does not match the catalog: %w\nbody %s", typ, err, truncate(body, 2000))
	}
	return nil
}

// EventTypes returns the event types the catalog describes.
func (v *Validator) EventTypes() []string {
	var out []string
	for name := range v.doc.Webhooks {
		out = append(out, name)
	}
	return out
}

// CheckDelivery fails t when a delivery does not match the event catalog.
func CheckDelivery(t testing.TB, h http.Header, body []byte) {
	t.Helper()
	v, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.ValidateDelivery(h, body); err != nil {
		t.Error(err)
	}
}
