package awsenv

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// clearAWSEnv unsets every variable Load reads, for the rest of t.
func clearAWSEnv(t *testing.T) {
	for _, name := range []string{EnvEndpoint, EnvRegion, EnvDefaultRegion, EnvAccessKeyID, EnvSecretAccessKey,
		EnvSessionToken, EnvContainerCredsURI, EnvContainerAuthToken, EnvContainerAuthFile, EnvXRayDaemonAddress} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
}

// TestLoadAsLambdaSetsIt: Lambda's region and role credentials (with the
// session token) sign every call; no endpoint is overridden.
func TestLoadAsLambdaSetsIt(t *testing.T) {
	clearAWSEnv(t)
	t.Setenv(EnvRegion, "eu-west-3")
	t.Setenv(EnvAccessKeyID, "ASIAEXAMPLE")
	t.Setenv(EnvSecretAccessKey, "secret")
	t.Setenv(EnvSessionToken, "session")
	cfg, err := Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "eu-west-3" || cfg.BaseEndpoint != nil || cfg.HTTPClient == nil {
		t.Fatalf("region %q, endpoint %v, http client %v", cfg.Region, cfg.BaseEndpoint, cfg.HTTPClient)
	}
	c, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.AccessKeyID != "ASIAEXAMPLE" || c.SecretAccessKey != "secret" || c.SessionToken != "session" {
		t.Fatalf("credentials %+v", c)
	}
}

// TestLoadLocal: with an endpoint and nothing else, the default region and
// dummy credentials; AWS_DEFAULT_REGION counts when AWS_REGION is unset.
func TestLoadLocal(t *testing.T) {
	clearAWSEnv(t)
	t.Setenv(EnvEndpoint, "http://127.0.0.1:5000")
	cfg, err := Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != DefaultRegion || cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:5000" {
		t.Fatalf("region %q endpoint %v", cfg.Region, cfg.BaseEndpoint)
	}
	if c, err := cfg.Credentials.Retrieve(context.Background()); err != nil || c.AccessKeyID != localCredentials {
		t.Fatalf("credentials %+v, %v", c, err)
	}
	t.Setenv(EnvDefaultRegion, "ap-south-1")
	if cfg, err = Load(context.Background()); err != nil || cfg.Region != "ap-south-1" {
		t.Fatalf("region %q, %v", cfg.Region, err)
	}
}

// TestLoadRefusesAtInit: what is missing or malformed fails the function at
// init, naming the variable, rather than inside its first request.
func TestLoadRefusesAtInit(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no region", map[string]string{EnvAccessKeyID: "a", EnvSecretAccessKey: "s"}, EnvRegion},
		{"no credentials", map[string]string{EnvRegion: "us-east-1"}, EnvAccessKeyID},
		{"key id alone", map[string]string{EnvRegion: "us-east-1", EnvAccessKeyID: "a"}, EnvSecretAccessKey},
		{"secret alone", map[string]string{EnvEndpoint: "http://127.0.0.1:1", EnvSecretAccessKey: "s"}, EnvAccessKeyID},
		{"endpoint not a URL", map[string]string{EnvEndpoint: "127.0.0.1:5000"}, EnvEndpoint},
		{"endpoint not http", map[string]string{EnvEndpoint: "ftp://127.0.0.1/"}, EnvEndpoint},
		{"container endpoint off loopback", map[string]string{EnvRegion: "us-east-1", EnvContainerCredsURI: "http://credentials.invalid/creds"}, "loopback"},
		{"container endpoint not a URL", map[string]string{EnvRegion: "us-east-1", EnvContainerCredsURI: "/creds"}, EnvContainerCredsURI},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clearAWSEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			_, err := Load(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want an error naming %s", err, c.want)
			}
		})
	}
}

// TestLoadContainerCredentials: without keys in the environment, the
// container credentials endpoint is asked, with the token of the file read
// at each refresh, and its expiring credentials are refreshed.
func TestLoadContainerCredentials(t *testing.T) {
	clearAWSEnv(t)
	var asked atomic.Int32
	var lastAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := asked.Add(1)
		lastAuth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"AccessKeyId":     "ASIA" + string(rune('0'+n)),
			"SecretAccessKey": "secret",
			"Token":           "token",
			// Within the cache's expiry window: the next Retrieve asks again.
			"Expiration": time.Now().Add(time.Minute).UTC().Format(time.RFC3339),
		})
	}))
	defer srv.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvRegion, "us-east-1")
	t.Setenv(EnvContainerCredsURI, srv.URL+"/creds")
	t.Setenv(EnvContainerAuthFile, tokenFile)
	cfg, err := Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || c.AccessKeyID != "ASIA1" || c.SessionToken != "token" || lastAuth.Load() != "first" {
		t.Fatalf("credentials %+v, %v, authorization %v", c, err, lastAuth.Load())
	}
	if err := os.WriteFile(tokenFile, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = cfg.Credentials.Retrieve(context.Background())
	if err != nil || c.AccessKeyID != "ASIA2" || lastAuth.Load() != "second" {
		t.Fatalf("refreshed credentials %+v, %v, authorization %v", c, err, lastAuth.Load())
	}
}
