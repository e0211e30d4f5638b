package localrun

import (
	"encoding/base64"
	"encoding/json"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// lambdaRecordJSON is a stream record as the Lambda event's JSON, which
// filter patterns match against.
func lambdaRecordJSON(r streamtypes.Record, arn string) map[string]any {
	d := r.Dynamodb
	dyn := map[string]any{
		"SequenceNumber": aws.ToString(d.SequenceNumber), "SizeBytes": aws.ToInt64(d.SizeBytes), "StreamViewType": string(d.StreamViewType),
		"Keys": imageJSON(d.Keys),
	}
	if t := d.ApproximateCreationDateTime; t != nil {
		dyn["ApproximateCreationDateTime"] = float64(t.Unix())
	}
	if d.NewImage != nil {
		dyn["NewImage"] = imageJSON(d.NewImage)
	}
	if d.OldImage != nil {
		dyn["OldImage"] = imageJSON(d.OldImage)
	}
	return map[string]any{
		"eventID": aws.ToString(r.EventID), "eventName": string(r.EventName), "eventVersion": aws.ToString(r.EventVersion),
		"eventSource": "aws:dynamodb", "awsRegion": "us-east-1", "eventSourceARN": arn, "dynamodb": dyn,
	}
}

func lambdaRecord(doc map[string]any) (events.DynamoDBEventRecord, error) {
	var ev events.DynamoDBEventRecord
	b, err := json.Marshal(doc)
	if err == nil {
		err = json.Unmarshal(b, &ev)
	}
	return ev, err
}

func imageJSON(image map[string]streamtypes.AttributeValue) map[string]any {
	m := make(map[string]any, len(image))
	for k, v := range image {
		m[k] = attributeJSON(v)
	}
	return m
}

func attributeJSON(v streamtypes.AttributeValue) any {
	switch v := v.(type) {
	case *streamtypes.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *streamtypes.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *streamtypes.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *streamtypes.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *streamtypes.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *streamtypes.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *streamtypes.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *streamtypes.AttributeValueMemberBS:
		bs := make([]string, len(v.Value))
		for i, b := range v.Value {
			bs[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string]any{"BS": bs}
	case *streamtypes.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = attributeJSON(e)
		}
		return map[string]any{"L": l}
	case *streamtypes.AttributeValueMemberM:
		return map[string]any{"M": imageJSON(v.Value)}
	}
	return map[string]any{"NULL": true}
}
