package wsgateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/smithy-go"
	"github.com/chatbridge/chat/internal/iampolicy"
)

// TestManagementChecksIAM: with Policies set, a function's Management API
// call that its execute-api grants do not cover answers 403
// AccessDeniedException; one they cover goes on (here to GoneException, the
// connection being unknown), and an administrator's is not checked.
func TestManagementChecksIAM(t *testing.T) {
	set, err := iampolicy.Project()
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{Stage: "live", Policies: set}
	srv := httptest.NewServer(g.Management())
	defer srv.Close()
	as := func(akid string) *apigatewaymanagementapi.Client {
		return apigatewaymanagementapi.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(akid, "local", "")},
			func(o *apigatewaymanagementapi.Options) { o.BaseEndpoint = aws.String(srv.URL + "/live") })
	}
	code := func(err error) string {
		var api smithy.APIError
		if errors.As(err, &api) {
			return api.ErrorCode()
		}
		return ""
	}
	ctx := context.Background()
	id := aws.String("L0SM9cOFvHcCIhw=")
	for _, tc := range []struct {
		who, op string
		call    func(c *apigatewaymanagementapi.Client) error
		want    string
	}{
		{"RealtimePushFunction", "GET", func(c *apigatewaymanagementapi.Client) error {
			_, err := c.GetConnection(ctx, &apigatewaymanagementapi.GetConnectionInput{ConnectionId: id})
			return err
		}, "AccessDeniedException"},
		{"RealtimeFunction", "GET", func(c *apigatewaymanagementapi.Client) error {
			_, err := c.GetConnection(ctx, &apigatewaymanagementapi.GetConnectionInput{ConnectionId: id})
			return err
		}, "GoneException"},
		{"RealtimePushFunction", "POST", func(c *apigatewaymanagementapi.Client) error {
			_, err := c.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: id, Data: []byte("{}")})
			return err
		}, "GoneException"},
		{"TranslateFunction", "POST", func(c *apigatewaymanagementapi.Client) error {
			_, err := c.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: id, Data: []byte("{}")})
			return err
		}, "AccessDeniedException"},
		{"local", "GET", func(c *apigatewaymanagementapi.Client) error {
			_, err := c.GetConnection(ctx, &apigatewaymanagementapi.GetConnectionInput{ConnectionId: id})
			return err
		}, "GoneException"},
	} {
		err := tc.call(as(tc.who))
		if got := code(err); got != tc.want {
			t.Errorf("%s %s: got %q (%v), want %s", tc.who, tc.op, got, err, tc.want)
		}
		var re interface{ HTTPStatusCode() int }
		if tc.want == "AccessDeniedException" && (!errors.As(err, &re) || re.HTTPStatusCode() != http.StatusForbidden) {
			t.Errorf("%s %s: got %v, want HTTP 403", tc.who, tc.op, err)
		}
	}
}
