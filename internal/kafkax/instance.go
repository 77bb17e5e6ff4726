package kafkax

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// maxInstanceID leaves room under Kafka's 249-character limit for the ".<consumer>" suffix.
const maxInstanceID = 200

// DefaultInstanceID names a serve process by where it runs: its hostname, the port its HTTP server
// listens on and its command. A restart on the same host and port gets the same ID back, and two
// processes on one host cannot share it because they cannot listen on the same port. A container
// gets its own hostname (a pod's name survives a container restart); an HTTP port of 0 gives a
// new ID on every start, which only costs the old member's session timeout.
func DefaultInstanceID(command string, httpPort int) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	id := sanitize(host)
	if len(id) > maxInstanceID-32 {
		id = id[:maxInstanceID-32]
	}
	return fmt.Sprintf("%s_%d_%s", id, httpPort, sanitize(command))
}

// memberID is the instance ID of one consumer of the process; each consumer is in its own group,
// the suffix only makes the broker's logs and group descriptions readable.
func memberID(base, consumer string) string { return base + "." + sanitize(consumer) }

// Kafka accepts the same characters in group.instance.id as in topic names.
func legal(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if legal(r) {
			return r
		}
		return '-'
	}, s)
}

func validInstanceID(id string) error {
	if len(id) > maxInstanceID {
		return fmt.Errorf("at most %d characters", maxInstanceID)
	}
	if strings.IndexFunc(id, func(r rune) bool { return !legal(r) }) >= 0 {
		return errors.New("only ASCII letters, digits, '.', '_' and '-' (Kafka's rule for group.instance.id)")
	}
	return nil
}
