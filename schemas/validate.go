package schemas

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// ErrInvalidMessage marks a message that decoded but breaks its topic's contract. Consumers send such
// records to the dead-letter topic instead of retrying them.
var ErrInvalidMessage = errors.New("invalid message")

var currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidMessage, fmt.Sprintf(format, a...))
}

func required(fields map[string]string) error {
	for name, v := range fields {
		if v == "" {
			return invalid("%s is required", name)
		}
	}
	return nil
}

// Validate checks the contract that the JSON schema states, in Go, for the consume path, and the
// event-time rule (event_time.go).
func (e ServerEvent) Validate() error {
	if err := required(map[string]string{"eventId": e.EventID, "sourceId": e.SourceID, "workspaceId": e.WorkspaceID, "appId": e.AppID}); err != nil {
		return err
	}
	if !slices.Contains(ServerEventNames, e.Name) {
		return invalid("name %q is not a server event name", e.Name)
	}
	if e.AmountCents != nil && *e.AmountCents <= 0 {
		return invalid("amountCents must be positive")
	}
	if e.Currency != "" && !currencyRe.MatchString(e.Currency) {
		return invalid("currency %q is not a three-letter code", e.Currency)
	}
	return checkEventTimes(e.OccurredAt, e.ReceivedAt)
}

// Validate checks a browser event's required fields and its times.
func (e BrowserEvent) Validate() error {
	if err := required(map[string]string{"eventId": e.EventID, "sourceId": e.SourceID, "workspaceId": e.WorkspaceID,
		"appId": e.AppID, "acquisitionId": e.AcquisitionID, "name": e.Name}); err != nil {
		return err
	}
	return checkEventTimes(e.OccurredAt, e.ReceivedAt)
}
