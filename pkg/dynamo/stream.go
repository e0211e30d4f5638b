package dynamo

import (
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/chat"
)

// MessageFromImage returns the message of a stream record's new image, and
// false when the image is not a message item.
func MessageFromImage(image map[string]types.AttributeValue) (chat.Message, bool) {
	if !strings.HasPrefix(GetS(image, AttrSK), MessagePrefix) || !strings.HasPrefix(GetS(image, AttrPK), "CHAN#") {
		return chat.Message{}, false
	}
	var it MessageItem
	if err := attributevalue.UnmarshalMap(image, &it); err != nil || !chat.ValidID(it.ID) {
		return chat.Message{}, false
	}
	return it.Message(), true
}

// FromLambdaImage converts an image of a Lambda DynamoDB stream event into
// the SDK's attribute values.
func FromLambdaImage(image map[string]events.DynamoDBAttributeValue) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(image))
	for k, v := range image {
		out[k] = fromLambda(v)
	}
	return out
}

func fromLambda(v events.DynamoDBAttributeValue) types.AttributeValue {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}
	case events.DataTypeList:
		l := v.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			out[i] = fromLambda(e)
		}
		return &types.AttributeValueMemberL{Value: out}
	case events.DataTypeMap:
		return &types.AttributeValueMemberM{Value: FromLambdaImage(v.Map())}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}

// SeqDigits is the width sequence numbers are padded to in a sort key, so
// that string order is numeric order (they have up to 40 digits).
const SeqDigits = 40

// StreamRecord is one record of the table's stream as the relay reads it:
// what the relay's work depends on, and no more (the old image is not).
type StreamRecord struct {
	// Seq is the record's sequence number.
	Seq       string
	EventName string
	// At is the record's approximate creation time.
	At    time.Time
	Image map[string]types.AttributeValue
	// OldImage is the item before the change (MODIFY, REMOVE).
	OldImage map[string]types.AttributeValue
}

// StreamRecordOf converts a record of a Lambda DynamoDB stream event.
func StreamRecordOf(rec events.DynamoDBEventRecord) StreamRecord {
	return StreamRecord{Seq: rec.Change.SequenceNumber, EventName: rec.EventName,
		At: rec.Change.ApproximateCreationDateTime.Time, Image: FromLambdaImage(rec.Change.NewImage), OldImage: FromLambdaImage(rec.Change.OldImage)}
}
