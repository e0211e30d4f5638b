package awsenv

// The SDK configuration a function runs with, built from its environment
// alone. config.LoadDefaultConfig would resolve the same values in Lambda,
// but it links the whole credential chain (SSO, SSO OIDC, sign-in, STS, IMDS
// and the shared-file parser), whose package initialisers alone cost a
// quarter of a cold init (docs/performance.md), for sources a Lambda
// function never has. An administrator's configuration, with profiles and
// SSO, is chatctl's (cmd/chatctl), which no function links.

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/smithy-go/middleware"
)

// The environment variables Load reads, as Lambda sets them (and as the
// SDK's own loader names them).
const (
	EnvDefaultRegion      = "AWS_DEFAULT_REGION"
	EnvAccessKeyID        = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey    = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken       = "AWS_SESSION_TOKEN"
	EnvContainerCredsURI  = "AWS_CONTAINER_CREDENTIALS_FULL_URI"
	EnvContainerAuthToken = "AWS_CONTAINER_AUTHORIZATION_TOKEN"
	EnvContainerAuthFile  = "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"
)

// localCredentials sign requests to a local endpoint when no credentials
// are set: moto accepts any, and the local stack's IAM check treats an
// unknown access key id as an administrator's.
const localCredentials = "local"

// Load returns the SDK configuration from the environment, traced to X-Ray
// when Lambda runs the daemon (InstrumentXRay):
//   - region: AWS_REGION, else AWS_DEFAULT_REGION; with an endpoint override
//     and neither set, DefaultRegion;
//   - credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with
//     AWS_SESSION_TOKEN), which Lambda gives every function; else the
//     container credentials endpoint AWS_CONTAINER_CREDENTIALS_FULL_URI
//     (loopback or https, its token from AWS_CONTAINER_AUTHORIZATION_TOKEN
//     or _FILE); else, with an endpoint override (a local moto_server),
//     static dummy credentials;
//   - endpoint: AWS_ENDPOINT_URL, for every client.
//
// Anything missing is an error at init, never a failure inside a request.
// Retries are each client's default (standard mode, 3 attempts), as with
// the SDK's loader when AWS_RETRY_MODE and AWS_MAX_ATTEMPTS are unset.
func Load(ctx context.Context) (aws.Config, error) {
	cfg := aws.Config{HTTPClient: awshttp.NewBuildableClient(), APIOptions: append([]func(*middleware.Stack) error(nil), APIOptions...)}
	endpoint := Get(EnvEndpoint, "")
	if endpoint != "" {
		if u, err := url.Parse(endpoint); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return aws.Config{}, fmt.Errorf("awsenv: %s %q is not an http(s) URL", EnvEndpoint, endpoint)
		}
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	cfg.Region = Get(EnvRegion, Get(EnvDefaultRegion, ""))
	if cfg.Region == "" {
		if endpoint == "" {
			return aws.Config{}, fmt.Errorf("awsenv: no region: set %s", EnvRegion)
		}
		cfg.Region = DefaultRegion
	}
	creds, err := credentialsFromEnv(endpoint != "")
	if err != nil {
		return aws.Config{}, err
	}
	cfg.Credentials = creds
	// With Lambda's active tracing, every SDK call becomes a subsegment.
	if err := InstrumentXRay(&cfg); err != nil {
		return aws.Config{}, fmt.Errorf("awsenv: X-Ray daemon: %w", err)
	}
	return cfg, nil
}

// APIOptions are added to every configuration Load builds. No function
// sets any: local tooling and tests do (the test stacks name each call's
// sites for the IAM record, internal/stacktest).
var APIOptions []func(*middleware.Stack) error

// credentialsFromEnv is Load's credentials provider (see Load).
func credentialsFromEnv(local bool) (aws.CredentialsProvider, error) {
	id, secret := os.Getenv(EnvAccessKeyID), os.Getenv(EnvSecretAccessKey)
	switch {
	case id != "" && secret != "":
		return aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, os.Getenv(EnvSessionToken))), nil
	case id != "" || secret != "":
		return nil, fmt.Errorf("awsenv: %s and %s go together: only one is set", EnvAccessKeyID, EnvSecretAccessKey)
	case os.Getenv(EnvContainerCredsURI) != "":
		return containerCredentials(os.Getenv(EnvContainerCredsURI))
	case local:
		return aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(localCredentials, localCredentials, "")), nil
	}
	return nil, fmt.Errorf("awsenv: no credentials: set %s and %s (Lambda sets them), or %s",
		EnvAccessKeyID, EnvSecretAccessKey, EnvContainerCredsURI)
}

// containerExpiryWindow is how long before their expiry container
// credentials are refreshed.
const containerExpiryWindow = 5 * time.Minute

// containerCredentials reads credentials from a container credentials
// endpoint, which must be on loopback or use https (as the SDK requires),
// with the authorization token of the environment or of its file, read
// again at every refresh (the file may be rotated).
func containerCredentials(uri string) (aws.CredentialsProvider, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("awsenv: %s %q is not a URL", EnvContainerCredsURI, uri)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		return nil, fmt.Errorf("awsenv: %s must use https or a loopback host, not %q", EnvContainerCredsURI, u.Host)
	}
	token, file := os.Getenv(EnvContainerAuthToken), os.Getenv(EnvContainerAuthFile)
	return aws.NewCredentialsCache(endpointcreds.New(uri, func(o *endpointcreds.Options) {
		o.AuthorizationToken = token
		if file != "" {
			o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
				b, err := os.ReadFile(file)
				if err != nil {
					return "", fmt.Errorf("awsenv: %s: %w", EnvContainerAuthFile, err)
				}
				return strings.TrimSpace(string(b)), nil
			})
		}
	}), func(o *aws.CredentialsCacheOptions) {
		// Refresh ahead of expiry, so that no request signs with
		// credentials that expire on its way.
		o.ExpiryWindow = containerExpiryWindow
	}), nil
}

// isLoopback reports whether host is localhost or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Loader loads an SDK configuration: Load for functions and local runs,
// an administrator's profile-aware one for chatctl against AWS.
type Loader func(ctx context.Context) (aws.Config, error)

var _ Loader = Load
