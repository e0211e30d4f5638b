package dynamo

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// disabledRead is the disabled_reason the delivery function writes on an
// outbound or support webhook's twins (Disable). It is read beside the
// item's own fields and never written by management, which only removes it
// when an admin changes active (Update).
type disabledRead struct {
	DisabledReason string `dynamodbav:"disabled_reason"`
}

// reason is the reason shown: none while the webhook is active.
func (d disabledRead) reason(active bool) string {
	if active {
		return ""
	}
	return d.DisabledReason
}

// outboundRead and supportRead are the listed items as lists read them.
type (
	outboundRead struct {
		outboundItem
		disabledRead
	}
	supportRead struct {
		supportItem
		disabledRead
	}
)

// disabledReason is disabledRead.reason of a raw item.
func disabledReason(active bool, av map[string]types.AttributeValue) string {
	return disabledRead{DisabledReason: getS(av, attrDisabledReason)}.reason(active)
}
