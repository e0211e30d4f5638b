package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chatbridge/chat/pkg/httpapi"
)

// named answers 299 with its function's name, so a test can tell which
// handler a request reached.
func named(function string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(299)
		w.Write([]byte(function))
	})
}

// samplePath is rt's path with every {wildcard} filled.
func samplePath(path string) string {
	var b strings.Builder
	for _, seg := range strings.Split(path, "/")[1:] {
		b.WriteString("/")
		if strings.HasPrefix(seg, "{") {
			seg = "v" + strings.Trim(seg, "{}")
		}
		b.WriteString(seg)
	}
	return b.String()
}

type answer struct {
	status       int
	allow, body  string
	location     string
	reachedOwner bool
}

func serve(h http.Handler, method, target string) answer {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return answer{status: rec.Code, allow: rec.Header().Get("Allow"), body: rec.Body.String(), location: rec.Header().Get("Location")}
}

// TestMuxAnswersAsTheWholeTable: a function's mux registers only its own
// routes and builds the rest of the table on first use; every request gets
// from it what the mux of the whole table (every function mounted) gives,
// except that another function's route is that function's 404. The
// fallback's mux (no function) answers every route's request with 404 and
// every other method of a route's path with 405 and Allow.
func TestMuxAnswersAsTheWholeTable(t *testing.T) {
	all := map[string]http.Handler{}
	functions := map[string]bool{}
	for _, rt := range httpapi.Routes {
		all[rt.Function] = named(rt.Function)
		functions[rt.Function] = true
	}
	whole := httpapi.Mux(all)
	var targets []string
	for _, rt := range httpapi.Routes {
		p := samplePath(rt.Path)
		targets = append(targets, p, p+"/", p+"/extra", strings.Replace(p, "/", "//", 2))
	}
	targets = append(targets, "/", "/unknown", "/api/v1", "/api/v1/workspaces/w", "/webhooks", "/assets/")
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"}
	notFound := serve(httpapi.Mux(nil), "GET", "/unknown")
	if notFound.status != 404 || !strings.Contains(notFound.body, "not_found") && !strings.Contains(notFound.body, "not found") {
		t.Fatalf("the 404 is %d %s", notFound.status, notFound.body)
	}
	checked := 0
	for fn := range functions {
		lean := httpapi.Mux(map[string]http.Handler{fn: named(fn)})
		for _, target := range targets {
			for _, m := range methods {
				want := serve(whole, m, target)
				got := serve(lean, m, target)
				if want.status == 299 && want.body != fn {
					// Another function's route: this function's 404.
					want = notFound
				}
				if got != want {
					t.Errorf("%s: %s %s: got %+v, want %+v", fn, m, target, got, want)
				}
				checked++
			}
		}
	}
	fallback := httpapi.Mux(nil)
	for _, rt := range httpapi.Routes {
		p := samplePath(rt.Path)
		if got := serve(fallback, rt.Method, p); got != notFound {
			t.Errorf("fallback: %s %s: %+v, want the 404", rt.Method, p, got)
		}
		// A method the path does not serve.
		wrong := ""
		for _, m := range []string{"PUT", "PATCH", "TRACE"} {
			served := false
			for _, other := range httpapi.Routes {
				served = served || other.Path == rt.Path && other.Method == m
			}
			if !served {
				wrong = m
				break
			}
		}
		got := serve(fallback, wrong, p)
		if got.status != 405 || got.allow == "" || got.allow != serve(whole, wrong, p).allow {
			t.Errorf("fallback: %s %s: %+v, want 405 with the path's methods", wrong, p, got)
		}
	}
	if checked < 40*100 {
		t.Fatalf("checked %d requests", checked)
	}
}

// BenchmarkMuxForOneFunction is what each HTTP function's cold start pays
// for its routes; BenchmarkMuxForEveryFunction what it paid when the whole
// table was registered at once (chatctl serve still does).
func BenchmarkMuxForOneFunction(b *testing.B) {
	h := map[string]http.Handler{"JoinRoomFunction": named("JoinRoomFunction")}
	for b.Loop() {
		httpapi.Mux(h)
	}
}

func BenchmarkMuxForEveryFunction(b *testing.B) {
	h := map[string]http.Handler{}
	for _, rt := range httpapi.Routes {
		h[rt.Function] = named(rt.Function)
	}
	for b.Loop() {
		httpapi.Mux(h)
	}
}
