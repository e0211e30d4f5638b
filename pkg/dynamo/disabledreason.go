package dynamo

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// DisabledRead is the disabled_reason the delivery function writes on an
// outbound or support webhook's twins (Disable). It is read beside the
// item's own fields and never written by management, which only removes it
// when an admin changes active (Update).
type DisabledRead struct {
	DisabledReason string `dynamodbav:"disabled_reason"`
}

// Reason is the reason shown: none while the webhook is active.
func (d DisabledRead) Reason(active bool) string {
	if active {
		return ""
	}
	return d.DisabledReason
}

// outboundRead and supportRead are the listed items as lists read them.
type (
	OutboundRead struct {
		OutboundItem
		DisabledRead
	}
	SupportRead struct {
		SupportItem
		DisabledRead
	}
)

// DisabledReason is disabledRead.reason of a raw item.
func DisabledReason(active bool, av map[string]types.AttributeValue) string {
	return DisabledRead{DisabledReason: GetS(av, AttrDisabledReason)}.Reason(active)
}
