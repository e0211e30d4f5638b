package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/chatbridge/chat/pkg/httpapi"
)

// Header reads a value as sent, through the real V2 adapter (which splits
// on commas and trims) and locally (which keeps repeated lines apart).
func TestHeaderMeansTheSameInAWSAndLocally(t *testing.T) {
	var got string
	var present bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, present = httpapi.Header(r, "X-Test")
		w.WriteHeader(204)
	})
	lambda := httpapi.Lambda(h)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string
		present bool
	}{
		{"comma and spaces", map[string]string{"x-test": "a, b ,c"}, "a, b ,c", true},
		{"only commas", map[string]string{"x-test": ",,"}, ",,", true},
		{"empty", map[string]string{"x-test": ""}, "", true},
		{"name in another case", map[string]string{"X-TEST": "v,w"}, "v,w", true},
		{"absent", map[string]string{"x-other": "a,b"}, "", false},
	} {
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/", Headers: tc.headers,
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/"}}}
		got, present = "", false
		if _, err := lambda(context.Background(), ev); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want || present != tc.present {
			t.Errorf("%s through the adapter: got %q %v, want %q %v", tc.name, got, present, tc.want, tc.present)
		}
	}
	for _, tc := range []struct {
		name    string
		values  []string
		want    string
		present bool
	}{
		{"one value with commas", []string{"a, b ,c"}, "a, b ,c", true},
		{"two lines, joined as API Gateway joins them", []string{"a", "b"}, "a,b", true},
		{"absent", nil, "", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		for _, v := range tc.values {
			r.Header.Add("X-Test", v)
		}
		got, present = "", false
		h.ServeHTTP(httptest.NewRecorder(), r)
		if got != tc.want || present != tc.present {
			t.Errorf("%s locally: got %q %v, want %q %v", tc.name, got, present, tc.want, tc.present)
		}
	}
}
