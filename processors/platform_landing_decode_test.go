package processors

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

func TestDecodePlatformRecordChecksPayloads(t *testing.T) {
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{`{"kind":"lifecycle_event","workspaceId":"w","appId":"a","lifecycleEvent":{"eventKey":"k","type":"RELATIONSHIP_INSTALLED"}}`, true},
		{`{"kind":"lifecycle_event","workspaceId":"w","appId":"a","lifecycleEvent":{"eventKey":"k","type":"USAGE_CHARGE_APPLIED","chargeId":"gid://shopify/AppUsageRecord/1"}}`, true},
		{`{"kind":"lifecycle_event","workspaceId":"w","appId":"a","lifecycleEvent":{"eventKey":"k","type":"USAGE_CHARGE_APPLIED"}}`, false},
		{`{"kind":"lifecycle_event","workspaceId":"w","appId":"a","lifecycleEvent":{"type":"RELATIONSHIP_INSTALLED"}}`, false},
		{`{"kind":"transaction","workspaceId":"w","appId":"a","transaction":{"transactionId":"t"}}`, true},
		{`{"kind":"transaction","workspaceId":"","appId":"a","transaction":{"transactionId":"t"}}`, false},
	} {
		_, err := decodePlatformRecord(&kgo.Record{Topic: schemas.TopicPlatformRecords, Value: []byte(tc.value)})
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, schemas.ErrInvalidMessage)) {
			t.Errorf("%s: %v", tc.value, err)
		}
	}
}
