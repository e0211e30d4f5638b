package stacktest

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// LambdaImage converts a stream image to the Lambda event's form, through
// the JSON that Lambda delivers.
func LambdaImage(t testing.TB, image map[string]streamtypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	t.Helper()
	var toJSON func(v streamtypes.AttributeValue) any
	toJSON = func(v streamtypes.AttributeValue) any {
		switch v := v.(type) {
		case *streamtypes.AttributeValueMemberS:
			return map[string]any{"S": v.Value}
		case *streamtypes.AttributeValueMemberN:
			return map[string]any{"N": v.Value}
		case *streamtypes.AttributeValueMemberBOOL:
			return map[string]any{"BOOL": v.Value}
		case *streamtypes.AttributeValueMemberSS:
			return map[string]any{"SS": v.Value}
		case *streamtypes.AttributeValueMemberNULL:
			return map[string]any{"NULL": true}
		case *streamtypes.AttributeValueMemberM:
			m := map[string]any{}
			for k, e := range v.Value {
				m[k] = toJSON(e)
			}
			return map[string]any{"M": m}
		}
		t.Fatalf("stream attribute of type %T not converted", v)
		return nil
	}
	m := map[string]any{}
	for k, v := range image {
		m[k] = toJSON(v)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal image: %v", err)
	}
	var out map[string]events.DynamoDBAttributeValue
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("unmarshal image: %v", err)
	}
	return out
}
