package roomstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/rooms"
)

var (
	_ rooms.SessionStore = (*Store)(nil)
	_ rooms.PostCounter  = (*Store)(nil)
)

// postRatePK is the partition of a guest's post count in one window.
func postRatePK(guestID string, window time.Time) string {
	return "GRATE#" + guestID + "#" + strconv.FormatInt(window.Unix(), 10)
}

// CountPost implements rooms.PostCounter with one UpdateItem: ADD 1 to the
// window's count on condition that it is below limit, so that concurrent
// posts never pass it and a refused post counts nothing. The item lives a
// day past its window (ttl). Errors: EUnavailable when DynamoDB failed
// after retries.
func (s *Store) CountPost(ctx context.Context, guestID string, window time.Time, limit int) (bool, error) {
	_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &s.Name,
		Key:                      dynamo.Key(postRatePK(guestID, window), dynamo.MetaSK),
		UpdateExpression:         aws.String("ADD #c :one SET #ttl = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#c) OR #c < :limit"),
		ExpressionAttributeNames: map[string]string{"#c": "count", "#ttl": dynamo.AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": dynamo.Num(1), ":limit": dynamo.Num(int64(limit)), ":ttl": dynamo.Num(dynamo.Epoch(window.Add(24 * time.Hour))),
		},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, dynamo.Fail("count post of "+guestID, err)
	}
	return true, nil
}
