package health

import (
	"slices"
	"testing"
)

func TestNeedsPerComponent(t *testing.T) {
	for _, tc := range []struct {
		components []string
		want       []string
	}{
		{[]string{"ingest"}, []string{Kafka, Redis}},
		{[]string{"process"}, []string{ClickHouse, Kafka, Redis}},
		{[]string{"query"}, []string{ClickHouse, Redis}},
		{[]string{"upload"}, []string{ClickHouse, Kafka, Redis}},
		// `revtrack all`: every service, as before readiness was per component.
		{[]string{"ingest", "process", "query", "upload"}, []string{ClickHouse, Kafka, Redis}},
		{[]string{"ingest", "query"}, []string{ClickHouse, Kafka, Redis}},
	} {
		got, err := Needs(tc.components...)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Needs(%v) = %v, %v; want %v", tc.components, got, err, tc.want)
		}
	}
}

func TestNeedsRefusesAnUndeclaredComponent(t *testing.T) {
	if _, err := Needs("ingest", "reports"); err == nil {
		t.Fatal("an undeclared component got readiness needs")
	}
}
