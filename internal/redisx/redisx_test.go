package redisx_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/revtrack/revtrack/internal/redisx"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name, args, err string
	}{
		{name: "default", args: ""},
		{name: "one address", args: "--redis-addr=redis:6379"},
		{name: "cluster", args: "--redis-cluster --redis-addr=a:7000,b:7001,c:7002"},
		{name: "sentinel", args: "--redis-master-name=mymaster --redis-addr=s1:26379,s2:26379"},
		{name: "no port", args: "--redis-addr=redis", err: `"redis" is not host:port`},
		{name: "one bad of a list", args: "--redis-cluster --redis-addr=a:7000,b", err: `"b" is not host:port`},
		{name: "empty", args: "--redis-addr=", err: "must not be empty"},
		{name: "list without a mode", args: "--redis-addr=a:7000,b:7001", err: "several addresses need --redis-cluster"},
		{name: "both modes", args: "--redis-cluster --redis-master-name=m", err: "exclude each other"},
		{name: "cluster database", args: "--redis-cluster --redis-db=2", err: "only database 0"},
		{name: "brace in the prefix", args: "--redis-cluster --redis-key-prefix={rt}:", err: "must not hold { or }"},
		{name: "brace on one node", args: "--redis-key-prefix={rt}:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := redisx.DefaultConfig()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			c.RegisterFlags(fs)
			if err := fs.Parse(strings.Fields(tc.args)); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Validate: %v, want an error with %q", err, tc.err)
			}
		})
	}
}
