package deliverystore

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/chatbridge/chat/pkg/delivery"
	"github.com/chatbridge/chat/pkg/dynamo"
	"github.com/chatbridge/chat/pkg/events"
)

// IndexFailedDeliveries puts in FailedDeliveryIndex the failed delivery
// records written before it existed (status failed, no failed_id; never a
// webhook.test), so that a recovery finds them: a Scan of the table, and
// per such record one UpdateItem on condition that it is still failed and
// still unindexed (an attempt that took it up meanwhile wins). It returns
// how many it indexed. chatctl index-failed-deliveries runs it once, when
// the index is deployed; running it again indexes nothing twice.
// Errors: EUnavailable.
func (s *Store) IndexFailedDeliveries(ctx context.Context) (int, error) {
	names := map[string]string{"#st": "status", "#fid": attrFailedID, "#et": "event_type"}
	in := &dynamodb.ScanInput{TableName: &s.Name,
		FilterExpression:         aws.String("begins_with(pk, :dlv) AND #st = :failed AND attribute_not_exists(#fid) AND #et <> :test"),
		ProjectionExpression:     aws.String("pk, sk, id"),
		ExpressionAttributeNames: names,
		ExpressionAttributeValues: map[string]types.AttributeValue{":dlv": dynamo.Str(dynamo.DeliveryPrefix),
			":failed": dynamo.Str(delivery.StatusFailed), ":test": dynamo.Str(events.WebhookTest)}}
	n := 0
	for {
		page, err := s.Client.Scan(ctx, in)
		if err != nil {
			return n, dynamo.Fail("scan failed deliveries", err)
		}
		for _, it := range page.Items {
			id := dynamo.GetS(it, "id")
			if id == "" {
				continue
			}
			_, err := s.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.Name,
				Key:                      map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]},
				UpdateExpression:         aws.String("SET #fid = :id"),
				ConditionExpression:      aws.String("#st = :failed AND attribute_not_exists(#fid) AND #et <> :test"),
				ExpressionAttributeNames: names,
				ExpressionAttributeValues: map[string]types.AttributeValue{":id": dynamo.Str(id),
					":failed": dynamo.Str(delivery.StatusFailed), ":test": dynamo.Str(events.WebhookTest)}})
			var ccf *types.ConditionalCheckFailedException
			switch {
			case errors.As(err, &ccf):
			case err != nil:
				return n, dynamo.Fail("index failed delivery "+id, err)
			default:
				n++
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return n, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
